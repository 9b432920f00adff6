import type { IO } from '../../src/cli/io.js';

export interface MemoryIOOptions {
  /** A person at a terminal: stdin, stdout and stderr are TTYs and prompts may be shown (default: none of it). */
  tty?: boolean;
  /** Columns of the fake terminal (only with `tty`). */
  columns?: number;
  color?: boolean;
  /** What stdin holds, read whole by --with-token, --input - and -F key=@-. */
  stdin?: string;
  /** The answers typed at prompts, in order (the secret prompt's included); a prompt with none left fails the test. */
  answers?: readonly string[];
}

/** An IO in memory, as a command's context takes it: what was written, what was asked, and scripted answers. */
export interface MemoryIO extends IO {
  out: string;
  err: string;
  /** The prompts shown, in order. */
  asked: string[];
}

/** A fake terminal (or no terminal at all) for a command run in this process. */
export function memoryIO(options: MemoryIOOptions = {}): MemoryIO {
  const tty = options.tty ?? false;
  const answers = [...(options.answers ?? [])];
  const answer = (prompt: string): Promise<string> => {
    io.asked.push(prompt);
    const next = answers.shift();
    return next === undefined ? Promise.reject(new Error(`no answer scripted for the prompt ${JSON.stringify(prompt)}`)) : Promise.resolve(next);
  };
  const io: MemoryIO = {
    out: '',
    err: '',
    asked: [],
    stdout: (text) => {
      io.out += text;
    },
    stderr: (text) => {
      io.err += text;
    },
    isStdinTTY: tty,
    isStdoutTTY: tty,
    isStderrTTY: tty,
    canPrompt: tty,
    color: options.color ?? false,
    animate: false,
    columns: tty ? (options.columns ?? 80) : undefined,
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    question: answer,
    // A terminal shows no secret: what the user sees is the prompt, then a star a character.
    secret: async (prompt) => (await answer(prompt)).trim(),
  };
  return io;
}
