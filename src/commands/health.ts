import { ApiCommand } from '../cli/api-command.js';

export default class Health extends ApiCommand {
  static override summary = 'Check that the deployment is alive (needs no token)';

  static override examples = [
    '<%= config.bin %> health',
    { description: 'Check another deployment', command: 'KB_URL=https://kb.example.com <%= config.bin %> health' },
  ];

  static override enableJsonFlag = true;

  async run(): Promise<string> {
    const { flags } = await this.parse(Health);
    const { client, deployment } = await this.connect(flags, { requireToken: false });
    const data = await this.request('Checking health', client.health());
    if (!this.jsonEnabled()) this.io.stdout(`${deployment.url} is ${data}\n`);
    return data;
  }
}
