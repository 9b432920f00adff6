/**
 * Ctrl-C and the keys of a terminal, against the built CLI in a real pseudo-terminal (Python's pty module drives
 * it: Node has none of its own). Ctrl-C is typed as a terminal sends it, so the terminal turns it into SIGINT, or
 * hands it to a prompt in raw mode.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, it } from 'vitest';
import { isolatedEnv, KB_BIN, ROOT, runProcess } from '../helpers/cli.js';
import { startSilentServer, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { tempDir } from '../helpers/server.js';

const DRIVER = `
import json, os, pty, select, sys, termios, time
spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(spec['argv'][0], spec['argv'], spec['env'])
out = b''
def pump(timeout):
    global out
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return True
    try:
        data = os.read(fd, 65536)
    except OSError:
        return False
    if not data:
        return False
    out += data
    return True
for step in spec['steps']:
    if 'wait' in step:
        deadline = time.time() + 20
        while step['wait'].encode() not in out and time.time() < deadline:
            if not pump(0.1):
                break
    if 'sleep' in step:
        time.sleep(step['sleep'])
    if 'send' in step:
        os.write(fd, step['send'].encode())
deadline = time.time() + 20
while time.time() < deadline and pump(0.2):
    pass
_, status = os.waitpid(pid, 0)
lflag = termios.tcgetattr(fd)[3]
print(json.dumps({
    'code': os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    'signal': os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    'output': out.decode('utf8', 'replace'),
    'echo': bool(lflag & termios.ECHO),
    'canonical': bool(lflag & termios.ICANON),
}))
`;

type Step = { wait: string } | { send: string } | { sleep: number };

interface TerminalRun {
  code: number | null;
  signal: number | null;
  /** Everything the terminal showed (stdout and stderr together, as on a screen). */
  output: string;
  /** The terminal's mode after kb exited: a prompt left in raw mode would leave both off. */
  echo: boolean;
  canonical: boolean;
}

const driver = join(tempDir('kb-pty-'), 'driver.py');
writeFileSync(driver, DRIVER);

/** Runs the built kb in a pseudo-terminal of its own, typing `steps`; resolves once it has exited. */
async function kbInTerminal(args: string[], env: NodeJS.ProcessEnv, steps: Step[]): Promise<TerminalRun> {
  const spec = { argv: [process.execPath, KB_BIN, ...args], env: { ...env, TERM: 'xterm', CI: '' }, steps };
  const result = await runProcess('python3', [driver, JSON.stringify(spec)], { env: process.env, timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`the pty driver failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as TerminalRun;
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A deployment that answers GET /v1/auth for any token, and records the Authorization headers it saw. */
async function recordingServer(): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data: 'acme' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function configFiles(env: NodeJS.ProcessEnv): string[] {
  const dir = env.KB_CONFIG_DIR as string;
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe.concurrent('Ctrl-C in a terminal: exit 130, the terminal restored, nothing half-done', { timeout: TEST_TIMEOUT_MS }, () => {
  it('while waiting on the network behind a spinner: the spinner line is erased', async ({ expect }) => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const env = isolatedEnv({ KB_URL: silent.url, KB_TOKEN: 'kbt_x' });
    const run = await kbInTerminal(['ns', 'list'], env, [{ wait: 'Listing namespaces' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    // The last thing written clears the spinner's line (after the terminal's own echo of ^C).
    // eslint-disable-next-line no-control-regex
    expect(run.output, JSON.stringify(run.output)).toMatch(/Listing namespaces(\^C)?\r\u001B\[2K(\r?\n)?$/);
  });

  it('at a yes/no prompt: nothing is deleted', async ({ expect }) => {
    const server = await recordingServer();
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: 'kbt_x' });
    const run = await kbInTerminal(['base', 'delete', 'docs', 'faq'], env, [{ wait: '[y/N]' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(server.seen).toEqual([]);
    expect(run.echo && run.canonical).toBe(true);
  });

  it('at the secret prompt of auth login: raw mode is left, and no config is written', async ({ expect }) => {
    const server = await recordingServer();
    const env = isolatedEnv();
    const run = await kbInTerminal(['auth', 'login', '--url', server.url], env, [{ wait: 'Token for' }, { send: 'kbt_ab' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(run.echo && run.canonical).toBe(true);
    expect(server.seen).toEqual([]);
    expect(configFiles(env)).toEqual([]);
  });

  it('while reading a token from stdin (--with-token on a terminal)', async ({ expect }) => {
    const server = await recordingServer();
    const env = isolatedEnv();
    const run = await kbInTerminal(['auth', 'login', '--url', server.url, '--with-token'], env, [{ sleep: 1.5 }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(server.seen).toEqual([]);
    expect(configFiles(env)).toEqual([]);
  });
});

describe.concurrent('the secret prompt and the keys of a terminal', { timeout: TEST_TIMEOUT_MS }, () => {
  it('arrow keys and other escape sequences are ignored, never typed into the token', async ({ expect }) => {
    const server = await recordingServer();
    const env = isolatedEnv();
    const run = await kbInTerminal(['auth', 'login', '--url', server.url], env, [
      { wait: 'Token for' },
      { send: 'kbt_ab\u001B[A\u001B[D\u001BOHcd\r' },
      { wait: 'Logged in' },
    ]);
    expect(run.code, run.output).toBe(0);
    expect(server.seen.map((headers) => headers.authorization)).toEqual(['Bearer kbt_abcd']);
    // Echoed as one star a character typed, and nothing of the token itself.
    expect(run.output).toContain('********');
    expect(run.output).not.toContain('kbt_ab');
  });
});

/** A config of two profiles, `work` (the default, with a token) and `other`, as kb would have saved it. */
function seedConfig(env: NodeJS.ProcessEnv): string {
  const dir = env.KB_CONFIG_DIR as string;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify({ defaultProfile: 'work', profiles: { work: { url: 'http://127.0.0.1:1', token: 'kbt_work' }, other: { url: 'http://127.0.0.1:2' } } }, null, '\t')}\n`;
  writeFileSync(join(dir, 'config.json'), text, { mode: 0o600 });
  return text;
}

interface SignalledRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts the built kb, waits until `waiting()` says it waits, sends it SIGINT as a terminal's Ctrl-C would, and
 * resolves once it has exited; `whileRunning` is called until then (to keep a lock served, say).
 */
async function interruptWhen(args: string[], env: NodeJS.ProcessEnv, waiting: (stderr: string) => boolean, whileRunning: () => void = () => undefined): Promise<SignalledRun> {
  const child = spawn(process.execPath, [KB_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 20_000;
  try {
    while (!done && !waiting(stderr)) {
      if (Date.now() > deadline) throw new Error(`kb never got to wait. stderr:\n${stderr}`);
      whileRunning();
      await sleep(5);
    }
    if (!done) child.kill('SIGINT');
    while (!done) {
      if (Date.now() > deadline) throw new Error(`kb did not exit after SIGINT. stderr:\n${stderr}`);
      whileRunning();
      await sleep(5);
    }
  } finally {
    if (!done) child.kill('SIGKILL');
  }
  return { ...(await exited), stdout, stderr };
}

/**
 * The config lock, held by this (live) process as another kb would hold it, as a named pipe: kb reads it to see who
 * holds it, so each read this side serves is proof that kb waits for it. Returns the number of reads so far.
 */
function lockServer(env: NodeJS.ProcessEnv): { reads(): number; serve(): void } {
  const path = join(env.KB_CONFIG_DIR as string, 'config.lock');
  const made = spawnSync('mkfifo', ['-m', '600', path]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
  const owner = JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'another-kb' });
  let reads = 0;
  return {
    reads: () => reads,
    serve() {
      let fd: number;
      try {
        fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (error) {
        // No reader yet: kb is not looking at the lock right now.
        if ((error as { code?: string }).code === 'ENXIO') return;
        throw error;
      }
      try {
        writeSync(fd, owner);
        reads++;
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** What a config dir holds besides the config and the lock: a half-done save would leave a temporary file. */
function leftovers(env: NodeJS.ProcessEnv): string[] {
  return configFiles(env).filter((name) => name !== 'config.json' && name !== 'config.lock');
}

describe.concurrent('Ctrl-C (SIGINT) while kb auth logout, switch and token wait: exit 130, the config untouched', { timeout: TEST_TIMEOUT_MS }, () => {
  it('auth logout, waiting for the config lock another kb holds', async ({ expect }) => {
    const env = isolatedEnv();
    const before = seedConfig(env);
    const lock = lockServer(env);
    const run = await interruptWhen(['auth', 'logout', '--profile', 'work'], env, () => lock.reads() > 0, () => lock.serve());
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 130, signal: null });
    expect(run.stdout).toBe('');
    expect(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')).toBe(before);
    expect(leftovers(env)).toEqual([]);
  });

  it('auth switch, waiting for the config lock another kb holds', async ({ expect }) => {
    const env = isolatedEnv();
    const before = seedConfig(env);
    const lock = lockServer(env);
    const run = await interruptWhen(['auth', 'switch', 'other'], env, () => lock.reads() > 0, () => lock.serve());
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 130, signal: null });
    expect(run.stdout).toBe('');
    expect(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8')).toBe(before);
    expect(leftovers(env)).toEqual([]);
  });

  it('auth token, waiting while the config is read (its reader held up, as on a slow disk): no token printed', async ({ expect }) => {
    const env = isolatedEnv();
    seedConfig(env);
    // The chunk that kb loads to read the config: the stand-in that takes conf from the vendor bundle (scripts/vendor.mjs).
    const bundles = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
    const chunks = Object.entries(bundles).filter(([, inputs]) => inputs.includes('vendor:conf')).map(([file]) => file);
    expect(chunks).toHaveLength(1);
    const paused = { ...env, KB_PAUSE_IMPORT: `/dist/${chunks[0]}`, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/pause-import.mjs')}` };
    const run = await interruptWhen(['auth', 'token'], paused, (stderr) => stderr.includes('kb-test: paused loading'));
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 130, signal: null });
    expect(run.stdout).toBe('');
  });
});
