import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, killedAfterEach, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE } from '../helpers/database.js';
import { withoutWatch } from '../helpers/watch.js';

// kb ns list --watch, kb base list NS --watch and kb wait (docs/contract.md, Live changes), the built CLI against the
// built kb serve on the engine under test, and against a deployment without GET /v1/watch.

const running = killedAfterEach();
const databases = droppedAfterAll();
const WAIT = { timeout: 30_000, interval: 100 };

interface Served {
  server: ServeProcess;
  admin: string;
  /** KB_URL and KB_TOKEN set: what another process of the user runs with. */
  cli: NodeJS.ProcessEnv;
}

async function serve(): Promise<Served> {
  const database = await createTestDatabase();
  databases.push(database);
  const env = isolatedEnv(database.env);
  const server = await startServe(['--admin-port', '0'], env);
  running.push(server);
  const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
  const created = await runKb(['serve', 'token', 'create', '--org', 'live'], { env });
  expect(created.code, created.stderr).toBe(0);
  const token = created.stdout.trim().split('\n').at(-1) as string;
  return { server, admin, cli: { ...env, KB_URL: server.url, KB_TOKEN: token } };
}

/** The streams of GET /v1/watch open on the server now (kb_watchers): a kb wait is watching once it counts. */
async function watchers(admin: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith('kb_watchers '));
  return Number(line?.split(' ')[1] ?? 0);
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function start(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [KB_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  running.push({ child, url: '', stdout: () => out, stderr: () => err, exited: exited.then((code) => ({ code, signal: null })) });
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function kbOk(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const result = await runKb(args, { env });
  expect(result.code, result.stderr).toBe(0);
}

describe(`kb ns list --watch, kb base list --watch and kb wait (${ENGINE})`, () => {
  it('--watch prints the list, then each change made after it, as lines or as NDJSON', async () => {
    const { cli } = await serve();
    await kbOk(['ns', 'create', 'docs'], cli);
    await kbOk(['base', 'create', 'docs', 'faq'], cli);
    const table = start(['ns', 'list', '--watch'], cli);
    const json = start(['ns', 'list', '-w', '--json'], cli);
    const bases = start(['base', 'list', 'docs', '--watch'], cli);
    await expect.poll(() => table.stdout(), WAIT).toContain('docs');
    await expect.poll(() => json.stdout(), WAIT).toContain('\n');
    await expect.poll(() => bases.stdout(), WAIT).toContain('faq');
    await kbOk(['ns', 'create', 'later'], cli);
    await kbOk(['base', 'create', 'docs', 'howto'], cli);
    await kbOk(['base', 'delete', 'docs', 'faq', '--yes'], cli);
    await expect.poll(() => table.stdout(), WAIT).toContain('created namespace later\n');
    await expect.poll(() => bases.stdout(), WAIT).toContain('deleted base docs/faq\n');
    await expect.poll(() => json.stdout().split('\n').length, WAIT).toBeGreaterThan(2);
    expect(table.stdout()).toMatch(/^KEY +DESCRIPTION\ndocs\s*\ncreated namespace later\n$/);
    expect(bases.stdout()).toMatch(/^KEY +DESCRIPTION\nfaq\s*\ncreated base docs\/howto\ndeleted base docs\/faq\n$/);
    const [list, change] = json.stdout().trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(list).toEqual([{ key: 'docs', description: null }]);
    expect(change).toMatchObject({ type: 'created', kind: 'namespace', object: { key: 'later', description: null } });
    expect((change as { cursor: unknown }).cursor).toMatch(/^\d+$/);
    for (const watching of [table, json, bases]) {
      watching.child.kill('SIGINT');
      expect(await watching.exited).toBe(130);
    }
  }, 90_000);

  it('--watch of the bases of a namespace that does not exist exits 3 as the list does; --query does not go with --watch (exit 2)', async () => {
    const { cli } = await serve();
    const missing = await runKb(['base', 'list', 'nope', '--watch'], { env: cli });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('Namespace nope not found');
    const query = await runKb(['ns', 'list', '--watch', '--query', '[].key'], { env: cli });
    expect(query.code).toBe(2);
    expect(query.stderr).toContain('--query cannot be used with --watch');
  });

  it('kb wait returns when another process creates the namespace or base, or deletes it; at once when it holds already', async () => {
    const { cli, admin } = await serve();
    const ns = start(['wait', 'ns', 'docs'], cli);
    const base = start(['wait', 'base', 'docs/faq', '--timeout', '1m'], cli);
    // Both are watching (the state read, nothing there yet) before the other process writes.
    await expect.poll(() => watchers(admin), WAIT).toBe(2);
    await kbOk(['ns', 'create', 'docs'], cli);
    expect(await ns.exited).toBe(0);
    expect(ns.stderr()).toBe('namespace docs exists\n');
    await kbOk(['base', 'create', 'docs', 'faq'], cli);
    expect(await base.exited).toBe(0);
    expect(base.stderr()).toBe('base docs/faq exists\n');

    const already = await runKb(['wait', 'base', 'docs', 'faq'], { env: cli });
    expect([already.code, already.stderr]).toEqual([0, 'base docs/faq exists\n']);

    await expect.poll(() => watchers(admin), WAIT).toBe(0);
    const gone = start(['wait', 'base', 'docs', 'faq', '--for', 'deleted'], cli);
    await expect.poll(() => watchers(admin), WAIT).toBe(1);
    await kbOk(['base', 'delete', 'docs', 'faq', '--yes'], cli);
    expect(await gone.exited).toBe(0);
    expect(gone.stderr()).toBe('base docs/faq does not exist\n');
  }, 90_000);

  it('kb wait exits 7 when the condition does not hold within --timeout; bad flags exit 2', async () => {
    const { cli } = await serve();
    const late = await runKb(['wait', 'ns', 'never', '--timeout', '300ms'], { env: cli });
    expect(late.code).toBe(7);
    expect(late.stderr).toContain('Timed out after 300ms: namespace never was not created');
    for (const args of [['wait', 'ns', 'docs', '--for', 'gone'], ['wait', 'ns', 'docs', '--timeout', 'soon'], ['wait', 'base', 'docs'], ['wait', 'ns', 'Not A Key']]) {
      const result = await runKb(args, { env: cli });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
    }
  });

  it('against a deployment without GET /v1/watch, --watch and kb wait list every 2 s instead', async () => {
    const { cli } = await serve();
    await kbOk(['ns', 'create', 'docs'], cli);
    const old = await withoutWatch(cli.KB_URL as string);
    try {
      const viaOld = { ...cli, KB_URL: old.url };
      const watch = start(['ns', 'list', '--watch'], viaOld);
      const wait = start(['wait', 'ns', 'later'], viaOld);
      await expect.poll(() => watch.stdout(), WAIT).toContain('docs');
      await kbOk(['ns', 'create', 'later'], cli);
      await expect.poll(() => watch.stdout(), WAIT).toContain('created namespace later\n');
      expect(await wait.exited).toBe(0);
      expect(wait.stderr()).toBe('namespace later exists\n');
      await kbOk(['ns', 'delete', 'later', '--yes'], cli);
      await expect.poll(() => watch.stdout(), WAIT).toContain('deleted namespace later\n');
      expect(watch.stdout()).toMatch(/^KEY +DESCRIPTION\ndocs\s*\ncreated namespace later\ndeleted namespace later\n$/);
      watch.child.kill('SIGINT');
      expect(await watch.exited).toBe(130);
      const timedOut = await runKb(['wait', 'ns', 'never', '--timeout', '500ms'], { env: viaOld });
      expect(timedOut.code).toBe(7);
    } finally {
      old.server.closeAllConnections();
      old.server.close();
    }
  }, 90_000);
});
