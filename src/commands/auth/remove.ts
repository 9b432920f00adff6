import { Args } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';

export default class AuthRemove extends KbCommand {
  static override summary = 'Remove a saved profile: its name, URL and token (as kubectl config delete-context)';

  static override description = `The default profile can be removed too: afterwards there is no default (no other profile silently takes its place)
until \`kb auth switch NAME\` picks one. \`kb auth logout\` removes only the token.`;

  static override aliases = ['auth:rm'];

  static override examples = ['<%= config.bin %> auth remove local-8081', '<%= config.bin %> auth rm staging'];

  static override args = { profile: Args.string({ description: 'The profile to remove.', required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(AuthRemove);
    const store = this.context.profiles();
    const { profile, wasDefault } = await store.remove(args.profile);
    const token = profile.token === undefined ? '' : ' and its token';
    this.io.stderr(`✓ Removed profile "${args.profile}" (${profile.url})${token} from ${store.path}.\n`);
    if (wasDefault) this.io.stderr('It was the default: there is none now. Pick one with `kb auth switch NAME`.\n');
  }
}
