import { Args } from '@oclif/core';
import { ApiCommand, namespaceAndBase } from '../../cli/api-command.js';
import { waitFlags, waitFor } from '../../cli/wait.js';

export default class WaitBase extends ApiCommand {
  static override summary = 'Wait until a base exists (or, with --for deleted, until it does not)';

  static override description = `Exits 0 as soon as the condition holds, at once if it holds already; exits 7 when it did not hold within --timeout. The namespace need not exist yet. Watches GET /v1/watch (an extension of kb serve); against a deployment without it, lists every 2 s instead, and says so on a terminal.`;

  static override examples = [
    '<%= config.bin %> wait base docs faq',
    { description: 'The same, as kb apply names it, for ten seconds at most', command: '<%= config.bin %> wait base docs/faq --timeout 10s' },
    { description: 'Until it is deleted', command: '<%= config.bin %> wait base docs faq --for deleted' },
  ];

  static override args = {
    namespace: Args.string({ description: 'The namespace key, or NAMESPACE/BASE.', required: true }),
    base: Args.string({ description: 'The base key (unless given as NAMESPACE/BASE).' }),
  };

  static override flags = waitFlags;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WaitBase);
    const { namespace, base = '' } = namespaceAndBase(args.namespace, args.base, 'wait base', true);
    // --timeout is the wait's own here: requests keep $KB_TIMEOUT.
    const { client } = await this.connect({ ...flags, timeout: undefined });
    // Malformed keys fail before anything is sent.
    await client.check('base_delete', { namespace, base });
    await waitFor(this.io, client, { label: `base ${namespace}/${base}`, namespace, base }, flags.for, flags.timeout);
  }
}
