import { Flags } from '@oclif/core';
import { OrgName, KEY_RULE } from '../../../api/schemas.js';
import { KbCommand } from '../../../cli/base-command.js';
import { UsageError } from '../../../cli/errors.js';
import { dataDirFlag } from '../../../cli/local-store.js';
import { databaseFlags, withServeStore } from '../index.js';

export default class TokenCreate extends KbCommand {
  static override summary = 'Create a bearer token for an organization of the local server';

  static override description = `Prints the new token alone as the last line of stdout, so T=$(kb serve token create --org acme)
works. The organization exists once a token names it. Only a hash of the token is stored: it cannot be shown again.
Works while \`kb serve\` runs on the same data dir, or against the database of PostgreSQL replicas (--database).`;

  static override examples = [
    { description: 'Create a token for organization acme', command: '<%= config.bin %> serve token create --org acme' },
    { description: 'Keep it in a variable', command: 'T=$(<%= config.bin %> serve token create --org acme)' },
    { description: 'As JSON', command: '<%= config.bin %> serve token create --org acme --json' },
  ];

  static override enableJsonFlag = true;

  static override flags = {
    org: Flags.string({ summary: 'The organization the token acts for.', required: true }),
    'data-dir': dataDirFlag,
    ...databaseFlags,
  };

  async run(): Promise<{ org: string; token: string }> {
    const { flags } = await this.parse(TokenCreate);
    if (!OrgName.safeParse(flags.org).success) throw new UsageError(`Invalid --org ${JSON.stringify(flags.org)}: ${KEY_RULE}`);
    const { generateToken } = await import('../../../server/tokens.js');
    const minted = generateToken();
    const info = await withServeStore(flags, this.io, (store) => store.createToken(flags.org, minted.id, minted.hash));
    if (!this.jsonEnabled()) {
      this.io.stderr(`Created token ${info.id} for organization ${info.org}. It is shown only this once:\n`);
      this.io.stdout(`${minted.token}\n`);
    }
    return { org: info.org, token: minted.token };
  }
}
