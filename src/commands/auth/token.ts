import { KbCommand } from '../../cli/base-command.js';
import { profileFlag } from '../../cli/auth.js';
import { CliError } from '../../cli/errors.js';
import { EXIT } from '../../client/exit-codes.js';

export default class AuthToken extends KbCommand {
  static override summary = 'Print the token in use to stdout (the only command that ever prints it)';

  static override examples = [
    {
      description: 'Hand the token to another tool on stdin, never in argv (curl reads the header from stdin with -H @-)',
      command: 'printf "Authorization: Bearer %s" "$(<%= config.bin %> auth token)" | curl -H @- http://127.0.0.1:8080/v1/auth',
    },
  ];

  static override flags = { profile: profileFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(AuthToken);
    const deployment = await this.context.deployment(flags.profile);
    if (deployment.token === undefined) {
      throw new CliError('No token configured', EXIT.auth, `Run \`kb auth login${deployment.profile ? ` --profile ${deployment.profile}` : ''}\`.`);
    }
    this.io.stdout(`${deployment.token}\n`);
  }
}
