import { CliError } from './errors.js';
import { EXIT } from '../client/exit-codes.js';

/** Exit status of a command stopped by Ctrl-C, as shells report a process that SIGINT ended (128 + 2). */
export const INTERRUPTED_EXIT_CODE = EXIT.interrupted;

/** Ctrl-C while kb was waiting: on the network, at a prompt, behind a spinner, on stdin. Exits 130, saying nothing more. */
export class InterruptedError extends CliError {
  override readonly name = 'InterruptedError';
  constructor() {
    super('Interrupted', INTERRUPTED_EXIT_CODE);
  }
}

const cleanups = new Set<() => void>();
let critical = 0;
let interrupted = false;
let installed = false;

function exitInterrupted(): void {
  for (const cleanup of [...cleanups].reverse()) {
    try {
      cleanup();
    } catch {
      // Restoring the terminal is best effort: the exit must happen whatever a cleanup did.
    }
  }
  process.exit(INTERRUPTED_EXIT_CODE);
}

/**
 * Ctrl-C anywhere ends the command with exit 130, after the cleanups registered with `onInterrupt` (erase a spinner,
 * leave raw mode, show the cursor) and after any `uninterrupted` work in progress (a config save holding its lock).
 */
export function handleInterrupts(): void {
  if (installed) return;
  installed = true;
  process.on('SIGINT', () => {
    // A command with its own SIGINT handler (kb serve: a graceful shutdown, exit 0) decides for itself.
    if (process.listenerCount('SIGINT') > 1) return;
    interrupted = true;
    if (critical === 0) exitInterrupted();
  });
}

/** Runs `cleanup` if Ctrl-C ends the command; the returned function unregisters it. */
export function onInterrupt(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Work that Ctrl-C must not cut in half: an interrupt that comes meanwhile ends the command once it is done. */
export async function uninterrupted<T>(work: () => Promise<T>): Promise<T> {
  critical++;
  try {
    return await work();
  } finally {
    critical--;
    if (critical === 0 && interrupted) exitInterrupted();
  }
}
