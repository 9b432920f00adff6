import { Args } from '@oclif/core';
import type { Base } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { baseTable } from '../../cli/render.js';

export default class BaseList extends ApiCommand {
  static override summary = 'List the bases of a namespace, ordered by key';

  static override aliases = ['base:ls'];

  static override description = `Uses GET /v1/base_list, an extension that \`kb serve\` offers beyond the API document. Against a deployment without it, this says so plainly (exit 1); the namespace's other commands still work.`;

  static override examples = ['<%= config.bin %> base list docs', '<%= config.bin %> base list docs --json'];

  static override enableJsonFlag = true;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
  };

  async run(): Promise<Base[]> {
    const { args, flags } = await this.parse(BaseList);
    const { client } = await this.connect(flags);
    const bases = await this.request('Listing bases', client.baseList(args.namespace));
    if (!this.jsonEnabled()) {
      if (bases.length === 0) this.io.stderr(`No bases in ${args.namespace} yet: create one with \`kb base create ${args.namespace} KEY\`.\n`);
      else this.io.stdout(baseTable(this.io, bases));
    }
    return bases;
  }
}
