import { render } from 'ink';
import type { Namespace } from '../api/schemas.js';
import { EXIT } from '../client/exit-codes.js';
import { App } from './app.js';
import {
  DISABLE_BRACKETED_PASTE,
  ENABLE_BRACKETED_PASTE,
  ENTER_ALTERNATE_SCREEN,
  LEAVE_ALTERNATE_SCREEN,
  processTerminal,
} from './terminal.js';
import type { TuiClient, TuiDeployment } from './types.js';

export type { TuiClient, TuiDeployment } from './types.js';

export interface RunTuiOptions {
  client: TuiClient;
  deployment: TuiDeployment;
  /** The organization, or the GET /auth already under way; otherwise the app asks. */
  organization?: string | Promise<string> | undefined;
  /** The namespace list already under way (kb tui asks while Ink loads); otherwise the app asks. */
  namespaces?: Promise<readonly Namespace[]> | undefined;
  color: boolean;
  /** Seconds between refreshes of an idle list; 0: never by itself. */
  refreshSeconds: number;
  /** The editor of `E`, as a shell runs it ($VISUAL, else $EDITOR, else vi). */
  editor: string;
  /** The namespace to start in (`kb tui NS`); the namespaces list otherwise. */
  namespace?: string | undefined;
  /** Offer and do no create, edit or delete (`--readonly`). */
  readonly?: boolean | undefined;
  /** Where the `:` history is kept across runs (a file in the config dir). */
  historyFile?: string | undefined;
  /** The client and deployment of another profile, for `:profile NAME`; without it the command says it cannot. */
  connect?: ((profile: string) => Promise<{ client: TuiClient; deployment: TuiDeployment }>) | undefined;
  /** The names of the saved profiles, for the picker of `:ctx` and Tab after it. */
  profiles?: (() => Promise<readonly string[]>) | undefined;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

/** runTui without a terminal: exit 2, as for any usage the CLI cannot serve (the command checks first, too). */
export class NotATerminalError extends Error {
  override readonly name = 'NotATerminalError';
  readonly exitCode = EXIT.usage;
  readonly help = 'In scripts use `kb ns list` and `kb base list` (with --json).';
  constructor() {
    super('kb tui needs a terminal: stdin and stdout must both be a TTY');
  }
}

/** The value of a promise that has already settled with one; otherwise (still under way, or failed) the promise. */
async function inHand<T>(promise: T | Promise<T> | undefined): Promise<T | Promise<T> | undefined> {
  if (!(promise instanceof Promise)) return promise;
  const now = await Promise.race([
    promise.then((value) => ({ value }), () => undefined),
    new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
  ]);
  return now === undefined ? promise : now.value;
}

/**
 * Runs the terminal UI until the user quits (q, :q or ctrl-c). Without a terminal on stdin and stdout it fails
 * with a NotATerminalError (exit 2) before drawing anything, rather than with Ink's raw-mode crash.
 */
export async function runTui(options: RunTuiOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  if (stdin.isTTY !== true || stdout.isTTY !== true) throw new NotATerminalError();
  // What came in while Ink loaded goes into the first frame, rather than into a second one a throttle tick later.
  const [organization, namespaces] = await Promise.all([inHand(options.organization), inHand(options.namespaces)]);
  // The alternate screen, as less and vim use it: the UI takes the whole terminal, and quitting gives back what was there.
  // Bracketed paste marks pasted text, so that a paste is never read as keys (docs/contract.md, The TUI).
  stdout.write(ENTER_ALTERNATE_SCREEN + ENABLE_BRACKETED_PASTE);
  // However the process ends (a signal's exit, a crash), the terminal gets its modes back; a TTY write is synchronous.
  const restore = () => void stdout.write(DISABLE_BRACKETED_PASTE + LEAVE_ALTERNATE_SCREEN);
  process.once('exit', restore);
  try {
    const app = render(
      <App
        client={options.client}
        deployment={options.deployment}
        terminal={processTerminal({ stdin, stdout, editor: options.editor })}
        refreshSeconds={options.refreshSeconds}
        organization={organization}
        namespaces={namespaces}
        color={options.color}
        namespace={options.namespace}
        readonly={options.readonly ?? false}
        connect={options.connect}
        profiles={options.profiles}
        historyFile={options.historyFile}
      />,
      // Nothing in the app writes to the console, and a patched console would hide what else might.
      // Ctrl-C is the app's: a form holding typed text asks before quitting (the key router).
      { stdin, stdout, stderr, exitOnCtrlC: false, patchConsole: false, maxFps: 60 },
    );
    await app.waitUntilExit();
  } finally {
    process.off('exit', restore);
    restore();
  }
}
