import { ApiCommand } from '../cli/api-command.js';
import { ConfigError } from '../config/errors.js';

export default class Health extends ApiCommand {
  static override summary = 'Check that the deployment is alive (needs no token)';

  static override examples = [
    '<%= config.bin %> health',
    { description: 'Check another deployment', command: 'KB_URL=https://kb.example.com <%= config.bin %> health' },
  ];

  static override enableJsonFlag = true;

  async run(): Promise<string> {
    const { flags } = await this.parse(Health);
    const { client, deployment } = await this.connect(flags, { requireToken: false }).catch((error: unknown) => {
      // Nothing names a deployment: say how to name one, which is all health needs (exit 4 as for any command).
      if (!(error instanceof ConfigError) || error.code !== 'no_deployment') throw error;
      throw new ConfigError(
        'no_deployment',
        'no kb deployment to check: none is configured',
        'Name one by its URL (no token needed): `KB_URL=https://kb.example.com kb health`.',
      );
    });
    const data = await this.request('Checking health', client.health());
    if (!this.jsonEnabled()) this.io.stdout(`${deployment.url} is ${data}\n`);
    return data;
  }
}
