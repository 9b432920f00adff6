import { Args } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';

export default class AuthRename extends KbCommand {
  static override summary = 'Rename a saved profile (as kubectl config rename-context)';

  static override description = 'The default profile stays the default under its new name. A name another profile has is refused.';

  static override examples = ['<%= config.bin %> auth rename local-8081 dev'];

  static override args = {
    old: Args.string({ description: 'The profile to rename.', required: true }),
    new: Args.string({ description: 'Its new name.', required: true }),
  };

  async run(): Promise<void> {
    const { args } = await this.parse(AuthRename);
    const { isDefault } = await this.context.profiles().rename(args.old, args.new);
    this.io.stderr(`✓ Renamed profile "${args.old}" to "${args.new}"${isDefault ? ' (the default)' : ''}.\n`);
  }
}
