import { ApiCommand } from '../../cli/api-command.js';
import { maskToken } from '../../cli/auth.js';
import { CliError } from '../../cli/errors.js';
import { renderObject, renderTable } from '../../cli/output.js';
import { EXIT } from '../../client/exit-codes.js';
import { localServerLoginHint } from '../../config/serve-profile.js';

/** A token that expires sooner than this is warned of (docs/contract.md, Tokens). */
const EXPIRY_WARNING_MS = 7 * 24 * 3_600_000;

/** A saved profile as `auth status` lists it: never its token, only whether it has one. */
interface ProfileEntry {
  name: string;
  url: string;
  /** The profile this command used (--profile, KB_PROFILE, else the default). */
  active: boolean;
  default: boolean;
  token: boolean;
  /** Known for the active profile alone, whose token was just checked. */
  organization: string | null;
}

interface Status {
  profile: string | null;
  url: string;
  urlSource: 'env' | 'profile';
  organization: string | null;
  tokenSource: 'env' | 'profile' | 'none';
  token: string | null;
  /** What kb serve tells of the token in use (headers of GET /auth): its scope and expiry; null where not told. */
  scope: string | null;
  expiresAt: string | null;
  problem?: string;
  /** Every saved profile, the active one marked, as `gh auth status` lists accounts. */
  profiles: ProfileEntry[];
}

export default class AuthStatus extends ApiCommand {
  static override summary = 'Show the profile, URL and organization in use, where the token comes from, and every saved profile';

  static override description = 'Checks the token in use with GET /auth (and shows its scope and expiry where the server tells them, warning when it expires within 7 days), then lists the saved profiles, the one in use marked with *, each with its URL and whether it holds a token (never the token itself). Exits 4 when the profile in use has no token or it is rejected.';

  static override examples = [
    '<%= config.bin %> auth status',
    { description: 'Another profile, as JSON', command: '<%= config.bin %> auth status --profile staging --json' },
    { description: 'The names of the profiles that hold a token', command: "<%= config.bin %> auth status --query 'profiles[?token].name'" },
  ];

  static override enableJsonFlag = true;

  async run(): Promise<Status> {
    const { flags } = await this.parse(AuthStatus);
    const { client, deployment } = await this.connect(flags, { requireToken: false });
    const status: Status = {
      profile: deployment.profile ?? null,
      url: deployment.url,
      urlSource: deployment.urlSource,
      organization: null,
      tokenSource: deployment.tokenSource,
      token: deployment.token === undefined ? null : maskToken(deployment.token),
      scope: null,
      expiresAt: null,
      profiles: [],
    };
    let failure: unknown;
    if (deployment.token === undefined) {
      const local = deployment.profile === undefined ? undefined : localServerLoginHint(deployment.profile, deployment.url);
      const login = `kb auth login${deployment.profile ? ` --profile ${deployment.profile}` : ''}`;
      failure = new CliError('Not logged in: no token', EXIT.auth, local === undefined ? `Run \`${login}\`.` : `Run \`${login}\`, or for the kb serve on this machine \`${local}\`.`);
    } else {
      try {
        const details = await this.request('Checking the token', client.authDetails());
        status.organization = details.organization;
        status.scope = details.scope ?? null;
        status.expiresAt = details.expiresAt ?? null;
      } catch (error) {
        failure = error;
      }
    }
    if (failure !== undefined) status.problem = (failure as Error).message;
    const config = await this.context.profiles().read();
    status.profiles = [...config.profiles]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, profile]) => ({
        name,
        url: profile.url,
        active: name === status.profile,
        default: name === config.defaultProfile,
        token: profile.token !== undefined,
        organization: name === status.profile && status.tokenSource === 'profile' ? status.organization : null,
      }));
    if (!this.jsonEnabled()) {
      const source = (from: string) => (from === 'env' ? ' (from KB_URL)' : '');
      this.io.stdout(
        renderObject({
          profile: status.profile ?? '(none)',
          url: `${status.url}${source(status.urlSource)}`,
          organization: status.organization ?? '-',
          token: status.token === null ? 'none' : `${status.token} (from ${status.tokenSource === 'env' ? 'KB_TOKEN' : 'the profile'})`,
          ...(status.scope === null ? {} : { scope: status.scope }),
          ...(status.organization === null ? {} : { expires: status.expiresAt ?? 'never' }),
        }),
      );
      if (status.profiles.length > 0) this.io.stdout(`\nProfiles (* in use):\n${profileTable(this.io, status.profiles)}`);
    }
    const left = status.expiresAt === null ? undefined : Date.parse(status.expiresAt) - Date.now();
    if (left !== undefined && left < EXPIRY_WARNING_MS) {
      this.io.stderr(
        `Warning: the token expires at ${status.expiresAt} (in ${Math.max(0, Math.floor(left / 3_600_000))} hours). ` +
          'Get a new one before then: `kb serve token create --org ORG` on the server, then `kb auth login`.\n',
      );
    }
    if (failure !== undefined) {
      // The status is still the data a script asked for; the exit code says what is wrong.
      if (this.jsonEnabled()) this.logJson(status);
      throw failure;
    }
    return status;
  }
}

function profileTable(io: Parameters<typeof renderTable>[0], profiles: readonly ProfileEntry[]): string {
  return renderTable(io, profiles, [
    { header: ' ', get: (entry) => (entry.active ? '*' : ' ') },
    { header: 'NAME', get: (entry) => `${entry.name}${entry.default ? ' (default)' : ''}` },
    { header: 'URL', get: (entry) => entry.url },
    { header: 'TOKEN', get: (entry) => (entry.token ? 'yes' : 'none') },
    { header: 'ORGANIZATION', get: (entry) => entry.organization ?? '' },
  ]);
}
