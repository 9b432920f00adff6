import { KbCommand } from '../cli/base-command.js';

interface VersionData {
  name: string;
  version: string;
  platform: string;
  arch: string;
  node: string;
}

export default class Version extends KbCommand {
  static override summary = 'Print the version of kb, as --version does';

  static override description = 'The line of `kb --version` (name/version platform-arch node-version), the way gh and kubectl have it as a command; with --json, its parts.';

  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json'];

  static override enableJsonFlag = true;

  async run(): Promise<VersionData> {
    await this.parse(Version);
    // oclif's user agent is the --version line itself (bin/run.js prints the same without loading oclif).
    const line = this.config.userAgent;
    if (!this.jsonEnabled()) this.io.stdout(`${line}\n`);
    return { name: this.config.name, version: this.config.version, platform: this.config.platform, arch: this.config.arch, node: process.version };
  }
}
