/**
 * What the built CLI prints of a server's text, and how it words mistakes of its own user: control characters
 * escaped in tables, blocks, errors and `auth status` while --json stays exact; local refusals that say nothing was
 * sent; a stray argument named as such.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isolatedEnv, KB_BIN, runProcess, type RunResult } from '../helpers/cli.js';
import { apiData, describeRun, expectFailure, jsonOut, kb, lines, orgEnv, startFixedServer, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { fullDevice } from '../helpers/temp.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-output' });
});
afterAll(async () => {
  await server?.close();
});

/** Clears the screen, sets the window title, rings the bell, then reverses the rest of the line. */
const HOSTILE = 'ok\u001B[2J\u001B]0;pwned\u0007\u202Eevil\nnext';
const HOSTILE_SHOWN = 'ok\\x1b[2J\\x1b]0;pwned\\x07\\u202eevil\\nnext';
/** No escape character, bell or bidi override reaches the terminal. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u001B\u0007\u202E]/;

describe.concurrent('text from a server reaches a terminal with its control characters escaped', { timeout: TEST_TIMEOUT_MS }, () => {
  it('in the ns list table and the key/value block; --json keeps the exact text', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'hostile-text');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: HOSTILE });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'wide', description: '日本語の説明 👩‍💻' });
    const [table, block, json] = await Promise.all([
      kb(['ns', 'list'], { env }),
      kb(['ns', 'update', 'docs', '--description', HOSTILE], { env }),
      kb(['ns', 'list', '--json'], { env }),
    ]);
    expect(table.code, describeRun(table)).toBe(0);
    // Not a terminal: nothing is cut, and the columns line up by display width.
    expect(lines(table.stdout)).toEqual(['KEY   DESCRIPTION', `docs  ${HOSTILE_SHOWN}`, 'wide  日本語の説明 👩‍💻']);
    expect(block.code, describeRun(block)).toBe(0);
    expect(lines(block.stdout)).toEqual(['key:         docs', `description: ${HOSTILE_SHOWN}`]);
    expect(table.stdout + block.stdout + block.stderr).not.toMatch(RAW_CONTROL);
    expect(jsonOut(expect, json)).toEqual([{ key: 'docs', description: HOSTILE }, { key: 'wide', description: '日本語の説明 👩‍💻' }]);
  });

  it('--json on a terminal writes them as \\uXXXX (the same JSON), and exactly as they are to a pipe', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'hostile-json');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: `a\u202Eb\u0085c` });
    // Python's pty gives the built kb a terminal for stdout, and copies what it writes.
    const onTerminal = await runProcess('python3', ['-c', 'import pty, sys; pty.spawn(sys.argv[1:])', process.execPath, KB_BIN, 'ns', 'list', '--json'], { env });
    const piped = await kb(['ns', 'list', '--json'], { env });
    expect(onTerminal.code, onTerminal.stderr).toBe(0);
    expect(onTerminal.stdout).toContain('"description": "a\\u202eb\\u0085c"');
    expect(onTerminal.stdout).not.toMatch(/[\u0085\u202E]/);
    expect(JSON.parse(onTerminal.stdout.replace(/\r\n/g, '\n'))).toEqual(jsonOut(expect, piped));
    expect(piped.stdout).toContain('a\u202Eb\u0085c');
  });

  it('invisible characters too: `do\\u200bcs` never looks like `docs`, in tables, blocks, errors and --json on a terminal', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'invisible-text');
    const invisible = 'do\u200Bcs \uFEFFbom soft\u00ADhyphen line\u2028sep tag\u{E0041} joined\u200Dx';
    const shown = 'do\\u200bcs \\ufeffbom soft\\xadhyphen line\\u2028sep tag\\u{e0041} joined\\u200dx';
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: invisible });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'emoji', description: 'family 👨‍👩‍👧 heart ❤️ flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿' });
    const fake = await startFixedServer(404, { success: false, message: `No such namespace do\u200Bcs`, help: null });
    try {
      const [table, block, json, failure, onTerminal] = await Promise.all([
        kb(['ns', 'list'], { env }),
        kb(['ns', 'update', 'docs', '--description', invisible], { env }),
        kb(['ns', 'list', '--json'], { env }),
        kb(['ns', 'update', 'docs', '-d', 'x'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' }) }),
        runProcess('python3', ['-c', 'import pty, sys; pty.spawn(sys.argv[1:])', process.execPath, KB_BIN, 'ns', 'list', '--json'], { env }),
      ]);
      expect(lines(table.stdout), describeRun(table)).toEqual(['KEY    DESCRIPTION', `docs   ${shown}`, 'emoji  family 👨‍👩‍👧 heart ❤️ flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿']);
      expect(lines(block.stdout), describeRun(block)).toEqual(['key:         docs', `description: ${shown}`]);
      expectFailure(expect, failure, 3, 'No such namespace do\\u200bcs');
      // --json keeps the exact text to a pipe; on a terminal, the same JSON value with the invisible ones as \uXXXX.
      expect(jsonOut(expect, json)).toEqual([{ key: 'docs', description: invisible }, { key: 'emoji', description: 'family 👨‍👩‍👧 heart ❤️ flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿' }]);
      expect(onTerminal.code, onTerminal.stderr).toBe(0);
      expect(onTerminal.stdout).toContain('"description": "do\\u200bcs \\ufeffbom soft\\u00adhyphen line\\u2028sep tag\\udb40\\udc41 joined\\u200dx"');
      expect(JSON.parse(onTerminal.stdout.replace(/\r\n/g, '\n'))).toEqual(jsonOut(expect, json));
    } finally {
      await fake.close();
    }
  });

  it('in an error message and its help', async ({ expect }) => {
    const fake = await startFixedServer(404, { success: false, message: `No such namespace ${HOSTILE}`, help: `Try ${HOSTILE}` });
    try {
      const result = await kb(['ns', 'update', 'docs', '-d', 'x'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' }) });
      expectFailure(expect, result, 3, `No such namespace ${HOSTILE_SHOWN}`, `Try ${HOSTILE_SHOWN}`);
    } finally {
      await fake.close();
    }
  });

  it('in auth status, which shows the organization the server names', async ({ expect }) => {
    const fake = await startFixedServer(200, { success: true, data: HOSTILE });
    try {
      const env = isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_0123456789abcdefghij' });
      const [human, json] = await Promise.all([kb(['auth', 'status'], { env }), kb(['auth', 'status', '--json'], { env })]);
      expect(human.code, describeRun(human)).toBe(0);
      expect(lines(human.stdout)).toContain(`organization: ${HOSTILE_SHOWN}`);
      expect(human.stdout).not.toMatch(RAW_CONTROL);
      expect(jsonOut(expect, json)).toMatchObject({ organization: HOSTILE });
    } finally {
      await fake.close();
    }
  });
});

describe.concurrent('mistakes of the user, in words of their own', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a word after a command that takes none: exit 2, "unexpected argument"', async ({ expect }) => {
    const env = isolatedEnv();
    const [list, health] = await Promise.all([kb(['ns', 'list', 'extra'], { env }), kb(['health', 'now', 'please'], { env })]);
    expectFailure(expect, list, 2, 'unexpected argument: extra', 'See `kb ns list --help` for what it takes.');
    expectFailure(expect, health, 2, 'unexpected argument: now', 'See `kb health --help` for what it takes.');
  });

  it('a token typed into argv by mistake is never printed back, and the help says where a token goes', async ({ expect }) => {
    const token = 'kbt_Fcp5lfMPxQI1yiogg3wS5Ut36AhuUubY2brN9nBQTjs';
    const env = isolatedEnv();
    const runs = await Promise.all([
      kb(['auth', 'login', token], { env }),
      kb([token], { env }),
      kb(['auth', 'login', '--url', token], { env }),
      kb(['ns', 'list', `--bogus=${token}`], { env }),
    ]);
    const help = 'That looks like a token: kb never takes one in argv, where other users can read it. Pipe it to `kb auth login --with-token`.';
    for (const result of runs) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stdout + result.stderr, describeRun(result)).not.toContain(token.slice(4, 24));
      expect(result.stderr, describeRun(result)).toContain('kbt_…QTjs');
      expect(lines(result.stderr).at(-1), describeRun(result)).toBe(help);
    }
    expect(lines(runs[0]!.stderr)[0]).toBe('Error: unexpected argument: kbt_…QTjs');
  });

  it('a message of our own (or oclif\'s) keeps its line breaks: escaping is for a server\'s text', async ({ expect }) => {
    const result = await kb(['ns', 'list', '--bogus'], { env: isolatedEnv() });
    expectFailure(expect, result, 2, 'Nonexistent flag: --bogus', 'See `kb ns list --help`.');
    // And its indentation: oclif indents the reason of a flag it could not parse with a tab, shown as a tab.
    const parse = await kb(['serve', '--pool-size', '0'], { env: isolatedEnv() });
    expect(parse.code).toBe(2);
    expect(parse.stderr).toContain('Parsing --pool-size \n\tExpected an integer greater than or equal to 1 but received: 0\n');
    expect(parse.stderr).not.toContain('\\t');
  });

  it('input refused locally names the field and value, and says that nothing was sent', async ({ expect }) => {
    // Every request that reached this server would be answered 500: a leak would show as exit 1 and in the count.
    const trap = await startFixedServer(500, { success: false, message: 'this request should never have been sent' });
    try {
      const env = isolatedEnv({ KB_URL: trap.url, KB_TOKEN: 'kbt_x' });
      const rule = 'a key is 3 to 63 characters, each A-Z, a-z, 0-9, dash (-) or underscore (_)';
      const [key, base, description] = await Promise.all([
        kb(['ns', 'create', 'bad key'], { env }),
        kb(['base', 'delete', 'docs', 'b@d', '--yes'], { env }),
        kb(['ns', 'update', 'docs', '--description', 'x'.repeat(1025)], { env }),
      ]);
      expectFailure(expect, key, 2, `invalid key "bad key": ${rule}: nothing was sent`);
      expectFailure(expect, base, 2, `invalid base "b@d": ${rule}: nothing was sent`);
      expectFailure(expect, description, 2, 'invalid description (1025 characters): a description is 1 to 1024 characters, or null: nothing was sent');
      expect(trap.count()).toBe(0);
    } finally {
      await trap.close();
    }
  });
});

describe.concurrent('the X-Request-Id of a failed request', { timeout: TEST_TIMEOUT_MS }, () => {
  it('is printed with the error under --verbose (or KB_DEBUG=1), for typed commands and kb api alike', async ({ expect }) => {
    const fake = createServer((request, response) => {
      request.resume();
      response.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req-7f3a' });
      response.end(JSON.stringify({ success: false, message: 'Namespace not found' }));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const env = isolatedEnv({ KB_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, KB_TOKEN: 'kbt_x' });
      const [verbose, debug, api, quiet] = await Promise.all([
        kb(['ns', 'update', 'docs', '-d', 'x', '--verbose'], { env }),
        kb(['ns', 'update', 'docs', '-d', 'x'], { env: { ...env, KB_DEBUG: '1' } }),
        kb(['api', 'ns_update', '-f', 'namespace=docs', '--verbose'], { env }),
        kb(['ns', 'update', 'docs', '-d', 'x'], { env }),
      ]);
      for (const result of [verbose, debug, api]) {
        expect(result.code, describeRun(result)).toBe(3);
        expect(lines(result.stderr), describeRun(result)).toEqual([
          expect.stringMatching(/^\* POST \S+\/v1\/ns_update 404 \d+ms$/),
          // A typed command looks for the closest keys after a 404, with one list request, traced too; kb api does not.
          ...(result === api ? [] : [expect.stringMatching(/^\* GET \S+\/v1\/ns_list 404 \d+ms$/)]),
          expect.stringMatching(/^Error: Namespace not found/),
          'Request ID: req-7f3a',
        ]);
      }
      expectFailure(expect, quiet, 3, 'Namespace not found');
    } finally {
      fake.closeAllConnections();
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });
});

/**
 * Runs the built kb with its stdout on `/dev/full` (every write fails with ENOSPC, as on a full disk) or on a pipe
 * whose reader has gone (every write fails with EPIPE, as under `kb ns list | head -1` once head has exited).
 */
function kbWithBrokenStdout(args: readonly string[], env: NodeJS.ProcessEnv, stdout: 'full' | 'closed-pipe'): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const full = stdout === 'full' ? openSync(fullDevice(), 'w') : undefined;
    const child = spawn(process.execPath, [KB_BIN, ...args], { env, stdio: ['ignore', full ?? 'pipe', 'pipe'] });
    if (full !== undefined) closeSync(full);
    // The reader goes away before kb has written anything.
    child.stdout?.destroy();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: '', stderr });
    });
  });
}

describe.concurrent('output that cannot be written', { timeout: TEST_TIMEOUT_MS }, () => {
  const ENOSPC = 'Error: could not write the output to stdout: no space left on the device (ENOSPC)';

  it('on a full disk: one line that says so and exit 1, never a crash with a dump of the bundle', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'full-disk');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs' });
    const runs = [['ns', 'list'], ['ns', 'list', '--json'], ['ns', 'update', 'docs', '-d', 'x'], ['--help'], ['ns', 'list', '--help'], ['--version']];
    const results = await Promise.all(runs.map((args) => kbWithBrokenStdout(args, env, 'full')));
    results.forEach((result, index) => {
      const shown = `kb ${runs[index]!.join(' ')}\n${describeRun(result)}`;
      expect(result.code, shown).toBe(1);
      // What goes to stderr anyway (the status line of an update) stays; the failure is said once, at the end.
      const said = lines(result.stderr);
      expect(said.at(-1), shown).toBe(ENOSPC);
      expect(said.filter((line) => line.startsWith('Error')), shown).toEqual([ENOSPC]);
      expect(result.stderr, shown).not.toContain('Node.js');
    });
  });

  it('on a full disk, a command that printed nothing keeps its own exit code and error', async ({ expect }) => {
    const result = await kbWithBrokenStdout(['ns', 'list'], isolatedEnv(), 'full');
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(/^Error: no kb deployment is configured\n/);
    expect(result.stderr).not.toContain('could not write');
  });

  it('to a reader that went away (| head): nothing to tell, the command ends as it would have', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'gone-reader');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs' });
    const runs = [['ns', 'list'], ['ns', 'list', '--json'], ['--help'], ['--version']];
    const results = await Promise.all(runs.map((args) => kbWithBrokenStdout(args, env, 'closed-pipe')));
    results.forEach((result, index) => {
      const shown = `kb ${runs[index]!.join(' ')}\n${describeRun(result)}`;
      expect(result.code, shown).toBe(0);
      expect(result.stderr, shown).toBe('');
    });
  });
});
