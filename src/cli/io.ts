/**
 * The one place that decides what the terminal can do (after gh's iostreams): results go to stdout,
 * everything else (progress, confirmations, warnings, errors) to stderr.
 */
export interface IO {
  stdout(text: string): void;
  stderr(text: string): void;
  isStdoutTTY: boolean;
  isStderrTTY: boolean;
  /** Prompts need a person at both ends and no CI. */
  canPrompt: boolean;
  color: boolean;
  /** Spinners and other redrawn lines: only on a terminal, never in CI. */
  animate: boolean;
  /** Columns of the terminal, or undefined when stdout is not one. */
  columns: number | undefined;
}

export function processIO(env: NodeJS.ProcessEnv = process.env): IO {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  const isStdoutTTY = process.stdout.isTTY === true;
  const isStderrTTY = process.stderr.isTTY === true;
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isStdoutTTY,
    isStderrTTY,
    canPrompt: !ci && process.stdin.isTTY === true && isStdoutTTY,
    animate: !ci && isStderrTTY,
    color: !ci && isStderrTTY && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb',
    columns: isStdoutTTY ? process.stdout.columns : undefined,
  };
}

const codes = { red: [31, 39], green: [32, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22] } as const;

export function paint(io: Pick<IO, 'color'>, style: keyof typeof codes, text: string): string {
  if (!io.color) return text;
  const [open, close] = codes[style];
  return `\u001B[${open}m${text}\u001B[${close}m`;
}
