import { Args } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand, namespaceAndBase, suggestion } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { baseBlock } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class BaseView extends ApiCommand {
  static override summary = 'Show one base: its namespace, key and description';

  static override description = 'Reads it through GET /v1/base_list, an extension that `kb serve` offers beyond the API document. Exits 3 when the namespace or the base does not exist, with the message the server gives for one and the closest keys there are.';

  static override examples = [
    '<%= config.bin %> base view docs faq',
    { description: 'The same, as kb apply names it', command: '<%= config.bin %> base view docs/faq' },
    { description: 'As JSON', command: '<%= config.bin %> base view docs faq --json' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.base;

  static override args = {
    namespace: Args.string({ description: 'The namespace key, or NAMESPACE/BASE.', required: true }),
    base: Args.string({ description: 'The base key (unless given as NAMESPACE/BASE).' }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseView);
    const { namespace, base: key = '' } = namespaceAndBase(args.namespace, args.base, 'base view', true);
    const { client } = await this.connect(flags);
    // Malformed keys fail before anything is sent.
    await client.check('base_delete', { namespace, base: key });
    const bases = await this.request('Reading base', this.suggestOnNotFound(client, client.baseList(namespace), namespace));
    const base = bases.find((candidate) => candidate.key === key);
    // Worded as the server words a missing base (src/store/failures.ts).
    if (base === undefined) {
      throw new CliError(
        `Base ${key} not found in namespace ${namespace}${suggestion(key, bases.map((candidate) => candidate.key))}`,
        EXIT.notFound,
        `\`kb base list ${namespace}\` shows its bases.`,
      );
    }
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    return base;
  }
}
