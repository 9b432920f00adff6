import { Args } from '@oclif/core';
import { KbCommand } from '../../../cli/base-command.js';
import { CliError, UsageError } from '../../../cli/errors.js';
import { storageFlags, withStorage } from '../../../cli/storage.js';
import type { TokenInfo } from '../../../store/store.js';
import { EXIT } from '../../../client/exit-codes.js';

/** Token ids as `kb serve token list` shows them; anything else is never echoed back (it may be a token). */
const TOKEN_ID = /^tok_[0-9a-f]{12}$/;

export default class TokenRevoke extends KbCommand {
  static override summary = 'Revoke a token of the local server: requests with it get 401 at once';

  static override description = `Takes the token's id, as \`kb serve token list\` shows it, or "-" to read the token itself from
stdin (never from argv, where other users could see it). Nothing that looks like a token is ever printed back.`;

  static override examples = [
    { description: 'Find the id', command: '<%= config.bin %> serve token list' },
    { description: 'Revoke it by its id', command: '<%= config.bin %> serve token revoke tok_1a2b3c4d5e6f' },
    { description: 'Revoke the token a variable holds, by the token itself', command: 'printf %s "$T" | <%= config.bin %> serve token revoke -' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    id: Args.string({ description: 'The token id, as `kb serve token list` shows it; "-" reads the token from stdin.', required: true }),
  };

  static override flags = storageFlags;

  async run(): Promise<TokenInfo> {
    const { args, flags } = await this.parse(TokenRevoke);
    const fromStdin = args.id === '-';
    if (!fromStdin && !TOKEN_ID.test(args.id)) {
      throw new UsageError(
        'That is not a token id (tok_ and 12 hex digits): nothing was revoked.',
        'Find the id with `kb serve token list`, or pass "-" and the token itself on stdin.',
      );
    }
    const token = fromStdin ? (await this.io.readStdin()).trim() : undefined;
    if (fromStdin && !token) throw new UsageError('No token on stdin: nothing was revoked.');
    const { hashToken } = await import('../../../server/tokens.js');
    const info = await withStorage(flags, this.context, 'kb serve token', async (store) => {
      if (token === undefined) return store.revokeToken(args.id);
      const principal = await store.authenticate(hashToken(token));
      return principal ? store.revokeToken(principal.tokenId) : null;
    });
    if (!info) {
      throw fromStdin
        ? new CliError('The token on stdin is not an active token of this server: nothing was revoked.', EXIT.notFound, 'List the tokens with `kb serve token list`.')
        : new CliError(`No token with id ${args.id}`, EXIT.notFound, 'List the ids with `kb serve token list`.');
    }
    if (!this.jsonEnabled()) this.io.stderr(`Revoked token ${info.id} of organization ${info.org}.\n`);
    return info;
  }
}
