import { KbCommand } from '../../../cli/base-command.js';
import { renderTable } from '../../../cli/output.js';
import { storageFlags, withStorage } from '../../../cli/storage.js';
import type { TokenInfo } from '../../../store/store.js';

export default class TokenList extends KbCommand {
  static override summary = 'List the local server\'s tokens (ids and organizations, never the tokens)';

  static override aliases = ['serve:token:ls'];

  static override examples = [
    '<%= config.bin %> serve token list',
    '<%= config.bin %> serve token list --json',
  ];

  static override enableJsonFlag = true;

  static override flags = storageFlags;

  async run(): Promise<TokenInfo[]> {
    const { flags } = await this.parse(TokenList);
    const tokens = await withStorage(flags, this.context, 'kb serve token', (store) => store.listTokens());
    if (!this.jsonEnabled()) {
      if (tokens.length === 0) this.io.stderr('No tokens yet: create one with `kb serve token create --org ORG`.\n');
      else {
        this.io.stdout(
          renderTable(this.io, tokens, [
            { header: 'ID', get: (t) => t.id },
            { header: 'ORGANIZATION', get: (t) => t.org },
            { header: 'CREATED', get: (t) => t.createdAt },
            { header: 'STATUS', get: (t) => (t.revokedAt ? `revoked ${t.revokedAt}` : 'active') },
          ]),
        );
      }
    }
    return tokens;
  }
}
