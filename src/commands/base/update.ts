import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand, namespaceAndBase } from '../../cli/api-command.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { baseBlock } from '../../cli/render.js';

export default class BaseUpdate extends ApiCommand {
  static override summary = 'Change or clear the description of a base';

  static override examples = [
    '<%= config.bin %> base update docs faq --description "Answers to common questions"',
    '<%= config.bin %> base update docs/faq --clear-description',
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.base;

  static override args = {
    namespace: Args.string({ description: 'The namespace key, or NAMESPACE/BASE.', required: true }),
    base: Args.string({ description: 'The base key (unless given as NAMESPACE/BASE).' }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'New description, 1 to 1024 characters.', exactlyOne: ['description', 'clear-description'] }),
    'clear-description': Flags.boolean({ summary: 'Remove the description.', exactlyOne: ['description', 'clear-description'] }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseUpdate);
    const { namespace, base: key = '' } = namespaceAndBase(args.namespace, args.base, 'base update', true);
    const { client } = await this.connect(flags);
    const description = flags['clear-description'] ? null : flags.description;
    const base = await this.request(
      'Updating base',
      this.suggestOnNotFound(client, client.baseUpdate({ namespace, base: key, data: { description } }), namespace, key),
    );
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    this.confirmChange(`Updated base ${base.key} in namespace ${base.namespace}`);
    return base;
  }
}
