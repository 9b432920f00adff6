import { Args } from '@oclif/core';
import { KbCommand } from '../../../cli/base-command.js';
import { CliError } from '../../../cli/errors.js';
import { dataDirFlag } from '../../../cli/local-store.js';
import { databaseFlags, withServeStore } from '../index.js';
import type { TokenInfo } from '../../../store/store.js';

export default class TokenRevoke extends KbCommand {
  static override summary = 'Revoke a token of the local server: requests with it get 401 at once';

  static override examples = [
    { description: 'Find the id, then revoke', command: '<%= config.bin %> serve token list\n<%= config.bin %> serve token revoke tok_1a2b3c4d5e6f' },
  ];

  static override enableJsonFlag = true;

  static override args = { id: Args.string({ description: 'The token id, as `kb serve token list` shows it.', required: true }) };

  static override flags = { 'data-dir': dataDirFlag, ...databaseFlags };

  async run(): Promise<TokenInfo> {
    const { args, flags } = await this.parse(TokenRevoke);
    const info = await withServeStore(flags, this.io, (store) => store.revokeToken(args.id));
    if (!info) throw new CliError(`No token with id ${args.id}`, 3, 'List the ids with `kb serve token list`.');
    if (!this.jsonEnabled()) this.io.stderr(`Revoked token ${info.id} of organization ${info.org}.\n`);
    return info;
  }
}
