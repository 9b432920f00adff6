import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand, namespaceAndBase, suggestion } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { baseBlock } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class BaseCreate extends ApiCommand {
  static override summary = 'Create a base in a namespace';

  static override description = `Without KEY the server generates one (kb_<uuid>). Exits 5 when the key is taken in that namespace.

A namespace that does not exist is not created by accident (a typo of its key): kb refuses with exit 3, naming the closest keys there are, unless --create-namespace is given (as helm's flag), which creates it with the base. kb apply creates the namespaces its file names.`;

  static override examples = [
    '<%= config.bin %> base create docs faq --description "Frequently asked questions"',
    { description: 'The same, as kb apply names it', command: '<%= config.bin %> base create docs/faq' },
    { description: 'Into a new namespace, created with it', command: '<%= config.bin %> base create handbook intro --create-namespace' },
    { description: 'Let the server pick the key', command: '<%= config.bin %> base create docs --json' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.base;

  static override args = {
    namespace: Args.string({ description: 'The namespace key, or NAMESPACE/KEY.', required: true }),
    key: Args.string({ description: 'The base key: 3 to 63 of A-Z a-z 0-9 - _ (generated when omitted).' }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'Description, 1 to 1024 characters.' }),
    'create-namespace': Flags.boolean({ summary: 'Create the namespace too when it does not exist (otherwise exit 3).' }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseCreate);
    const { namespace, base: key } = namespaceAndBase(args.namespace, args.key, 'base create', false);
    const { client } = await this.connect(flags);
    const input = { namespace, key, description: flags.description };
    // Malformed input fails before anything is sent, the namespaces' read included.
    await client.check('base_create', input);
    if (flags['create-namespace'] !== true) {
      // The API creates a missing namespace with the base: asked first, so that a typo makes none.
      const namespaces = (await this.request('Reading namespaces', client.nsList())).map((ns) => ns.key);
      if (!namespaces.includes(namespace)) {
        throw new CliError(
          `Namespace ${namespace} not found${suggestion(namespace, namespaces)}`,
          EXIT.notFound,
          `Nothing was created. Pass --create-namespace to create it with the base, or run \`kb ns create ${namespace}\` first.`,
        );
      }
    }
    const base = await this.request('Creating base', client.baseCreate(input));
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    this.confirmChange(`Created base ${base.key} in namespace ${base.namespace}`);
    return base;
  }
}
