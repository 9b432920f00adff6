import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { escapeControls } from '../cli/text.js';

export default class Watch extends ApiCommand {
  static override summary = 'Print each change of your organization as it happens (kb serve extension)';

  static override description = `Streams GET /v1/watch, an extension of kb serve: one line per change, such as \`created base docs/faq\`, or with --json one JSON object a line (NDJSON) with its cursor. A dropped connection or a restarted server is resumed from the last cursor, so nothing is lost or repeated. Ctrl-C ends it. A deployment without /v1/watch is an error (exit 3).`;

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
    const { deployment } = await this.connect(flags);
    const { watchChanges } = await import('../cli/watch-stream.js');
    const stop = new AbortController();
    await watchChanges(
      { url: deployment.url.replace(/\/+$/, '').replace(/\/v1$/, ''), token: deployment.token as string, namespace: args.namespace, since: flags.since },
      (change) => {
        if (flags.json) {
          this.io.stdout(`${JSON.stringify({ cursor: change.cursor, type: change.type, kind: change.kind, object: change.object })}\n`);
          return;
        }
        const name = change.kind === 'base' ? `${change.object.namespace}/${change.object.key}` : change.object.key;
        this.io.stdout(`${change.type} ${change.kind} ${escapeControls(name)}\n`);
      },
      stop.signal,
      (reason) => {
        if (this.io.isStderrTTY) this.io.stderr(`${reason}\n`);
      },
    );
  }
}
