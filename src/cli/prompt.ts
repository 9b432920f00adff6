import type { IO } from './io.js';
import { UsageError } from './errors.js';

/** Fails with exit 2 and names the flag that replaces the prompt, when no person can answer one. */
export function requirePrompt(io: IO, flagHint: string): void {
  if (!io.canPrompt) throw new UsageError(`Cannot prompt: not a terminal (or CI is set). ${flagHint}`);
}

/** Asks a yes/no question on stderr; only "y" or "yes" confirms. */
export async function confirm(io: IO, text: string, flagHint: string): Promise<boolean> {
  requirePrompt(io, flagHint);
  const answer = await io.question(`${text} [y/N] `);
  return /^y(es)?$/i.test(answer.trim());
}

/** Asks for a line of text, with a default shown in brackets. */
export async function ask(io: IO, text: string, flagHint: string, fallback?: string): Promise<string> {
  requirePrompt(io, flagHint);
  const answer = (await io.question(fallback ? `${text} [${fallback}] ` : `${text} `)).trim();
  return answer === '' && fallback !== undefined ? fallback : answer;
}

/** Reads a secret without echoing it (raw mode on a terminal); Ctrl-C is an InterruptedError. */
export async function askSecret(io: IO, prompt: string, flagHint: string): Promise<string> {
  requirePrompt(io, flagHint);
  return io.secret(prompt);
}
