import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { waitFlags, waitFor } from '../../cli/wait.js';

export default class WaitNs extends ApiCommand {
  static override summary = 'Wait until a namespace exists (or, with --for deleted, until it does not)';

  static override description = `Exits 0 as soon as the condition holds, at once if it holds already; exits 7 when it did not hold within --timeout. Watches GET /v1/watch (an extension of kb serve); against a deployment without it, lists every 2 s instead, and says so on a terminal.`;

  static override examples = [
    '<%= config.bin %> wait ns docs',
    { description: 'Until it is deleted, for two minutes at most', command: '<%= config.bin %> wait ns docs --for deleted --timeout 2m' },
  ];

  static override args = {
    namespace: Args.string({ description: 'The namespace key.', required: true }),
  };

  static override flags = waitFlags;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WaitNs);
    // --timeout is the wait's own here: requests keep $KB_TIMEOUT.
    const { client } = await this.connect({ ...flags, timeout: undefined });
    // A malformed key fails before anything is sent.
    await client.check('ns_update', { namespace: args.namespace, data: { description: null } });
    await waitFor(this.io, client, { label: `namespace ${args.namespace}`, namespace: args.namespace }, flags.for, flags.timeout);
  }
}
