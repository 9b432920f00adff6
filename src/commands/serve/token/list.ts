import { KbCommand } from '../../../cli/base-command.js';
import { renderTable } from '../../../cli/output.js';
import { storageFlags, withStorage } from '../../../cli/storage.js';
import type { TokenInfo } from '../../../store/store.js';

/** A token as listed: what the store keeps, and its status now. */
export type ListedToken = TokenInfo & { status: 'active' | 'expired' | 'revoked' };

function withStatus(token: TokenInfo, now: number): ListedToken {
  const status = token.revokedAt !== null ? 'revoked' : token.expiresAt !== null && Date.parse(token.expiresAt) <= now ? 'expired' : 'active';
  return { ...token, status };
}

/** A time in the table: to the minute, in UTC (the JSON keeps it whole). */
function minute(time: string | null, none: string): string {
  return time === null ? none : `${time.slice(0, 10)} ${time.slice(11, 16)}`;
}

export default class TokenList extends KbCommand {
  static override summary = 'List the local server\'s tokens (never the tokens themselves)';

  static override description = `Shows each token's id, name, organization, scope (full or read-only), when it was created, when it
expires, when it was last used (to the minute, in UTC: kb serve writes it at most once a minute) and its status:
active, expired or revoked. --json gives the same, with whole times.`;

  static override aliases = ['serve:token:ls'];

  static override examples = [
    '<%= config.bin %> serve token list',
    '<%= config.bin %> serve token list --json',
  ];

  static override enableJsonFlag = true;

  static override flags = storageFlags;

  async run(): Promise<ListedToken[]> {
    const { flags } = await this.parse(TokenList);
    const now = Date.now();
    const tokens = (await withStorage(flags, this.context, 'kb serve token', (store) => store.listTokens())).map((token) => withStatus(token, now));
    if (!this.jsonEnabled()) {
      if (tokens.length === 0) this.io.stderr('No tokens yet: create one with `kb serve token create --org ORG`.\n');
      else {
        this.io.stdout(
          renderTable(this.io, tokens, [
            { header: 'ID', get: (t) => t.id },
            { header: 'NAME', get: (t) => t.name ?? '-' },
            { header: 'ORGANIZATION', get: (t) => t.org },
            { header: 'SCOPE', get: (t) => t.scope },
            { header: 'CREATED', get: (t) => minute(t.createdAt, '-') },
            { header: 'EXPIRES', get: (t) => minute(t.expiresAt, 'never') },
            { header: 'LAST USED', get: (t) => minute(t.lastUsedAt, 'never') },
            { header: 'STATUS', get: (t) => t.status },
          ]),
        );
      }
    }
    return tokens;
  }
}
