import type { KbEnvironment } from '../config/env.js';

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
  return {
    // A write that fails (a full disk, a terminal gone) fails as an 'error' event, which bin/run.js has taken over
    // (src/cli/output-errors.ts): one line and exit 1.
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
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
