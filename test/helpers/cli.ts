import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { tempDir } from './server.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const KB_BIN = `${ROOT}bin/run.js`;

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The runner's own proxy settings, which would send a child's requests to loopback servers through its proxy. */
const PROXY_VARIABLE = /^(https?|no|all)_proxy$/i;

/**
 * An environment with no trace of the developer's own kb set-up: its own config dir, no KB_* overrides, no proxy
 * variables (either case), no TTY. A test that wants any of them sets it in `extra`.
 */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KB_') && key !== 'NO_COLOR' && !PROXY_VARIABLE.test(key) && value !== undefined) env[key] = value;
  }
  env.KB_CONFIG_DIR = tempDir('kb-config-');
  env.KB_DATA_DIR = tempDir('kb-data-');
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  cwd?: string;
}

/** Runs a program with no TTY, stdin closed or fed `input`, and collects what it printed; killed after the timeout. */
export function runProcess(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A child that exits before it reads its input (a command that fails at once) closes the pipe: the write's EPIPE
    // is the child's doing, not the test's, and the result says what the child did.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Runs the built `kb` as a child process, as a script would: no TTY, stdin closed or fed `input`. */
export function runKb(args: readonly string[], options: RunOptions): Promise<RunResult> {
  return runProcess(process.execPath, [KB_BIN, ...args], options);
}

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const START_LIMIT_MS = 60_000;

/**
 * Starts `kb serve --port 0 --log-level warn --no-warm-up` (or on the --port, at the --log-level, among args) as a child
 * process and resolves once it listens (the URL read from its stderr). Without its warm-up, as its --help has it for
 * development and scripts (half of a start's CPU, in hundreds of starts a run): a test of kb serve as users start it,
 * or of the warm-up, says --warm-up.
 */

export function startServe(args: readonly string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const port = args.includes('--port') ? [] : ['--port', '0'];
    const level = args.includes('--log-level') ? [] : ['--log-level', 'warn'];
    const warmUp = args.includes('--warm-up') || args.includes('--no-warm-up') ? [] : ['--no-warm-up'];
    const child = spawn(process.execPath, [KB_BIN, 'serve', ...port, ...level, ...warmUp, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let ready = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on('exit', (code, signal) => done({ code, signal })),
    );
    // A guard against a start that hangs, not a budget: a start may wait on locks and on a holder for some seconds
    // by design, and CI's loaded machine ran one past 20 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kb serve did not start in ${START_LIMIT_MS / 1000} s. stderr:\n${stderr}`));
    }, START_LIMIT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (https?:\/\/\S+)/.exec(stderr);
      if (match && !ready) {
        ready = true;
        clearTimeout(timer);
        resolve({ child, url: match[1] as string, stdout: () => stdout, stderr: () => stderr, exited });
      }
    });
    void exited.then(({ code, signal }) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`kb serve exited (${code ?? signal}) before listening. stderr:\n${stderr}`));
      }
    });
  });
}

/** A list for the `kb serve` processes a test file starts: each is killed (SIGKILL) after the test that started it. */
export function killedAfterEach(): ServeProcess[] {
  const running: ServeProcess[] = [];
  afterEach(() => {
    for (const server of running.splice(0)) server.child.kill('SIGKILL');
  });
  return running;
}

/**
 * kb serve's log in JSON mode (its default off a terminal): each whole line of stderr parsed (a last one still being
 * written is left out); a line that is not JSON fails.
 */
export function logLines(stderr: string): Array<{ level: string; msg: string } & Record<string, unknown>> {
  return stderr
    .split('\n')
    .slice(0, -1)
    .map((line) => {
      try {
        return JSON.parse(line) as { level: string; msg: string };
      } catch {
        throw new Error(`a line of the log is not one whole JSON object: ${JSON.stringify(line)}`);
      }
    });
}

/** The messages of kb serve's JSON log, in order. */
export function logMessages(stderr: string): string[] {
  return logLines(stderr).map((line) => line.msg);
}
