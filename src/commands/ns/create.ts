import { Args, Flags } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { namespaceBlock } from '../../cli/render.js';

export default class NsCreate extends ApiCommand {
  static override summary = 'Create a namespace';

  static override description = `Without KEY the server generates one (ns_<uuid>). Creating a namespace is optional: \`kb base create\` creates a missing namespace itself. Exits 5 when the key is taken.`;

  static override examples = [
    '<%= config.bin %> ns create docs --description "Product documentation"',
    { description: 'Let the server pick the key, and keep it', command: 'NS=$(<%= config.bin %> ns create --query key)' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    key: Args.string({ description: 'The namespace key: 3 to 63 of A-Z a-z 0-9 - _ (generated when omitted).' }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'Description, 1 to 1024 characters.' }),
  };

  async run(): Promise<Namespace> {
    const { args, flags } = await this.parse(NsCreate);
    const { client } = await this.connect(flags);
    const ns = await this.request('Creating namespace', client.nsCreate({ key: args.key, description: flags.description }));
    if (!this.jsonEnabled()) this.io.stdout(namespaceBlock(ns));
    this.confirmChange(`Created namespace ${ns.key}`);
    return ns;
  }
}
