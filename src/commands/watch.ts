import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { UsageError } from '../cli/errors.js';
import type { CursorChange } from '../client/watch.js';

export default class Watch extends ApiCommand {
  static override summary = 'Print each change of your organization as it happens (kb serve extension)';

  static override description = `Streams GET /v1/watch, an extension of kb serve: one line per change, such as \`created base docs/faq\`, or with --json one JSON object a line (NDJSON) with its cursor. A dropped connection or a restarted server is resumed from the last cursor, so nothing is lost or repeated. Ctrl-C ends it. It streams through the same connections as every request, proxies (HTTPS_PROXY...) included. Against a deployment without /v1/watch it lists every 2 s instead and prints what changed between two lists, without cursors (so no --since there: exit 2). To filter, pipe --json to \`jq -c\`.`;

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
    const { changeJson, changeLine, pollChanges, POLL_MS } = await import('../cli/watch-stream.js');
    const { watchChanges, WatchUnsupportedError } = await import('../client/watch.js');
    const signal = new AbortController().signal;
    const print = (change: CursorChange) => this.io.stdout(flags.json ? changeJson(change) : changeLine(change));
    const notice = (text: string) => {
      if (this.io.isStderrTTY) this.io.stderr(`${text}\n`);
    };
    try {
      await watchChanges(client, { namespace: args.namespace, since: flags.since }, { onChange: print, onRetry: notice }, signal);
    } catch (error) {
      if (!(error instanceof WatchUnsupportedError)) throw error;
      if (flags.since !== undefined) {
        throw new UsageError(`--since needs GET /v1/watch, which ${client.baseUrl} does not serve (an extension of kb serve)`, `Without it kb watch lists every ${POLL_MS / 1000} s and its changes have no cursors: run it without --since.`);
      }
      notice(`${client.baseUrl} does not serve GET /v1/watch: listing every ${POLL_MS / 1000} s instead, changes without cursors`);
      await pollChanges(client, { namespace: args.namespace, bases: true }, print, notice, signal);
    }
  }
}
