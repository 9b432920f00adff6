import { Args, Flags } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { namespaceBlock } from '../../cli/render.js';

export default class NsUpdate extends ApiCommand {
  static override summary = 'Change or clear the description of a namespace';

  static override examples = [
    '<%= config.bin %> ns update docs --description "All product docs"',
    '<%= config.bin %> ns update docs --clear-description',
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespace;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'New description, 1 to 1024 characters.', exactlyOne: ['description', 'clear-description'] }),
    'clear-description': Flags.boolean({ summary: 'Remove the description.', exactlyOne: ['description', 'clear-description'] }),
  };

  async run(): Promise<Namespace> {
    const { args, flags } = await this.parse(NsUpdate);
    const { client } = await this.connect(flags);
    const description = flags['clear-description'] ? null : flags.description;
    const ns = await this.request('Updating namespace', this.suggestOnNotFound(client, client.nsUpdate({ namespace: args.namespace, data: { description } }), args.namespace));
    if (!this.jsonEnabled()) this.io.stdout(namespaceBlock(ns));
    this.confirmChange(`Updated namespace ${ns.key}`);
    return ns;
  }
}
