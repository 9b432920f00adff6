import { KbCommand } from '../../cli/base-command.js';
import { profileFlag } from '../../cli/auth.js';
import { CliError } from '../../cli/errors.js';
import { EXIT } from '../../client/exit-codes.js';
import { localServerLoginHint } from '../../config/serve-profile.js';

export default class AuthLogout extends KbCommand {
  static override summary = "Remove a profile's token from disk (the profile and its URL stay: `kb auth remove` removes them)";

  static override description = `The default profile stays the default even without a token: no other profile silently takes its place.
A profile that \`kb serve\` saved gets a new token from the local server with
\`kb serve token create --org local --save --profile NAME\`.`;

  static override examples = ['<%= config.bin %> auth logout', '<%= config.bin %> auth logout --profile staging'];

  static override flags = { profile: profileFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(AuthLogout);
    const store = this.context.profiles();
    const name = flags.profile ?? this.context.env.profile ?? (await store.read()).defaultProfile;
    if (name === undefined) throw new CliError('No profile to log out of: none is configured', EXIT.auth);
    const url = (await store.read()).profiles.get(name)?.url;
    const { hadToken } = await store.logout(name);
    this.io.stderr(hadToken ? `✓ Logged out of profile "${name}": its token is removed from ${store.path}.\n` : `Profile "${name}" had no token.\n`);
    // The first token of a kb serve is shown once: logging in again takes a new one from the server.
    const again = localServerLoginHint(name, url);
    if (hadToken && again !== undefined) this.io.stderr(`To log in again: \`${again}\`.\n`);
    this.io.stderr(`Kept: the profile "${name}" and its URL${url === undefined ? '' : ` (${url})`}. To remove them too: \`kb auth remove ${name}\`.\n`);
  }
}
