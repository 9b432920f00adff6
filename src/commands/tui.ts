import { join } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { Key } from '../api/schemas.js';
import { ApiCommand } from '../cli/api-command.js';
import { UsageError } from '../cli/errors.js';

export default class Tui extends ApiCommand {
  static override summary = 'Browse and edit namespaces and bases in a terminal UI';

  static override description = `Lists the namespaces of your organization, and the bases of each (through base_list, an extension of
kb serve, where the deployment offers it; otherwise it opens bases by key). Create, edit descriptions and delete
namespaces and bases without leaving it. The profile, URL and organization stay on the top line, the keys on the bottom line.
Lists are live where the deployment serves GET /v1/watch (kb serve does): a change made elsewhere shows at once,
and the top line ends with "live". Elsewhere they refresh by themselves while idle (every 5 seconds; --refresh).

Keys on a list (k9s's where k9s has one): up/down or j/k move, PgUp/PgDn, g/G (Home/End) jump, enter opens,
d describes, n new, e edit description, E edit it in $VISUAL/$EDITOR, ctrl-d delete (asks; y confirms, any other key
cancels; space marks several bases for one ctrl-d), y the selected row as YAML, s/S sort by key/description,
/ filter (a regular expression; ! first inverts it), c copy the key (OSC 52), : command line (:ns, :ns KEY,
:ctx to pick a profile, :ctx NAME, :help, :q; Tab completes, up/down recall), r refresh, ? help, esc back, q quit.
In a form: enter or tab goes to the next field, enter on the last submits, shift-tab goes back, esc cancels.
An empty key is never sent as it is: a generated one is shown, and enter accepts it.

With NAMESPACE it starts in that namespace's bases; with --readonly ("read-only" in its header) it offers and does
no create, edit or delete.

It needs an interactive terminal: without one (a script, a pipe, CI) it exits 2.`;

  static override examples = [
    '<%= config.bin %> tui',
    '<%= config.bin %> tui docs',
    '<%= config.bin %> tui --profile staging --readonly',
    '<%= config.bin %> tui --refresh 0',
  ];

  static override args = {
    namespace: Args.string({ description: 'Start in the bases of this namespace (as k9s -n).' }),
  };

  static override flags = {
    readonly: Flags.boolean({ summary: 'Offer and do no create, edit or delete (as k9s --readonly).', default: false }),
    refresh: Flags.integer({ summary: 'Seconds between refreshes of an idle list where the changes are not streamed (no GET /v1/watch); 0 turns them off.', default: 5, min: 0, max: 86_400 }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Tui);
    if (args.namespace !== undefined) {
      const checked = Key.safeParse(args.namespace);
      if (!checked.success) throw new UsageError(`Not a namespace key: ${args.namespace}: ${checked.error.issues[0]?.message ?? ''}`, 'Namespace keys are 3 to 63 of A-Z a-z 0-9 - _.');
    }
    // Before Ink loads: without a terminal it would crash on raw mode, and under CI it draws nothing.
    const ci = this.context.env.inkCi;
    if (ci !== undefined) {
      throw new UsageError(`kb tui is interactive and does not run in CI (${ci} is set)`, 'In scripts use `kb ns list` and `kb base list` (with --json).');
    }
    if (!this.io.canPrompt) {
      throw new UsageError('kb tui needs a terminal: stdin and stdout must both be a TTY', 'Run it in an interactive terminal; in scripts use `kb ns list` and `kb base list` (with --json).');
    }
    if ((flags.verbose || this.context.env.debug) && this.io.isStderrTTY) {
      // The trace goes to stderr: on the terminal the UI draws on, it would scribble over it.
      throw new UsageError('--verbose (or KB_DEBUG=1) writes a trace to stderr, which is the terminal kb tui draws on', 'Send it to a file: `kb tui --verbose 2>trace.log`.');
    }
    const { client, deployment } = await this.connect(flags);
    // The first screen's data is asked for while Ink loads, so the two overlap; the app reports any failure.
    const organization = client.auth();
    const namespaces = client.nsList();
    organization.catch(() => undefined);
    namespaces.catch(() => undefined);
    const { loadTui } = await import('../tui/load.js');
    const { runTui } = await loadTui();
    // As git and k9s choose the editor.
    const editor = this.context.env.editor ?? 'vi';
    await runTui({
      client,
      deployment,
      organization,
      namespaces,
      color: this.io.color,
      refreshSeconds: flags.refresh,
      editor,
      namespace: args.namespace,
      readonly: flags.readonly,
      historyFile: join(this.context.configDir(), 'tui-history'),
      // `:profile NAME` (`:ctx`): the same connection as --profile NAME would make.
      connect: async (profile: string) => {
        const connection = await this.connect({ ...flags, profile });
        return { client: connection.client, deployment: connection.deployment };
      },
      // For `:ctx` without a name (a picker) and Tab after it.
      profiles: async () => [...(await this.context.profiles().read()).profiles.keys()].sort(),
    });
  }
}
