import { copyFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, logLines, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE } from '../helpers/database.js';
import { halfSentCreate, onConnectionsOfTheirOwn } from '../helpers/wire.js';

/** `kb serve --admin-port` (docs/contract.md, "Operating behind a load balancer"), as a built process on each engine. */

const running = killedAfterEach();
const databases = droppedAfterAll();

interface Served {
  server: ServeProcess;
  admin: string;
  env: NodeJS.ProcessEnv;
}

async function serve(args: string[] = [], env?: NodeJS.ProcessEnv): Promise<Served> {
  if (env === undefined) {
    const database = await createTestDatabase();
    databases.push(database);
    env = isolatedEnv(database.env);
  }
  const server = await startServe(['--admin-port', '0', ...args], env);
  running.push(server);
  const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1];
  expect(admin, server.stderr()).toBeDefined();
  return { server, admin: admin as string, env };
}

async function newToken(env: NodeJS.ProcessEnv, org: string): Promise<string> {
  const result = await runKb(['serve', 'token', 'create', '--org', org], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').at(-1) as string;
}

async function get(url: string, token?: string): Promise<{ status: number; text: string; type: string | null }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

async function post(base: string, token: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${base}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

/** The value of one sample of a scrape, by its name and labels as written (e.g. `{route="ns_list",result="hit"}`); 0 when absent. */
function sample(metrics: string, name: string, labels = ''): number {
  const line = metrics.split('\n').find((text) => text.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(admin: string): Promise<string> {
  const reply = await get(`${admin}/metrics`);
  expect(reply.status).toBe(200);
  return reply.text;
}

describe(`kb serve --admin-port (${ENGINE})`, () => {
  it('answers /live and /ready with 200 on the admin port, and none of /live, /ready, /metrics on the API port', async () => {
    const { server, admin } = await serve();
    expect((await get(`${admin}/live`)).status).toBe(200);
    expect(await get(`${admin}/ready`)).toMatchObject({ status: 200, text: 'ready\n' });
    const metrics = await get(`${admin}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toContain('process_cpu_seconds_total');
    for (const path of ['/live', '/ready', '/metrics', '/v1/live', '/v1/ready', '/v1/metrics']) {
      expect((await get(`${server.url}${path}`)).status, path).toBe(404);
    }
    expect((await get(`${admin}/v1/health`)).status).toBe(404);
    expect(new URL(admin).hostname).toBe('127.0.0.1');
    expect(new URL(admin).port).not.toBe(new URL(server.url).port);
  });

  it('on SIGTERM with --drain-delay: /ready 503 and /live 200 at once, the API serving for the delay, a request in flight finished, then exit 0', async () => {
    const { server, admin, env } = await serve(['--drain-delay', '4s']);
    const token = await newToken(env, 'drain');
    // A request in flight: its headers sent, its body not yet (the rest comes within the 10 s request timeout).
    const create = await halfSentCreate(server.url, token, 'sent-across-the-drain');
    server.child.kill('SIGTERM');
    await expect.poll(async () => (await get(`${admin}/ready`)).status).toBe(503);
    expect((await get(`${admin}/ready`)).text).toMatch(/^not ready: draining/);
    expect((await get(`${admin}/live`)).status).toBe(200);
    // The drain is on, and the API still answers new requests (on new connections) until it is over.
    // The log writes within 200 ms (its batch), so the line may come a moment after /ready turned.
    await expect.poll(() => server.stderr()).toMatch(/SIGTERM, draining/);
    expect((await get(`${server.url}/v1/ns_list`, token)).status).toBe(200);
    expect(server.stderr()).not.toMatch(/finishing requests in flight/);
    // Then the shutdown of today: the request in flight is finished, and the admin port answers until the exit.
    await expect.poll(() => server.stderr(), { timeout: 15_000 }).toMatch(/finishing requests in flight/);
    expect((await get(`${admin}/live`)).status).toBe(200);
    expect((await get(`${admin}/ready`)).status).toBe(503);
    create.finish();
    await expect.poll(create.reply, { timeout: 10_000 }).toMatch(/\r\n\r\n\{.*\}$/s);
    expect(create.reply().split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    create.close();
    expect((await server.exited).code).toBe(0);
  }, 60_000);

  it('does not wait the drain delay on SIGINT (a person at the terminal), and takes 0s as no delay', async () => {
    const { server } = await serve(['--drain-delay', '120s']);
    server.child.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
    expect(server.stderr()).not.toMatch(/draining/);
    const zero = await serve(['--drain-delay', '0s']);
    zero.server.child.kill('SIGTERM');
    expect((await zero.server.exited).code).toBe(0);
    expect(zero.server.stderr()).not.toMatch(/draining/);
  });

  it('exits at once on a second signal during the drain delay', async () => {
    const { server } = await serve(['--drain-delay', '120s']);
    server.child.kill('SIGTERM');
    await expect.poll(() => server.stderr()).toMatch(/SIGTERM, draining/);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(143);
  });

  it('says it listens with none of its own warm-up requests logged (at info) or counted, then logs and counts a client\'s first request as its first', async () => {
    // At the default level, info: every request a line.
    const { server, admin } = await serve(['--log-level', 'info', '--warm-up']);
    const requestLines = () => logLines(server.stderr()).filter((line) => line.msg === 'request');
    expect(requestLines()).toEqual([]);
    const before = await scrape(admin);
    expect(before).not.toMatch(/^kb_http_requests_total\{/m);
    expect(before).not.toMatch(/^kb_http_request_duration_seconds_count\{/m);
    const reply = await fetch(`${server.url}/v1/health`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ success: true, data: 'alive' });
    // The warm-up's requests took no request id of the counter's: this one is the first.
    const id = reply.headers.get('x-request-id') as string;
    expect(id).toMatch(/^[0-9a-f]{8}-1$/);
    await expect.poll(requestLines).toEqual([expect.objectContaining({ reqId: id, method: 'GET', path: '/v1/health', status: 200 })]);
    const after = await scrape(admin);
    expect(sample(after, 'kb_http_requests_total', '{route="health",method="GET",status="200"}')).toBe(1);
    expect(sample(after, 'kb_http_request_duration_seconds_count', '{route="health"}')).toBe(1);
  });

  it('says at debug how many warm-up requests were answered before it said it listens; --no-warm-up sends none', async () => {
    // Its own lines, in order, up to the one that says it listens (which startServe waited for).
    const untilListening = (stderr: string) => logLines(stderr).map((line) => `${line.level} ${line.msg}`).filter((line) => /^(debug warm-up|info listening)/.test(line));
    const warmed = await serve(['--log-level', 'debug', '--warm-up']);
    expect(untilListening(warmed.server.stderr())).toEqual([expect.stringMatching(/^debug warm-up: [1-9]\d* of 1000 requests answered in \d+ ms$/), expect.stringMatching(/^info listening on /)]);
    const cold = await serve(['--log-level', 'debug', '--no-warm-up']);
    expect(untilListening(cold.server.stderr())).toEqual([expect.stringMatching(/^info listening on /)]);
    // Served all the same, and its first client's request is its first.
    const reply = await fetch(`${cold.server.url}/v1/health`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-1$/);
  });

  it('counts requests by route name, method and status (401 included), times them by route, and counts commits, replays and kept lists', async () => {
    const { server, admin, env } = await serve();
    const token = await newToken(env, 'metered');
    for (let i = 0; i < 3; i++) expect((await get(`${server.url}/v1/ns_list`, token)).status).toBe(200);
    expect((await get(`${server.url}/v1/ns_list`)).status).toBe(401);
    expect((await get(`${server.url}/v1/ns_list`, 'kbt_not-a-token')).status).toBe(401);
    expect((await get(`${server.url}/v1/base_list?namespace=missing-ns`, token)).status).toBe(404);
    expect((await get(`${server.url}/v1/no/such/path/with-a-key`, token)).status).toBe(404);
    expect(await post(server.url, token, '/ns_list', {})).toBe(405);
    expect(await post(server.url, token, '/ns_create', { key: 'keyed-once' }, { 'idempotency-key': 'key-1' })).toBe(200);
    expect(await post(server.url, token, '/ns_create', { key: 'keyed-once' }, { 'idempotency-key': 'key-1' })).toBe(200);
    // Concurrent writers, each on a connection of its own: the group commit takes several of them at once.
    const writes = await onConnectionsOfTheirOwn(
      server.url,
      Array.from({ length: 40 }, (_, n) => ({
        method: 'POST',
        path: '/v1/ns_create',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key: `concurrent-${n}` }),
      })),
    );
    expect(writes.map((write) => write.status)).toEqual(writes.map(() => 200));

    const metrics = await scrape(admin);
    const requests = (labels: string) => sample(metrics, 'kb_http_requests_total', labels);
    expect(requests('{route="ns_list",method="GET",status="200"}')).toBe(3);
    expect(requests('{route="ns_list",method="GET",status="401"}')).toBe(2);
    expect(requests('{route="base_list",method="GET",status="404"}')).toBe(1);
    expect(requests('{route="unknown",method="GET",status="404"}')).toBe(1);
    expect(requests('{route="ns_list",method="POST",status="405"}')).toBe(1);
    expect(requests('{route="ns_create",method="POST",status="200"}')).toBe(42);
    // Labels name routes, never paths or keys.
    expect(metrics).not.toMatch(/no\/such|with-a-key|missing-ns|concurrent-|keyed-once|key-1/);
    expect(sample(metrics, 'kb_http_request_duration_seconds_count', '{route="ns_list"}')).toBe(6);
    expect(sample(metrics, 'kb_http_request_duration_seconds_count', '{route="ns_create"}')).toBe(42);
    expect(sample(metrics, 'kb_http_request_duration_seconds_bucket', '{le="+Inf",route="ns_create"}')).toBe(42);
    expect(sample(metrics, 'kb_idempotent_replays_total', '{route="ns_create"}')).toBe(1);
    // Every write committed, some of them together: fewer commits than writes.
    const commits = sample(metrics, 'kb_commit_writes_count');
    expect(sample(metrics, 'kb_commit_writes_sum')).toBeGreaterThanOrEqual(41);
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(sample(metrics, 'kb_commit_writes_sum'));
    expect(sample(metrics, 'kb_commit_duration_seconds_count')).toBe(commits);
    // Of the three lists read with no write in between, the first was read from the store and the others were kept.
    expect(sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="miss"}')).toBeGreaterThanOrEqual(1);
    expect(sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="hit"}')).toBeGreaterThanOrEqual(1);
    if (ENGINE === 'postgres') {
      expect(metrics).toMatch(/^kb_pg_pool_connections \d+$/m);
      expect(metrics).toMatch(/^kb_pg_pool_idle \d+$/m);
      expect(metrics).toMatch(/^kb_pg_pool_waiting \d+$/m);
      expect(sample(metrics, 'kb_pg_listen_up')).toBe(1);
    } else {
      expect(metrics).not.toContain('kb_pg_');
    }
  });

  it("keeps one organization's list a hit while another organization writes, and drops only the writer's", async () => {
    const { server, admin, env } = await serve();
    const [acme, globex] = [await newToken(env, 'acme'), await newToken(env, 'globex')];
    const list = async (token: string) => {
      const reply = await get(`${server.url}/v1/ns_list`, token);
      expect(reply.status).toBe(200);
      return (JSON.parse(reply.text) as { data: Array<{ key: string }> }).data.map((ns) => ns.key);
    };
    const kept = async () => {
      const metrics = await scrape(admin);
      return {
        hit: sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="hit"}'),
        miss: sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="miss"}'),
      };
    };
    expect(await post(server.url, globex, '/ns_create', { key: 'globex-own' })).toBe(200);
    expect(await list(globex)).toEqual(['globex-own']);
    expect(await list(acme)).toEqual([]);
    expect(await list(globex)).toEqual(['globex-own']);
    expect(await list(acme)).toEqual([]);
    const before = await kept();
    // acme writes, twice: globex's list stays kept, and acme's own is read again with the writes in it.
    expect(await post(server.url, acme, '/ns_create', { key: 'acme-one' })).toBe(200);
    expect(await post(server.url, acme, '/ns_create', { key: 'acme-two' }, { 'idempotency-key': 'acme-two' })).toBe(200);
    expect(await list(globex)).toEqual(['globex-own']);
    expect(await kept()).toEqual({ hit: before.hit + 1, miss: before.miss });
    expect(await list(acme)).toEqual(['acme-one', 'acme-two']);
    expect(await kept()).toEqual({ hit: before.hit + 1, miss: before.miss + 1 });
    // And the other way round: globex's write drops its own list only.
    expect(await post(server.url, globex, '/ns_create', { key: 'globex-two' })).toBe(200);
    expect(await list(acme)).toEqual(['acme-one', 'acme-two']);
    expect(await list(globex)).toEqual(['globex-own', 'globex-two']);
    expect(await kept()).toEqual({ hit: before.hit + 2, miss: before.miss + 2 });
  });

  it('refuses an admin port that is taken, naming it, and exits 1', async () => {
    const { admin, env } = await serve();
    const port = new URL(admin).port;
    const database = await createTestDatabase();
    databases.push(database);
    const result = await runKb(['serve', '--port', '0', '--admin-port', port, '--log-level', 'warn'], { env: { ...env, ...database.env } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${port} (--admin-port)`);
  });
});

// Defined for its engine only: the other project has nothing of it to run (not a skip).
if (ENGINE === 'sqlite') describe('kb serve --admin-port over SQLite (it deletes the database file)', () => {
  it('answers /ready 503 once its database file is replaced by another (writes would be lost), /live still 200', async () => {
    const { admin, env } = await serve();
    expect((await get(`${admin}/ready`)).status).toBe(200);
    const path = join(env.KB_DATA_DIR as string, 'kb.db');
    copyFileSync(path, `${path}.other`);
    renameSync(`${path}.other`, path);
    await expect.poll(async () => (await get(`${admin}/ready`)).text).toMatch(/^not ready: .*kb\.db was replaced by another file while kb serve ran/);
    expect((await get(`${admin}/ready`)).status).toBe(503);
    expect((await get(`${admin}/live`)).status).toBe(200);
  });
});

if (ENGINE === 'postgres') describe('kb serve --admin-port, two replicas over one PostgreSQL', () => {
  it("keeps one organization's list a hit on a replica while another organization writes through the other, and shows the writer its write", async () => {
    const a = await serve();
    const b = await serve([], a.env);
    const [acme, globex] = [await newToken(a.env, 'acme'), await newToken(a.env, 'globex')];
    const list = async (server: ServeProcess, token: string) => {
      const reply = await get(`${server.url}/v1/ns_list`, token);
      expect(reply.status).toBe(200);
      return (JSON.parse(reply.text) as { data: Array<{ key: string }> }).data.map((ns) => ns.key);
    };
    const kept = async () => {
      const metrics = await scrape(b.admin);
      return {
        hit: sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="hit"}'),
        miss: sample(metrics, 'kb_kept_answers_total', '{route="ns_list",result="miss"}'),
      };
    };
    expect(await list(b.server, globex)).toEqual([]);
    expect(await list(b.server, acme)).toEqual([]);
    expect(await list(b.server, globex)).toEqual([]);
    const before = await kept();
    // acme writes through replica a: b hears of it (data:ORG_ID) before it answers a request sent after the write.
    expect(await post(a.server.url, acme, '/ns_create', { key: 'acme-through-a' })).toBe(200);
    expect(await list(b.server, globex)).toEqual([]);
    expect(await list(b.server, acme)).toEqual(['acme-through-a']);
    expect(await kept()).toEqual({ hit: before.hit + 1, miss: before.miss + 1 });
  });
});
