import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import type { runTui as RunTui } from '../../src/tui/index.js';
import { isolatedEnv, ROOT, runKb } from '../helpers/cli.js';
import { runRecordingSources } from '../helpers/imports.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import type * as Harness from './harness.js';

const ENTER_ALTERNATE_SCREEN = '\u001B[?1049h';
const LEAVE_ALTERNATE_SCREEN = '\u001B[?1049l';
const ENABLE_BRACKETED_PASTE = '\u001B[?2004h';
const DISABLE_BRACKETED_PASTE = '\u001B[?2004l';

let server: TestServer;
let client: KbClient;
let runTui: typeof RunTui;
let FakeTerminal: typeof Harness.FakeTerminal;
/**
 * kb tui refuses to run in CI (Ink draws no frame there until it exits), so runTui is run here as on a person's
 * terminal: Ink reads CI when it is loaded, so the TUI (and the harness, which loads Ink too) is loaded only once CI is
 * cleared, and CI is put back after.
 */
const ciVariables = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
beforeAll(async () => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  ({ runTui } = await import('../../src/tui/index.js'));
  const harness = await import('./harness.js');
  FakeTerminal = harness.FakeTerminal;
  server = await startTestServer({ org: 'tui-run' });
  client = (await harness.orgClient(server, 'run')).client;
  await client.nsCreate({ key: 'docs' });
});
afterAll(async () => {
  for (const [name, value] of Object.entries(ciVariables)) if (value !== undefined) process.env[name] = value;
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
    expect(terminal.stdout.written.startsWith(ENTER_ALTERNATE_SCREEN + ENABLE_BRACKETED_PASTE)).toBe(true);
    await sleep(50);
    expect(finished).toBe(false);

    terminal.press('q');
    await done;
    expect(terminal.stdout.written.endsWith(DISABLE_BRACKETED_PASTE + LEAVE_ALTERNATE_SCREEN)).toBe(true);
    expect(terminal.stdin.raw).toBe(false);
  });

  it('resolves on ctrl-c too', async () => {
    const terminal = new FakeTerminal();
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    await until(() => terminal.stdin.raw, 'the app to listen for keys');
    terminal.press('\u0003');
    await done;
    expect(terminal.stdout.written.endsWith(DISABLE_BRACKETED_PASTE + LEAVE_ALTERNATE_SCREEN)).toBe(true);
  });

  it('quits on ctrl-c read with other keys, after them, and turns bracketed paste off', async () => {
    const terminal = new FakeTerminal();
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    await until(() => terminal.stdin.raw, 'the app to listen for keys');
    terminal.press('jj\u0003');
    await done;
    expect(terminal.stdout.written.endsWith(DISABLE_BRACKETED_PASTE + LEAVE_ALTERNATE_SCREEN)).toBe(true);
  });

  it('draws the list in its first frame when it came in while Ink loaded (no loading frame in between)', async () => {
    const terminal = new FakeTerminal();
    const namespaces = client.nsList();
    const organization = client.auth();
    await Promise.all([namespaces, organization]);
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, organization, namespaces, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    try {
      // Ink may take raw mode before its first (throttled) frame is written: wait for the frame itself.
      await until(() => terminal.stdin.raw && terminal.stdout.written.includes('run › namespaces (1)'), 'the first frame');
      expect(terminal.stdout.written).toContain('docs');
      // No frame before it said it was loading: the list was there from the first one.
      expect(terminal.stdout.written).not.toContain('Loading namespaces');
    } finally {
      terminal.press('q');
      await done;
    }
  });

  it.each([
    ['typed key by key', [':', 'q', '\r']],
    ['read at once (typed quickly, or over a slow link)', [':q\r']],
  ])(':q and enter quit too, %s', async (_how, reads) => {
    const terminal = new FakeTerminal();
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    await until(() => terminal.stdin.raw && terminal.stdout.written.includes('docs'), 'the list');
    for (const read of reads) terminal.press(read);
    await done;
    expect(terminal.stdout.written.endsWith(LEAVE_ALTERNATE_SCREEN)).toBe(true);
  });

  it('ctrl-c in a form holding typed text asks first: any other key goes back, y quits; with nothing typed it quits at once', async () => {
    const terminal = new FakeTerminal();
    let finished = false;
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() }).then(() => {
      finished = true;
    });
    await until(() => terminal.stdin.raw && terminal.stdout.written.includes('docs'), 'the list');
    terminal.press('n');
    await until(() => terminal.stdout.written.includes('New namespace'), 'the form');
    terminal.press('abc');
    terminal.press('\u0003');
    await until(() => terminal.stdout.written.includes('Quit and throw away what was typed?'), 'the question');
    expect(finished).toBe(false);
    const asked = terminal.stdout.written.length;
    terminal.press('x');
    await until(() => terminal.stdout.written.length > asked && terminal.stdout.written.slice(asked).includes('enter/tab'), 'the form again');
    await sleep(50);
    expect(finished).toBe(false);
    terminal.press('\u0003');
    terminal.press('y');
    await done;
    expect(await client.nsList()).toEqual([{ key: 'docs', description: null }]);

    const again = new FakeTerminal();
    const quitting = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...again.streams() });
    await until(() => again.stdin.raw && again.stdout.written.includes('docs'), 'the list');
    again.press('n');
    await until(() => again.stdout.written.includes('New namespace'), 'the form');
    again.press('\u0003');
    await quitting;
  });

  it('c writes the key to the clipboard of the terminal as OSC 52', async () => {
    const terminal = new FakeTerminal();
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: 'false', ...terminal.streams() });
    await until(() => terminal.stdin.raw && terminal.stdout.written.includes('docs'), 'the list');
    terminal.press('c');
    await until(() => terminal.stdout.written.includes("Sent docs to the terminal's clipboard (OSC 52)"), 'the status');
    expect(terminal.stdout.written).toContain(`\u001B]52;c;${Buffer.from('docs').toString('base64')}\u0007`);
    terminal.press('q');
    await done;
  });

  it('E gives the editor the terminal as a shell leaves it (main screen, not raw), then takes it back and redraws', async () => {
    const terminal = new FakeTerminal();
    const dir = tempDir('kb-editor-');
    const script = join(dir, 'editor');
    writeFileSync(script, `#!/bin/sh\nprintf 'From the editor\\n' > "$1"\n`);
    chmodSync(script, 0o755);
    const states: string[] = [];
    terminal.stdin.setRawMode = function (this: { raw: boolean }, raw: boolean) {
      this.raw = raw;
      states.push(raw ? 'raw' : 'cooked');
    };
    const done = runTui({ client, deployment: { profile: 'p', url: server.url }, color: false, refreshSeconds: 0, editor: script, ...terminal.streams() });
    await until(() => terminal.stdin.raw && terminal.stdout.written.includes('docs'), 'the list');
    const before = terminal.stdout.written.length;
    terminal.press('E');
    await until(() => terminal.stdout.written.includes('Saved the description of namespace docs.'), 'the save');
    const during = terminal.stdout.written.slice(before);
    const left = during.indexOf(LEAVE_ALTERNATE_SCREEN);
    const entered = during.indexOf(ENTER_ALTERNATE_SCREEN);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(entered).toBeGreaterThan(left);
    // Raw mode off for the editor, on again after it; and the whole list drawn again after the screen came back.
    expect(states.slice(-2)).toEqual(['cooked', 'raw']);
    expect(during.slice(entered)).toContain('docs');
    expect((await client.nsList()).find((ns) => ns.key === 'docs')?.description).toBe('From the editor');
    terminal.press('q');
    await done;
    rmSync(dir, { recursive: true, force: true });
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

  it('refuses before it loads Ink or React: no source of theirs, nor of src/tui, in what the bundle loaded', async () => {
    const { result, sources } = await runRecordingSources(['tui'], env());
    expect(result.code, result.stderr).toBe(2);
    // The command ran (its own source is in what was loaded), and refused before the lazy import of the UI.
    expect(sources).toContain('src/commands/tui.ts');
    expect(sources.filter((source) => /(^|\/)node_modules\/(ink|react|react-reconciler|yoga-layout)\/|^src\/tui\//.test(source))).toEqual([]);
  });

  it('the check above can match: the tui chunk, where the bundle puts the lazy import, holds src/tui, yoga-layout and the stand-ins of Ink and JSX', () => {
    const bundles = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
    const chunks = Object.entries(bundles).filter(([file]) => /^chunks\/tui-[A-Z0-9]+\.js$/.test(file));
    expect(chunks).toHaveLength(1);
    // A node_modules that is a link (a git worktree's, pnpm's) is listed by where it leads: "../main/node_modules/ink/…".
    const inputs = chunks[0]?.[1].map((source) => source.replace(/^(\.\.\/)+[^/]+\/node_modules\//, 'node_modules/'));
    expect(inputs).toEqual(expect.arrayContaining(['node_modules/yoga-layout/dist/src/index.js', 'vendor:ink', 'vendor:react/jsx-runtime', 'src/tui/app.tsx']));
    // React's own stand-in is a chunk apart: src/tui/load.ts imports it first, so that the TUI's vendor bundle is
    // compiled before the TUI changes V8's flags.
    expect(Object.entries(bundles).filter(([file, sources]) => /^chunks\/[\w-]+\.js$/.test(file) && sources.includes('vendor:react') && !sources.includes('vendor:ink'))).toHaveLength(1);
    // Ink and React themselves are in the vendor bundle (scripts/vendor.mjs), which reports each module as it runs it.
    const vendor = bundles['vendor/vendor-tui.cjs']?.map((source) => source.replace(/^(\.\.\/)+[^/]+\/node_modules\//, 'node_modules/'));
    expect(vendor).toEqual(expect.arrayContaining(['node_modules/ink/build/ink.js', 'node_modules/react/index.js']));
    expect(bundles['commands/tui.js']?.some((source) => /node_modules\/(ink|react)\/|^src\/tui\//.test(source))).toBe(false);
  });

  it('refuses a --refresh that is not a whole number of seconds, 0 or more, with exit 2', async () => {
    const cases: [string, string][] = [['-1', 'Expected an integer greater than or equal to 0 but received: -1'], ['1.5', 'Expected an integer but received: 1.5']];
    for (const [value, says] of cases) {
      const result = await runKb(['tui', '--refresh', value], { env: env() });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(says);
    }
  });

  it('exits 2 under CI, where Ink would draw nothing', async () => {
    for (const [name, value] of [['CI', 'true'], ['CONTINUOUS_INTEGRATION', '1']] as const) {
      const result = await runKb(['tui'], { env: env({ [name]: value }) });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`Error: kb tui is interactive and does not run in CI (${name} is set)`);
    }
  });
});
