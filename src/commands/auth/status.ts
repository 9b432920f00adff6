import { ApiCommand } from '../../cli/api-command.js';
import { maskToken } from '../../cli/auth.js';
import { CliError } from '../../cli/errors.js';
import { renderObject } from '../../cli/output.js';
import { EXIT } from '../../client/exit-codes.js';

interface Status {
  profile: string | null;
  url: string;
  urlSource: 'env' | 'profile';
  organization: string | null;
  tokenSource: 'env' | 'profile' | 'none';
  token: string | null;
  problem?: string;
}

export default class AuthStatus extends ApiCommand {
  static override summary = 'Show the profile, URL and organization in use, and where the token comes from';

  static override description = 'Checks the token with GET /auth. Exits 4 when there is no token or it is rejected.';

  static override examples = ['<%= config.bin %> auth status', '<%= config.bin %> auth status --profile staging --json'];

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
    };
    let failure: unknown;
    if (deployment.token === undefined) {
      failure = new CliError('Not logged in: no token', EXIT.auth, `Run \`kb auth login${deployment.profile ? ` --profile ${deployment.profile}` : ''}\`.`);
    } else {
      try {
        status.organization = await this.request('Checking the token', client.auth());
      } catch (error) {
        failure = error;
      }
    }
    if (failure !== undefined) status.problem = (failure as Error).message;
    if (!this.jsonEnabled()) {
      const source = (from: string) => (from === 'env' ? ' (from KB_URL)' : '');
      this.io.stdout(
        renderObject({
          profile: status.profile ?? '(none)',
          url: `${status.url}${source(status.urlSource)}`,
          organization: status.organization ?? '-',
          token: status.token === null ? 'none' : `${status.token} (from ${status.tokenSource === 'env' ? 'KB_TOKEN' : 'the profile'})`,
        }),
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
