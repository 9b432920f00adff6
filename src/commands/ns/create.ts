import { Args, Flags } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand } from '../../cli/api-command.js';
import { ask } from '../../cli/prompt.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { namespaceBlock } from '../../cli/render.js';

export default class NsCreate extends ApiCommand {
  static override summary = 'Create a namespace';

  static override description = `Without KEY, kb asks for one on a terminal, showing a generated one (ns_<uuid>) that Enter accepts; without a terminal (a script, CI) the server generates one. Exits 5 when the key is taken.`;

  static override examples = [
    '<%= config.bin %> ns create docs --description "Product documentation"',
    { description: 'Let the server pick the key, and keep it', command: 'NS=$(<%= config.bin %> ns create --query key)' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespace;

  static override args = {
    key: Args.string({ description: 'The namespace key: 3 to 63 of A-Z a-z 0-9 - _ (asked for on a terminal, else generated, when omitted).' }),
  };

  static override flags = {
    description: Flags.string({ char: 'd', summary: 'Description, 1 to 1024 characters.' }),
  };

  async run(): Promise<Namespace> {
    const { args, flags } = await this.parse(NsCreate);
    const { client } = await this.connect(flags);
    // Malformed input fails before anyone is asked.
    await client.check('ns_create', { key: args.key, description: flags.description });
    let key = args.key;
    // A person at a terminal names the namespace, or takes the generated key on purpose: none is made by accident.
    if (key === undefined && this.io.canPrompt) {
      key = await ask(this.io, 'Namespace key (Enter takes the generated one):', '', `ns_${globalThis.crypto.randomUUID()}`);
    }
    const ns = await this.request('Creating namespace', client.nsCreate({ key, description: flags.description }));
    if (!this.jsonEnabled()) this.io.stdout(namespaceBlock(ns));
    this.confirmChange(`Created namespace ${ns.key}`);
    return ns;
  }
}
