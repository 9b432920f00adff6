import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, killedAfterEach, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { withoutWatch } from '../helpers/watch.js';

// kb watch (docs/contract.md, Live changes), the built CLI against the built kb serve.

const running = killedAfterEach();

async function serve(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(args, env);
  running.push(server);
  return server;
}

/** A kb serve over a new data dir, with a token for `org` made before it starts, and the env the CLI reaches it with. */
async function served(org: string, name?: string) {
  const env = isolatedEnv();
  const created = await runKb(['serve', 'token', 'create', '--org', org, ...(name === undefined ? [] : ['--name', name])], { env });
  expect(created.code, created.stderr).toBe(0);
  const server = await serve(env);
  return { env, server, cli: { ...env, KB_URL: server.url, KB_TOKEN: created.stdout.trim().split('\n').at(-1) as string } };
}

/** kb watch running, its stdout as lines as they come. */
function watching(args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [KB_BIN, 'watch', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, lines: () => out.split('\n').filter((line) => line !== ''), stderr: () => err };
}

describe('kb watch', () => {
  it('prints each change as NDJSON with its cursor, resumes across a server restart from its last cursor, and ends with 130 on Ctrl-C', async () => {
    const { env, server: first, cli } = await served('cli');
    const port = new URL(first.url).port;
    const watch = spawn(process.execPath, [KB_BIN, 'watch', '--json'], { env: cli, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    watch.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => watch.on('exit', (code) => resolve(code)));
    const lines = () => out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { cursor: string; type: string; kind: string; object: { key: string } });
    // It is watching once a change made now reaches it.
    await expect.poll(async () => {
      await runKb(['ns', 'create', `probe${lines().length}${Date.now() % 1000}`], { env: cli });
      return lines().length;
    }, { timeout: 20_000 }).toBeGreaterThan(0);
    expect((await runKb(['ns', 'create', 'docs'], { env: cli })).code).toBe(0);
    expect((await runKb(['base', 'create', 'docs', 'faq'], { env: cli })).code).toBe(0);
    await expect.poll(() => lines().some((line) => line.object.key === 'faq'), { timeout: 20_000 }).toBe(true);
    first.child.kill('SIGTERM');
    await first.exited;
    const second = await serve(env, ['--port', port]);
    expect((await runKb(['ns', 'create', 'after-restart'], { env: { ...cli, KB_URL: second.url } })).code).toBe(0);
    await expect.poll(() => lines().some((line) => line.object.key === 'after-restart'), { timeout: 20_000 }).toBe(true);
    watch.kill('SIGINT');
    expect(await exited).toBe(130);
    const cursors = lines().map((line) => Number(line.cursor));
    expect(cursors).toEqual(Array.from({ length: cursors.length }, (_, n) => (cursors[0] as number) + n));
    expect(lines().slice(-3).map((line) => [line.type, line.kind, line.object.key])).toEqual([
      ['created', 'namespace', 'docs'],
      ['created', 'base', 'faq'],
      ['created', 'namespace', 'after-restart'],
    ]);
  }, 90_000);

  it('prints one plain line per change; NAMESPACE narrows it to that namespace and its bases; --since resumes after a cursor', async () => {
    const { cli } = await served('lines');
    // Cursors 1 to 7, in this order.
    for (const args of [
      ['ns', 'create', 'docs'],
      ['base', 'create', 'docs', 'faq'],
      ['ns', 'create', 'other'],
      ['base', 'create', 'other', 'notes'],
      ['base', 'update', 'docs', 'faq', '--description', 'Answers'],
      ['base', 'delete', 'docs', 'faq', '--yes'],
      ['ns', 'update', 'other', '--description', 'Elsewhere'],
    ]) expect((await runKb(args, { env: cli })).code).toBe(0);
    const narrowed = watching(['docs', '--since', '0'], cli);
    const resumed = watching(['--since', '4'], cli);
    await expect.poll(() => narrowed.lines().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    await expect.poll(() => resumed.lines().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    // A change made now comes after them, on the stream that covers it only.
    expect((await runKb(['base', 'create', 'docs', 'guide'], { env: cli })).code).toBe(0);
    await expect.poll(() => narrowed.lines().length, { timeout: 20_000 }).toBe(5);
    await expect.poll(() => resumed.lines().length, { timeout: 20_000 }).toBe(4);
    for (const each of [narrowed, resumed]) each.child.kill('SIGINT');
    expect([await narrowed.exited, await resumed.exited]).toEqual([130, 130]);
    expect(narrowed.lines()).toEqual(['created namespace docs', 'created base docs/faq', 'updated base docs/faq', 'deleted base docs/faq', 'created base docs/guide']);
    expect(resumed.lines()).toEqual(['updated base docs/faq', 'deleted base docs/faq', 'updated namespace other', 'created base docs/guide']);
  }, 90_000);

  it('ends with the 401 (exit 4) once its token is revoked, rather than watching on', async () => {
    const { env, cli } = await served('revoked', 'watcher');
    expect((await runKb(['ns', 'create', 'docs'], { env: cli })).code).toBe(0);
    const watch = watching(['--since', '0'], cli);
    await expect.poll(() => watch.lines(), { timeout: 20_000 }).toEqual(['created namespace docs']);
    expect((await runKb(['serve', 'token', 'revoke', 'watcher'], { env })).code).toBe(0);
    expect(await watch.exited).toBe(4);
    expect(watch.stderr()).toContain('Error: Authentication required');
    expect(watch.stderr()).toContain('The token came from KB_TOKEN');
  }, 90_000);

  it('against a deployment without /v1/watch lists every 2 s and prints what changed, without cursors; --since there exits 2', async () => {
    const { server, cli } = await served('polled');
    const kb = async (args: string[]) => expect((await runKb(args, { env: cli })).code).toBe(0);
    await kb(['ns', 'create', 'docs']);
    await kb(['base', 'create', 'docs', 'faq']);
    await kb(['base', 'create', 'docs', 'old']);
    const old = await withoutWatch(server.url);
    try {
      const viaOld = { ...cli, KB_URL: old.url };
      const all = watching(['--json'], viaOld);
      const docs = watching(['docs'], viaOld);
      // What was there at the first list is the state it starts from, not a change: give both time to list it.
      await new Promise((done) => setTimeout(done, 3000));
      await kb(['ns', 'create', 'other']);
      await kb(['base', 'create', 'other', 'guide']);
      await kb(['base', 'update', 'docs', 'faq', '--description', 'Answers']);
      await kb(['base', 'delete', 'docs', 'old', '--yes']);
      await expect.poll(() => docs.lines(), { timeout: 20_000 }).toEqual(['updated base docs/faq', 'deleted base docs/old']);
      await expect.poll(() => all.lines().length, { timeout: 20_000 }).toBe(4);
      // Two changes in one interval are told in the order of their kinds (namespaces created first), not of their commits.
      expect(all.lines().map((line) => JSON.parse(line) as unknown)).toEqual(expect.arrayContaining([
        { cursor: null, type: 'created', kind: 'namespace', object: { key: 'other', description: null } },
        { cursor: null, type: 'created', kind: 'base', object: { namespace: 'other', key: 'guide', description: null } },
        { cursor: null, type: 'updated', kind: 'base', object: { namespace: 'docs', key: 'faq', description: 'Answers' } },
        { cursor: null, type: 'deleted', kind: 'base', object: { namespace: 'docs', key: 'old', description: null } },
      ]));
      for (const watch of [all, docs]) {
        watch.child.kill('SIGINT');
        expect(await watch.exited).toBe(130);
      }
      const resumed = await runKb(['watch', '--since', '3'], { env: viaOld });
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toContain(`--since needs GET /v1/watch, which ${old.url} does not serve`);
    } finally {
      old.server.close();
    }
  }, 90_000);
});
