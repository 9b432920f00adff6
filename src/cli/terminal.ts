import { createInterface } from 'node:readline/promises';
import { InterruptedError, onInterrupt } from './interrupt.js';

/**
 * This process's terminal and stdin, as processIO (io.ts) reads them: a command reaches them through its IO, never
 * here, so that tests can answer in its place.
 */

/** One line from the terminal; Ctrl-C (which readline takes in place of the signal) is an InterruptedError. */
export async function question(text: string): Promise<string> {
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

/** The end of an escape sequence (CSI or SS3: arrow keys, Home, F-keys), which a secret prompt skips whole. */
const SEQUENCE_FINAL = /[\x40-\x7E]/;

/**
 * Reads a secret without echoing it: raw mode, one "*" per character, backspace handled, escape sequences (arrow
 * keys and the like) ignored, Ctrl-C an InterruptedError. The terminal leaves raw mode whatever happens.
 */
export async function secret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  const echo = (text: string) => process.stderr.write(text);
  const restore = () => {
    stdin.setRawMode(false);
    stdin.pause();
  };
  const forget = onInterrupt(restore);
  // Raw mode before the prompt shows, so that nothing typed at once is echoed by the terminal.
  stdin.setRawMode(true);
  echo(prompt);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
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
            echo('\n');
            resolve(typed.trim());
            return;
          } else if (char === '\u0003') {
            stdin.off('data', onData);
            reject(new InterruptedError());
            return;
          } else if (char === '\u007F' || char === '\b') {
            if (typed.length > 0) {
              typed = [...typed].slice(0, -1).join('');
              echo('\b \b');
            }
          } else if (char >= ' ') {
            typed += char;
            echo('*');
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

/** All of stdin, as text: at most 64 MiB of UTF-8 (src/cli/input.ts). */
export { readStdinText as readStdin } from './input.js';
