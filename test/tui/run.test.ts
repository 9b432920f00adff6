import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import { runTui } from '../../src/tui/index.js';
import { isolatedEnv, ROOT, runKb } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { FakeTerminal, orgClient } from './harness.js';

const ENTER_ALTERNATE_SCREEN = '\u001B[?1049h';
const LEAVE_ALTERNATE_SCREEN = '\u001B[?1049l';

let server: TestServer;
let client: KbClient;
beforeAll(async () => {
  server = await startTestServer({ org: 'tui-run' });
  client = (await orgClient(server, 'run')).client;
  await client.nsCreate({ key: 'docs' });
});
afterAll(async () => {
  await server?.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** An environment for the built kb that is not in CI (which kb tui refuses), with a deployment configured. */
function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return isolatedEnv({ CI: undefined, CONTINUOUS_INTEGRATION: undefined, KB_URL: server.url, KB_TOKEN: server.token, ...extra });
}

describe('runTui, the plain function behind kb tui', () => {
  it('draws on the alternate screen, resolves when q is pressed, and gives the screen back', async () => {
    const terminal = new FakeTerminal();
    let finished = false;
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() }).then(() => {
      finished = true;
    });
    await until(() => terminal.stdin.raw, 'the app to listen for keys');
    expect(terminal.stdout.written.startsWith(ENTER_ALTERNATE_SCREEN)).toBe(true);
    await sleep(50);
    expect(finished).toBe(false);

    terminal.press('q');
    await done;
    expect(terminal.stdout.written.endsWith(LEAVE_ALTERNATE_SCREEN)).toBe(true);
    expect(terminal.stdin.raw).toBe(false);
  });

  it('resolves on ctrl-c too', async () => {
    const terminal = new FakeTerminal();
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    await until(() => terminal.stdin.raw, 'the app to listen for keys');
    terminal.press('\u0003');
    await done;
    expect(terminal.stdout.written.endsWith(LEAVE_ALTERNATE_SCREEN)).toBe(true);
  });

  it('without a terminal it rejects with a usage error (exit 2) and draws nothing', async () => {
    const terminal = new FakeTerminal();
    terminal.stdin.isTTY = false;
    await expect(runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() })).rejects.toMatchObject({
      exitCode: 2,
      message: 'kb tui needs a terminal: stdin and stdout must both be a TTY',
    });
    expect(terminal.stdout.written).toBe('');
  });
});

describe('kb tui, the built command, where it cannot run', () => {
  it('exits 2 with a clear message when stdin and stdout are not a terminal, never with Ink\'s raw-mode crash', async () => {
    const result = await runKb(['tui'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'Error: kb tui needs a terminal: stdin and stdout must both be a TTY\n' +
        'Run it in an interactive terminal; in scripts use `kb ns list` and `kb base list` (with --json).\n',
    );
  });

  it('refuses before it loads Ink or React', async () => {
    const log = join(tempDir('kb-imports-'), 'imports.log');
    const result = await runKb(['tui'], {
      env: env({ KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')}` }),
    });
    expect(result.code, result.stderr).toBe(2);
    const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(loaded.some((url) => url.endsWith('/dist/commands/tui.js'))).toBe(true);
    expect(loaded.filter((url) => /\/node_modules\/(ink|react|react-reconciler)\/|\/dist\/tui\//.test(url))).toEqual([]);
  });

  it('exits 2 under CI, where Ink would draw nothing', async () => {
    for (const [name, value] of [['CI', 'true'], ['CONTINUOUS_INTEGRATION', '1']] as const) {
      const result = await runKb(['tui'], { env: env({ [name]: value }) });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`Error: kb tui is interactive and does not run in CI (${name} is set)`);
    }
  });
});
