import { resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { DEFAULT_URL } from '../../cli/auth.js';
import { UsageError } from '../../cli/errors.js';
import { ask, askSecret } from '../../cli/prompt.js';
import { ClientOptionsError } from '../../client/errors.js';
import { normalizeBaseUrl } from '../../client/base-url.js';
import type { ProfilesConfig } from '../../config/profiles.js';

/** How long a local server has to answer GET /v1/health to be offered at the prompt. */
const HEALTH_WAIT = '500ms';

/** Whether a URL names this machine (a loopback address, or localhost), over http or https. */
function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

interface LoginResult {
  profile: string;
  url: string;
  organization: string;
  default: boolean;
}

export default class AuthLogin extends ApiCommand {
  static override summary = 'Log in to a deployment: check a token with GET /auth, then save it as a profile';

  static override description = `Without --profile it writes the default profile (named "default" when there is none yet). The first profile saved becomes the default; logging in to another profile does not change it (see \`kb auth switch\`). On a terminal it asks for the URL (offering a kb serve running on this machine, from the saved profiles) and the token (masked). In scripts, pipe the token on stdin with --with-token: never put a token in argv, where other users can read it. Nothing is saved unless the token is accepted. --cacert FILE is saved in the profile: its deployment's certificate is trusted from then on.`;

  static override examples = [
    '<%= config.bin %> auth login',
    { description: 'In a script, token from a file or a secret store', command: '<%= config.bin %> auth login --url https://kb.example.com --with-token < token.txt' },
    {
      description: 'A deployment whose certificate a private CA signed: the CA file is kept in the profile',
      command: '<%= config.bin %> auth login --url https://kb.internal:8443 --cacert ./ca.pem --with-token < token.txt',
    },
    { description: 'A second deployment under its own profile', command: 'echo "$STAGING_TOKEN" | <%= config.bin %> auth login --profile staging --url https://staging.kb.example.com --with-token' },
  ];

  static override enableJsonFlag = true;

  static override flags = {
    url: Flags.string({ summary: `The deployment's base URL, without /v1 (default: $KB_URL, else the profile's, else ${DEFAULT_URL}).` }),
    // Replaces the global --profile: here it names the profile to write.
    profile: Flags.string({ summary: 'The profile to save (default: the default profile, else "default").' }),
    'with-token': Flags.boolean({ summary: 'Read the token from stdin.' }),
  };

  async run(): Promise<LoginResult> {
    const { flags } = await this.parse(AuthLogin);
    const store = this.context.profiles();
    const config = await store.read();
    const name = flags.profile ?? config.defaultProfile ?? 'default';
    const saved = config.profiles.get(name);
    const known = saved?.url;

    // A URL that cannot work is refused before the token is asked for or read.
    let url = flags.url === undefined ? undefined : this.baseUrl(flags.url, '--url');
    if (url === undefined && !flags['with-token'] && known === undefined && this.io.canPrompt) {
      const offered = (await this.runningLocalServer(config)) ?? DEFAULT_URL;
      url = this.baseUrl(await ask(this.io, 'URL of the kb deployment:', '', offered), 'URL');
    }
    url ??= this.baseUrl(this.context.env.url ?? known ?? DEFAULT_URL, 'URL');
    // --cacert is saved (as an absolute path); without it, the profile keeps the CA it had for the same URL.
    const ca = flags.cacert !== undefined ? resolve(flags.cacert) : saved?.url === url ? saved.ca : undefined;

    let token: string;
    if (flags['with-token']) {
      token = (await this.io.readStdin()).trim();
      if (token === '') throw new UsageError('--with-token read nothing from stdin', 'Pipe the token in: kb auth login --with-token < token.txt');
    } else {
      token = await askSecret(this.io, `Token for ${url}: `, 'Pass --with-token and pipe the token on stdin.');
      if (token === '') throw new UsageError('No token given.');
    }

    const client = await this.newClient(url, token, flags, false, ca === undefined ? undefined : { profile: name, path: ca });
    const organization = await this.request('Checking the token', client.auth());
    const result = await store.saveProfile(name, { url, token, ...(ca === undefined ? {} : { ca }) });
    if (!this.jsonEnabled()) {
      this.io.stderr(
        `✓ Logged in to ${url} as organization ${organization}; saved as profile "${name}"${result.isDefault ? ' (the default)' : ''}.\n`,
      );
    }
    return { profile: name, url, organization, default: result.isDefault };
  }

  /**
   * The URL of a kb serve running on this machine, to offer at the prompt: of the saved profiles at a loopback URL,
   * the first (the default profile first, then by name) whose server answers GET /v1/health within a moment.
   */
  private async runningLocalServer(config: ProfilesConfig): Promise<string | undefined> {
    const local = [...config.profiles]
      .filter(([, profile]) => isLoopbackUrl(profile.url))
      .sort(([a], [b]) => (a === config.defaultProfile ? -1 : b === config.defaultProfile ? 1 : a < b ? -1 : a > b ? 1 : 0));
    const answers = await Promise.all(
      local.map(async ([profile, { url, ca }]) => {
        try {
          const client = await this.context.client({ url, token: undefined, timeout: HEALTH_WAIT, retries: 0, ...(ca === undefined ? {} : { profileCa: { profile, path: ca } }) });
          await client.health();
          return url;
        } catch {
          return undefined;
        }
      }),
    );
    return answers.find((url) => url !== undefined);
  }

  /** The URL to save: checked as the client checks it, without a trailing /v1 (with a note when one was dropped). */
  private baseUrl(given: string, source: string): string {
    try {
      const { url, withoutApiPrefix } = normalizeBaseUrl(given);
      if (withoutApiPrefix) this.noteApiPrefix(given, url);
      return url;
    } catch (error) {
      if (!(error instanceof ClientOptionsError)) throw error;
      throw new UsageError(`Invalid ${source}: ${error.message}`, 'Nothing was saved. Give the base URL of the deployment, e.g. http://127.0.0.1:8080.');
    }
  }
}
