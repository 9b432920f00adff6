import { Args } from '@oclif/core';
import type { Namespace } from '../../api/schemas.js';
import { ApiCommand, suggestion } from '../../cli/api-command.js';
import { CliError } from '../../cli/errors.js';
import { QUERY_SAMPLES } from '../../cli/query.js';
import { namespaceBlock } from '../../cli/render.js';
import { EXIT } from '../../client/exit-codes.js';

export default class NsView extends ApiCommand {
  static override summary = 'Show one namespace: its key and description';

  static override description = 'Exits 3 when your organization has no namespace of that key, with the message the server gives for one and the closest keys there are.';

  static override examples = [
    '<%= config.bin %> ns view docs',
    { description: 'Its description alone, for a script', command: '<%= config.bin %> ns view docs --query description' },
  ];

  static override enableJsonFlag = true;

  static querySample = QUERY_SAMPLES.namespace;

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
  };

  async run(): Promise<Namespace> {
    const { args, flags } = await this.parse(NsView);
    const { client } = await this.connect(flags);
    // A malformed key fails before anything is sent.
    await client.check('ns_update', { namespace: args.namespace, data: { description: null } });
    const namespaces = await this.request('Reading namespace', client.nsList());
    const ns = namespaces.find((candidate) => candidate.key === args.namespace);
    // Worded as the server words a missing namespace (src/store/failures.ts).
    if (ns === undefined) {
      const keys = namespaces.map((candidate) => candidate.key);
      throw new CliError(`Namespace ${args.namespace} not found${suggestion(args.namespace, keys)}`, EXIT.notFound, '`kb ns list` shows the namespaces.');
    }
    if (!this.jsonEnabled()) this.io.stdout(namespaceBlock(ns));
    return ns;
  }
}
