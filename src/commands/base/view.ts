import { Args } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { baseBlock } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class BaseView extends ApiCommand {
  static override summary = 'Show one base: its namespace, key and description';

  static override description = 'Reads it through GET /v1/base_list, an extension that `kb serve` offers beyond the API document. Exits 3 when the namespace or the base does not exist, with the message the server gives for one.';

  static override examples = [
    '<%= config.bin %> base view docs faq',
    { description: 'As JSON', command: '<%= config.bin %> base view docs faq --json' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
    base: Args.string({ description: 'The base key.', required: true }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseView);
    const { client } = await this.connect(flags);
    // Malformed keys fail before anything is sent.
    await client.check('base_delete', { namespace: args.namespace, base: args.base });
    const bases = await this.request('Reading base', client.baseList(args.namespace));
    const base = bases.find((candidate) => candidate.key === args.base);
    // Worded as the server words a missing base (src/store/failures.ts).
    if (base === undefined) {
      throw new CliError(`Base ${args.base} not found in namespace ${args.namespace}`, EXIT.notFound, `\`kb base list ${args.namespace}\` shows its bases.`);
    }
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    return base;
  }
}
