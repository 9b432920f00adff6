import { render } from 'ink';
import type { Namespace } from '../api/schemas.js';
import type { IO } from '../cli/io.js';
import { UsageError } from '../cli/errors.js';
import { App } from './app.js';
import type { TuiClient, TuiDeployment } from './types.js';

export type { TuiClient, TuiDeployment } from './types.js';

export interface RunTuiOptions {
  client: TuiClient;
  deployment: TuiDeployment;
  /** The organization, or the GET /auth already under way; otherwise the app asks. */
  organization?: string | Promise<string> | undefined;
  /** The namespace list already under way (kb tui asks while Ink loads); otherwise the app asks. */
  namespaces?: Promise<readonly Namespace[]> | undefined;
  io: Pick<IO, 'color'>;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

// The alternate screen, as less and vim use it: the UI takes the whole terminal, and quitting gives back what was there.
const ENTER_ALTERNATE_SCREEN = '\u001B[?1049h';
const LEAVE_ALTERNATE_SCREEN = '\u001B[?1049l';

/**
 * Runs the terminal UI until the user quits (q or ctrl-c). Without a terminal on stdin and stdout it fails with a
 * UsageError (exit 2) before drawing anything, rather than with Ink's raw-mode crash.
 */
export async function runTui(options: RunTuiOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  if (stdin.isTTY !== true || stdout.isTTY !== true) {
    throw new UsageError('kb tui needs a terminal: stdin and stdout must both be a TTY', 'In scripts use `kb ns list` and `kb base list` (with --json).');
  }
  stdout.write(ENTER_ALTERNATE_SCREEN);
  try {
    const app = render(
      <App
        client={options.client}
        deployment={options.deployment}
        organization={options.organization}
        namespaces={options.namespaces}
        color={options.io.color}
      />,
      // Nothing in the app writes to the console, and a patched console would hide what else might.
      { stdin, stdout, stderr, exitOnCtrlC: true, patchConsole: false },
    );
    await app.waitUntilExit();
  } finally {
    stdout.write(LEAVE_ALTERNATE_SCREEN);
  }
}
