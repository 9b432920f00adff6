import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';

export default class Watch extends ApiCommand {
  static override summary = 'Print each change of your organization as it happens (kb serve extension)';

  static override description = `Streams GET /v1/watch, an extension of kb serve: one line per change, such as \`created base docs/faq\`, or with --json one JSON object a line (NDJSON) with its cursor. A dropped connection or a restarted server is resumed from the last cursor, so nothing is lost or repeated. Ctrl-C ends it. It streams through the same connections as every request, proxies (HTTPS_PROXY...) included. A deployment without /v1/watch is an error (exit 3); \`kb ns list --watch\` and \`kb wait\` poll such a one instead. To filter, pipe --json to \`jq -c\`.`;

  static override examples = [
    '<%= config.bin %> watch',
    { description: 'One namespace, as NDJSON for a script', command: '<%= config.bin %> watch docs --json' },
    { description: 'Resume after a cursor printed before', command: '<%= config.bin %> watch --json --since 42' },
  ];

  static override args = {
    namespace: Args.string({ description: 'Only this namespace and its bases.', required: false }),
  };

  static override flags = {
    json: Flags.boolean({ summary: 'One JSON object a line: {"cursor","type","kind","object"}.' }),
    since: Flags.string({ summary: 'Resume after this cursor (a "cursor" printed with --json).' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Watch);
    const { client } = await this.connect(flags);
    const { changeJson, changeLine } = await import('../cli/watch-stream.js');
    const { watchChanges } = await import('../client/watch.js');
    await watchChanges(client, { namespace: args.namespace, since: flags.since }, {
      onChange: (change) => this.io.stdout(flags.json ? changeJson(change) : changeLine(change)),
      onRetry: (reason) => {
        if (this.io.isStderrTTY) this.io.stderr(`${reason}\n`);
      },
    }, new AbortController().signal);
  }
}
