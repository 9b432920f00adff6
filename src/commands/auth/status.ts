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
  /** What GET /auth told of the profile's token (each token is checked, as `gh auth status` checks every host). */
  organization: string | null;
  scope: string | null;
  expiresAt: string | null;
  /** Why its token could not be checked: rejected, unreachable; null when it was, or there is no token. */
  problem: string | null;
}

/** A profile's token, checked: what the server told of it, or why it could not. */
type Checked = Pick<ProfileEntry, 'organization' | 'scope' | 'expiresAt' | 'problem'>;
const UNCHECKED: Checked = { organization: null, scope: null, expiresAt: null, problem: null };
/** Another profile's server is asked once, this long at most, so that a stopped one costs status little. */
const OTHER_PROFILE_TIMEOUT = '3s';

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

  static override description = 'Checks the token in use with GET /auth (and shows its scope and expiry where the server tells them, warning when it expires within 7 days), then lists the saved profiles, the one in use marked with *, each with its URL, whether it holds a token (never the token itself) and, its token checked the same way (one request each, 3 s at most), its organization, scope and expiry. Exits 4 when the profile in use has no token or it is rejected.';

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
    const inUse: Checked = { organization: status.organization, scope: status.scope, expiresAt: status.expiresAt, problem: status.problem ?? null };
    status.profiles = await Promise.all(
      [...config.profiles]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(async ([name, profile]) => ({
          name,
          url: profile.url,
          active: name === status.profile,
          default: name === config.defaultProfile,
          token: profile.token !== undefined,
          ...(name === status.profile && status.tokenSource === 'profile'
            ? inUse
            : await this.check(name, profile.url, profile.token, profile.ca, flags.verbose)),
        })),
    );
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
    this.warnOfExpiry('the token', status.expiresAt, '');
    for (const entry of status.profiles) {
      if (!(entry.active && status.tokenSource === 'profile')) this.warnOfExpiry(`the token of profile "${entry.name}"`, entry.expiresAt, ` --profile ${entry.name}`);
    }
    if (failure !== undefined) {
      // The status is still the data a script asked for; the exit code says what is wrong.
      if (this.jsonEnabled()) this.logJson(status);
      throw failure;
    }
    return status;
  }

  /** Another profile's token, checked once with GET /auth: no retry, a short timeout. */
  private async check(name: string, url: string, token: string | undefined, ca: string | undefined, verbose: boolean | undefined): Promise<Checked> {
    if (token === undefined) return UNCHECKED;
    try {
      const client = await this.context.client({
        url, token, verbose, retries: 0, timeout: OTHER_PROFILE_TIMEOUT,
        profileCa: ca === undefined ? undefined : { profile: name, path: ca },
      });
      const details = await client.authDetails();
      return { organization: details.organization, scope: details.scope ?? null, expiresAt: details.expiresAt ?? null, problem: null };
    } catch (error) {
      return { ...UNCHECKED, problem: (error as Error).message.split('\n')[0] ?? 'cannot check' };
    }
  }

  /** Warns of a token that expires within 7 days (docs/contract.md, Tokens). */
  private warnOfExpiry(what: string, expiresAt: string | null, loginFlags: string): void {
    const left = expiresAt === null ? undefined : Date.parse(expiresAt) - Date.now();
    if (left === undefined || left >= EXPIRY_WARNING_MS) return;
    this.io.stderr(
      `Warning: ${what} expires at ${expiresAt} (in ${Math.max(0, Math.floor(left / 3_600_000))} hours). ` +
        `Get a new one before then: \`kb serve token create --org ORG\` on the server, then \`kb auth login${loginFlags}\`.\n`,
    );
  }
}

function profileTable(io: Parameters<typeof renderTable>[0], profiles: readonly ProfileEntry[]): string {
  return renderTable(io, profiles, [
    { header: ' ', get: (entry) => (entry.active ? '*' : ' ') },
    { header: 'NAME', get: (entry) => `${entry.name}${entry.default ? ' (default)' : ''}` },
    { header: 'URL', get: (entry) => entry.url },
    { header: 'TOKEN', get: (entry) => (entry.token ? 'yes' : 'none') },
    { header: 'ORGANIZATION', get: (entry) => entry.organization ?? (entry.problem === null ? '' : `(${entry.problem})`) },
    { header: 'SCOPE', get: (entry) => entry.scope ?? '' },
    { header: 'EXPIRES', get: (entry) => (entry.organization === null ? '' : (entry.expiresAt ?? 'never')) },
  ]);
}
