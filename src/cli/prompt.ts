import { createInterface } from 'node:readline/promises';
import type { IO } from './io.js';
import { UsageError } from './errors.js';

/** Fails with exit 2 and names the flag that replaces the prompt, when no person can answer one. */
export function requirePrompt(io: IO, flagHint: string): void {
  if (!io.canPrompt) throw new UsageError(`Cannot prompt: not a terminal (or CI is set). ${flagHint}`);
}

/** Asks a yes/no question on stderr; only "y" or "yes" confirms. */
export async function confirm(io: IO, question: string, flagHint: string): Promise<boolean> {
  requirePrompt(io, flagHint);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Asks for a line of text, with a default shown in brackets. */
export async function ask(io: IO, question: string, flagHint: string, fallback?: string): Promise<string> {
  requirePrompt(io, flagHint);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(fallback ? `${question} [${fallback}] ` : `${question} `)).trim();
    return answer === '' && fallback !== undefined ? fallback : answer;
  } finally {
    rl.close();
  }
}

/** Reads a secret without echoing it: raw mode, one "*" per character, backspace and ctrl-c handled. */
export async function askSecret(io: IO, question: string, flagHint: string): Promise<string> {
  requirePrompt(io, flagHint);
  const stdin = process.stdin;
  io.stderr(question);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let secret = '';
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n') {
            stdin.off('data', onData);
            io.stderr('\n');
            resolve(secret.trim());
            return;
          }
          if (char === '\u0003') {
            stdin.off('data', onData);
            io.stderr('\n');
            reject(new UsageError('Cancelled.'));
            return;
          }
          if (char === '\u007F' || char === '\b') {
            if (secret.length > 0) {
              secret = secret.slice(0, -1);
              io.stderr('\b \b');
            }
          } else if (char >= ' ') {
            secret += char;
            io.stderr('*');
          }
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
  }
}

/** Reads all of stdin (for --with-token), trimmed. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}
