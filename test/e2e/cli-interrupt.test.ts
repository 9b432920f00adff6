/**
 * Ctrl-C and the keys of a terminal, against the built CLI in a real pseudo-terminal (Python's pty module drives
 * it: Node has none of its own). Ctrl-C is typed as a terminal sends it, so the terminal turns it into SIGINT, or
 * hands it to a prompt in raw mode.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, runProcess } from '../helpers/cli.js';
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
  it('while waiting on the network behind a spinner: the spinner line is erased', async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const env = isolatedEnv({ KB_URL: silent.url, KB_TOKEN: 'kbt_x' });
    const run = await kbInTerminal(['ns', 'list'], env, [{ wait: 'Listing namespaces' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    // The last thing written clears the spinner's line (after the terminal's own echo of ^C).
    // eslint-disable-next-line no-control-regex
    expect(run.output, JSON.stringify(run.output)).toMatch(/Listing namespaces(\^C)?\r\u001B\[2K(\r?\n)?$/);
  });

  it('at a yes/no prompt: nothing is deleted', async () => {
    const server = await recordingServer();
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: 'kbt_x' });
    const run = await kbInTerminal(['base', 'delete', 'docs', 'faq'], env, [{ wait: '[y/N]' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(server.seen).toEqual([]);
    expect(run.echo && run.canonical).toBe(true);
  });

  it('at the secret prompt of auth login: raw mode is left, and no config is written', async () => {
    const server = await recordingServer();
    const env = isolatedEnv();
    const run = await kbInTerminal(['auth', 'login', '--url', server.url], env, [{ wait: 'Token for' }, { send: 'kbt_ab' }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(run.echo && run.canonical).toBe(true);
    expect(server.seen).toEqual([]);
    expect(configFiles(env)).toEqual([]);
  });

  it('while reading a token from stdin (--with-token on a terminal)', async () => {
    const server = await recordingServer();
    const env = isolatedEnv();
    const run = await kbInTerminal(['auth', 'login', '--url', server.url, '--with-token'], env, [{ sleep: 1.5 }, { send: '\u0003' }]);
    expect(run.code, run.output).toBe(130);
    expect(server.seen).toEqual([]);
    expect(configFiles(env)).toEqual([]);
  });
});

describe.concurrent('the secret prompt and the keys of a terminal', { timeout: TEST_TIMEOUT_MS }, () => {
  it('arrow keys and other escape sequences are ignored, never typed into the token', async () => {
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
