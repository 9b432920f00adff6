/**
 * What bin/run.js installs before oclif writes anything (help, its own errors, a command's output): a write to stdout
 * that fails says so in one line and exits 1. Bundled into the entry point, dist/cli/run.js, so that a command loads
 * no module more for it; `kb --version` loads that only once a write has failed.
 */
import { EXIT } from '../client/exit-codes.js';
import { describeSystemError, errno } from '../os/errors.js';

let outputErrorsTaken = false;
let told = false;

/** A failed write to stdout, told once in one line; a reader that went away (EPIPE) is no failure. */
export function reportOutputError(error: unknown): void {
  if (errno(error) === 'EPIPE') return;
  if (!process.exitCode) process.exitCode = EXIT.failure;
  if (told) return;
  told = true;
  try {
    process.stderr.write(`Error: could not write the output to stdout: ${describeSystemError(error)}\n`);
  } catch {
    // stderr gone too: nowhere left to tell it. The exit code still does.
  }
}

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
  process.stdout.on('error', reportOutputError);
  process.stderr.on('error', () => undefined);
}
