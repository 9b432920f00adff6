import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { baseBlock } from '../../cli/render.js';

export default class BaseUpdate extends ApiCommand {
  static override summary = 'Change or clear the description of a base';

  static override examples = [
    '<%= config.bin %> base update docs faq --description "Answers to common questions"',
    '<%= config.bin %> base update docs faq --clear-description',
  ];

  static override enableJsonFlag = true;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
    base: Args.string({ description: 'The base key.', required: true }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'New description, 1 to 1024 characters.', exactlyOne: ['description', 'clear-description'] }),
    'clear-description': Flags.boolean({ summary: 'Remove the description.', exactlyOne: ['description', 'clear-description'] }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseUpdate);
    const { client } = await this.connect(flags);
    const description = flags['clear-description'] ? null : flags.description;
    const base = await this.request(
      'Updating base',
      client.baseUpdate({ namespace: args.namespace, base: args.base, data: { description } }),
    );
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    this.confirmChange(`Updated base ${base.key} in namespace ${base.namespace}`);
    return base;
  }
}
