import { Args } from '@oclif/core';
import { KbCommand } from '../../../cli/base-command.js';
import { CliError, UsageError } from '../../../cli/errors.js';
import { storageFlags, withStorage } from '../../../cli/storage.js';
import type { TokenInfo } from '../../../store/store.js';
import { EXIT } from '../../../client/exit-codes.js';
import { TOKEN_PREFIX } from '../../../api/schemas.js';
import { TOKEN_ID, TOKEN_NAME } from '../../../cli/token-names.js';


export default class TokenRevoke extends KbCommand {
  static override summary = 'Revoke a token of the local server: requests with it get 401 at once';

  static override description = `Takes the token's id or its name, as \`kb serve token list\` shows them, or "-" to read the token
itself from stdin (never from argv, where other users could see it). Nothing that looks like a token is ever printed
back. Every server over the same storage refuses the token within a second.`;

  static override examples = [
    { description: 'Find the id', command: '<%= config.bin %> serve token list' },
    { description: 'Revoke it by its id', command: '<%= config.bin %> serve token revoke tok_1a2b3c4d5e6f' },
    { description: 'Revoke it by its name', command: '<%= config.bin %> serve token revoke dashboard' },
    { description: 'Revoke the token a variable holds, by the token itself', command: 'printf %s "$T" | <%= config.bin %> serve token revoke -' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    id: Args.string({ description: 'The token id or name, as `kb serve token list` shows them; "-" reads the token from stdin.', required: true }),
  };

  static override flags = storageFlags;

  async run(): Promise<TokenInfo> {
    const { args, flags } = await this.parse(TokenRevoke);
    const fromStdin = args.id === '-';
    const byId = TOKEN_ID.test(args.id);
    if (!fromStdin && !byId && (args.id.startsWith(TOKEN_PREFIX) || !TOKEN_NAME.test(args.id))) {
      throw new UsageError(
        'That is neither a token id (tok_ and 12 hex digits) nor a token name: nothing was revoked.',
        'Find the id or name with `kb serve token list`, or pass "-" and the token itself on stdin.',
      );
    }
    const token = fromStdin ? (await this.io.readStdin()).trim() : undefined;
    if (fromStdin && !token) throw new UsageError('No token on stdin: nothing was revoked.');
    const { hashToken } = await import('../../../server/tokens.js');
    const info = await withStorage(flags, this.context, 'kb serve token', async (store) => {
      if (byId) return store.revokeToken(args.id);
      if (token === undefined) {
        const named = (await store.listTokens()).find((info) => info.name === args.id && info.revokedAt === null);
        return named ? store.revokeToken(named.id) : null;
      }
      const principal = await store.authenticate(hashToken(token));
      return principal ? store.revokeToken(principal.tokenId) : null;
    });
    if (!info) {
      throw fromStdin
        ? new CliError('The token on stdin is not an active token of this server: nothing was revoked.', EXIT.notFound, 'List the tokens with `kb serve token list`.')
        : byId
          ? new CliError(`No token with id ${args.id}`, EXIT.notFound, 'List the ids with `kb serve token list`.')
          : new CliError(`No token named ${args.id} that is not revoked already`, EXIT.notFound, 'List the tokens with `kb serve token list`.');
    }
    if (!this.jsonEnabled()) this.io.stderr(`Revoked token ${info.id} of organization ${info.org}.\n`);
    return info;
  }
}
