import { createInterface } from 'node:readline/promises';
import type { IO } from './io.js';
import { UsageError } from './errors.js';
import { InterruptedError, onInterrupt } from './interrupt.js';

/** Fails with exit 2 and names the flag that replaces the prompt, when no person can answer one. */
export function requirePrompt(io: IO, flagHint: string): void {
  if (!io.canPrompt) throw new UsageError(`Cannot prompt: not a terminal (or CI is set). ${flagHint}`);
}

/** One line from the terminal; Ctrl-C (which readline takes in place of the signal) is an InterruptedError. */
async function question(text: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const controller = new AbortController();
  rl.once('SIGINT', () => controller.abort());
  try {
    return await rl.question(text, { signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) throw new InterruptedError();
    throw error;
  } finally {
    rl.close();
  }
}

/** Asks a yes/no question on stderr; only "y" or "yes" confirms. */
export async function confirm(io: IO, text: string, flagHint: string): Promise<boolean> {
  requirePrompt(io, flagHint);
  const answer = await question(`${text} [y/N] `);
  return /^y(es)?$/i.test(answer.trim());
}

/** Asks for a line of text, with a default shown in brackets. */
export async function ask(io: IO, text: string, flagHint: string, fallback?: string): Promise<string> {
  requirePrompt(io, flagHint);
  const answer = (await question(fallback ? `${text} [${fallback}] ` : `${text} `)).trim();
  return answer === '' && fallback !== undefined ? fallback : answer;
}

/** The end of an escape sequence (CSI or SS3: arrow keys, Home, F-keys), which a secret prompt skips whole. */
const SEQUENCE_FINAL = /[\x40-\x7E]/;

/**
 * Reads a secret without echoing it: raw mode, one "*" per character, backspace handled, escape sequences (arrow
 * keys and the like) ignored, Ctrl-C an InterruptedError. The terminal leaves raw mode whatever happens.
 */
export async function askSecret(io: IO, prompt: string, flagHint: string): Promise<string> {
  requirePrompt(io, flagHint);
  const stdin = process.stdin;
  const restore = () => {
    stdin.setRawMode(false);
    stdin.pause();
  };
  const forget = onInterrupt(restore);
  // Raw mode before the prompt shows, so that nothing typed at once is echoed by the terminal.
  stdin.setRawMode(true);
  io.stderr(prompt);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let secret = '';
      /** Inside an escape sequence: 'esc' just after ESC, 'seq' after ESC [ or ESC O until its final byte. */
      let escape: 'esc' | 'seq' | undefined;
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (escape === 'esc') {
            escape = char === '[' || char === 'O' ? 'seq' : undefined;
            continue;
          }
          if (escape === 'seq') {
            if (SEQUENCE_FINAL.test(char)) escape = undefined;
            continue;
          }
          if (char === '\u001B') {
            escape = 'esc';
          } else if (char === '\r' || char === '\n') {
            stdin.off('data', onData);
            io.stderr('\n');
            resolve(secret.trim());
            return;
          } else if (char === '\u0003') {
            stdin.off('data', onData);
            reject(new InterruptedError());
            return;
          } else if (char === '\u007F' || char === '\b') {
            if (secret.length > 0) {
              secret = [...secret].slice(0, -1).join('');
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
    forget();
    restore();
  }
}

/** Reads all of stdin (for --with-token), trimmed. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}
