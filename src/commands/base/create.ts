import { Args, Flags } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { baseBlock } from '../../cli/render.js';

export default class BaseCreate extends ApiCommand {
  static override summary = 'Create a base in a namespace (the namespace is created when missing)';

  static override description = 'Without KEY the server generates one (kb_<uuid>). Exits 5 when the key is taken in that namespace.';

  static override examples = [
    '<%= config.bin %> base create docs faq --description "Frequently asked questions"',
    { description: 'Let the server pick the key', command: '<%= config.bin %> base create docs --json' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    namespace: Args.string({ description: 'The namespace key (created when it does not exist).', required: true }),
    key: Args.string({ description: 'The base key: 3 to 63 of A-Z a-z 0-9 - _ (generated when omitted).' }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'Description, 1 to 1024 characters.' }),
  };

  async run(): Promise<Base> {
    const { args, flags } = await this.parse(BaseCreate);
    const { client } = await this.connect(flags);
    const base = await this.request(
      'Creating base',
      client.baseCreate({ namespace: args.namespace, key: args.key, description: flags.description }),
    );
    if (!this.jsonEnabled()) this.io.stdout(baseBlock(base));
    this.confirmChange(`Created base ${base.key} in namespace ${base.namespace}`);
    return base;
  }
}
