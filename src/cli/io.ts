import { EXIT } from '../client/exit-codes.js';
import type { KbEnvironment } from '../config/env.js';
import { describeSystemError, errno } from '../os/errors.js';
import { CliError } from './errors.js';

/**
 * The one place that decides what the terminal can do (after gh's iostreams): results go to stdout,
 * everything else (progress, confirmations, warnings, errors) to stderr. Commands read stdin and ask their
 * questions through it too, so that tests can give one of their own (test/helpers/io.ts).
 */
export interface IO {
  stdout(text: string): void;
  stderr(text: string): void;
  isStdinTTY: boolean;
  isStdoutTTY: boolean;
  isStderrTTY: boolean;
  /** Prompts need a person at both ends and no CI. */
  canPrompt: boolean;
  color: boolean;
  /** Spinners and other redrawn lines: only on a terminal, never in CI. */
  animate: boolean;
  /** Columns of the terminal, or undefined when stdout is not one. */
  columns: number | undefined;
  /** All of stdin, as text (for --with-token, --input -, -F key=@-). */
  readStdin(): Promise<string>;
  /** One line typed at the terminal after `question` (on stderr); Ctrl-C rejects with an InterruptedError. */
  question(question: string): Promise<string>;
  /** A line typed at the terminal without being shown (one `*` a character); Ctrl-C rejects with an InterruptedError. */
  secret(prompt: string): Promise<string>;
}

/** The IO of this process's own streams, as kb's environment (CI, NO_COLOR) allows them to be used. */
export function processIO(env: Pick<KbEnvironment, 'ci' | 'noColor'>): IO {
  const ci = env.ci !== undefined;
  const isStdinTTY = process.stdin.isTTY === true;
  const isStdoutTTY = process.stdout.isTTY === true;
  const isStderrTTY = process.stderr.isTTY === true;
  takeOverOutputErrors();
  return {
    stdout: (text) => {
      try {
        process.stdout.write(text);
      } catch (error) {
        // A file or a device is written at once, and a full disk fails the write itself (a pipe fails later: below).
        if (errno(error) !== 'EPIPE') throw new OutputError(error);
      }
    },
    stderr: (text) => {
      try {
        process.stderr.write(text);
      } catch {
        // stderr is where a failure is told: with it gone there is nowhere left to tell it. The exit code still does.
      }
    },
    isStdinTTY,
    isStdoutTTY,
    isStderrTTY,
    canPrompt: !ci && isStdinTTY && isStdoutTTY,
    animate: !ci && isStderrTTY,
    color: !ci && isStderrTTY && !env.noColor,
    columns: isStdoutTTY ? process.stdout.columns : undefined,
    // The terminal's readline and raw mode are loaded only by a command that reads or asks.
    readStdin: async () => (await import('./terminal.js')).readStdin(),
    question: async (question) => (await import('./terminal.js')).question(question),
    secret: async (prompt) => (await import('./terminal.js')).secret(prompt),
  };
}

/** Output that could not be written (a full disk, a terminal gone): one line and exit 1, never a crash. */
export class OutputError extends CliError {
  override readonly name = 'OutputError';
  constructor(cause: unknown) {
    super(`could not write the output to stdout: ${describeSystemError(cause)}`, EXIT.failure);
  }
}

let outputErrorsTaken = false;

/**
 * oclif rethrows, from its 'error' listener on stdout, every write error but EPIPE: a full disk or a terminal that went
 * away ended kb with Node's dump of the bundled source around the throw (35 KB of minified oclif). kb takes that
 * listener over: a reader that went away (`kb ns list | head -1`) is ignored, as oclif does; any other failure is said
 * in one line and the command exits 1. An error on stderr has nowhere to be told; the exit code still tells it.
 */
export function takeOverOutputErrors(): void {
  if (outputErrorsTaken) return;
  outputErrorsTaken = true;
  // oclif writes '' to stdout before it exits, to wait for a drain: on a full disk even that fails, and a command
  // that printed nothing, or failed with its own exit code, would be told it could not write its output.
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (chunk.length > 0) return write(chunk, ...rest);
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (callback !== undefined) process.nextTick(callback);
    return true;
  }) as typeof process.stdout.write;
  process.stdout.removeAllListeners('error');
  let told = false;
  process.stdout.on('error', (error) => {
    if (errno(error) === 'EPIPE') return;
    if (!process.exitCode) process.exitCode = EXIT.failure;
    if (told) return;
    told = true;
    try {
      process.stderr.write(`Error: ${new OutputError(error).message}\n`);
    } catch {
      // As above: nowhere left to tell it.
    }
  });
  process.stderr.on('error', () => undefined);
}

/**
 * For a process that must outlive whoever reads its output (`kb serve | head`, a log collector that went away): a
 * write to a closed stdout or stderr is dropped, instead of an 'error' event that would end the process.
 */
export function outliveClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}

const codes = { red: [31, 39], green: [32, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22] } as const;

export function paint(io: Pick<IO, 'color'>, style: keyof typeof codes, text: string): string {
  if (!io.color) return text;
  const [open, close] = codes[style];
  return `\u001B[${open}m${text}\u001B[${close}m`;
}
