import { Args } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';

export default class AuthSwitch extends KbCommand {
  static override summary = 'Make a saved profile the default';

  static override examples = ['<%= config.bin %> auth switch staging', '<%= config.bin %> auth switch local'];

  static override args = { profile: Args.string({ description: 'The profile to make the default.', required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(AuthSwitch);
    const store = this.context.profiles();
    await store.setDefault(args.profile);
    const url = (await store.read()).profiles.get(args.profile)?.url;
    this.io.stderr(`✓ The default profile is now "${args.profile}" (${url}).\n`);
  }
}
