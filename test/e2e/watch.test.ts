import { connect } from 'node:net';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE, type TestDatabase } from '../helpers/database.js';
import { openWatch, proveChurn } from '../helpers/watch.js';

// GET /v1/watch (docs/contract.md, Live changes) from the built kb serve, on the engine under test: across a
// restart, a SIGTERM with --drain-delay, a reader too slow, and the retention.

const running = killedAfterEach();
const databases = droppedAfterAll();

async function storage(): Promise<{ database: TestDatabase; env: NodeJS.ProcessEnv }> {
  const database = await createTestDatabase();
  databases.push(database);
  return { database, env: isolatedEnv(database.env) };
}

async function serve(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(args, env);
  running.push(server);
  return server;
}

async function newToken(env: NodeJS.ProcessEnv, org: string): Promise<string> {
  const result = await runKb(['serve', 'token', 'create', '--org', org], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').at(-1) as string;
}

async function post(url: string, token: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

describe(`GET /v1/watch from the built kb serve (${ENGINE})`, () => {
  it('writers of two organizations and watchers dropping and resuming at random: every watcher replays to the final lists, cursors 1..N once each', async () => {
    const { env } = await storage();
    const server = await serve(env);
    const [token, otherToken] = [await newToken(env, 'churn'), await newToken(env, 'elsewhere')];
    await proveChurn(expect, [server.url], token, otherToken);
  }, 180_000);

  it('a stream ends with a SIGTERM once --drain-delay is over, and resumes on the restarted server from its last id, losing and repeating nothing', async () => {
    const { env } = await storage();
    const first = await serve(env, ['--drain-delay', '1s']);
    const token = await newToken(env, 'restart');
    const stream = await openWatch(first.url, token);
    expect(await post(first.url, token, '/ns_create', { key: 'before' })).toBe(200);
    await stream.until((events) => events.length === 1);
    first.child.kill('SIGTERM');
    // Within the delay the API still serves, and the stream goes on.
    expect(await post(first.url, token, '/ns_create', { key: 'draining' })).toBe(200);
    await stream.until((events) => events.length === 2);
    await stream.ended;
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const second = await serve(env);
    expect(await post(second.url, token, '/ns_create', { key: 'after' })).toBe(200);
    const resumed = await openWatch(second.url, token, '', { 'last-event-id': stream.events.at(-1)?.id as string });
    await resumed.until((events) => events.length === 1);
    resumed.close();
    expect([...stream.events, ...resumed.events].map((event) => [event.id, event.data.object.key])).toEqual([
      ['1', 'before'],
      ['2', 'draining'],
      ['3', 'after'],
    ]);
  });

  it('ends a reader that does not read, whose unread bytes stay bounded; it resumes from its last id and loses nothing', async () => {
    const { env } = await storage();
    const server = await serve(env);
    const token = await newToken(env, 'slow');
    expect(await post(server.url, token, '/base_create', { namespace: 'big', key: 'one' })).toBe(200);
    // A raw connection that reads nothing once its request is sent: the server's buffer for it fills.
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`GET /v1/watch?since=1 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`);
    socket.pause();
    // 4 bytes a character: each event carries about 4 KB, far more than the kernel's buffers and the server's.
    const description = '\u{1F600}'.repeat(1000);
    const changes = 2000;
    for (let n = 0; n < changes; n += 100) {
      const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => post(server.url, token, '/base_update', { namespace: 'big', base: 'one', data: { description: `${n + i}${description}` } })));
      expect(new Set(statuses)).toEqual(new Set([200]));
    }
    // Now read whatever it kept for this reader: the stream ends short of the last change.
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.resume();
    await new Promise<void>((resolve) => (closed ? resolve() : socket.once('close', () => resolve())));
    const ids: number[] = [];
    const parser = createParser({ onEvent: (event) => ids.push(Number(event.id)) });
    const text = Buffer.concat(received).toString('utf8');
    parser.feed(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(changes);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, n) => n + 2));
    const resumed = await openWatch(server.url, token, '', { 'last-event-id': String(ids.at(-1)) });
    // The log holds namespace big's creation (1), base one's (2), then the updates: the last cursor is changes + 2.
    const head = changes + 2;
    await resumed.until((events) => events.length >= head - (ids.at(-1) as number));
    resumed.close();
    expect(resumed.events.map((event) => Number(event.id))).toEqual(Array.from({ length: head - (ids.at(-1) as number) }, (_, n) => (ids.at(-1) as number) + 1 + n));
  }, 120_000);

  it('/metrics counts the open streams and the events sent to them', async () => {
    const { env } = await storage();
    const server = await serve(env, ['--admin-port', '0']);
    const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
    const token = await newToken(env, 'counted');
    const sample = async (name: string) => {
      const text = await (await fetch(`${admin}/metrics`)).text();
      const line = text.split('\n').find((row) => row.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(await sample('kb_watchers')).toBe(0);
    const streams = [await openWatch(server.url, token), await openWatch(server.url, token)];
    expect(await post(server.url, token, '/ns_create', { key: 'counted' })).toBe(200);
    for (const stream of streams) await stream.until((events) => events.length === 1);
    expect(await sample('kb_watchers')).toBe(2);
    expect(await sample('kb_watch_events_sent_total')).toBe(2);
    for (const stream of streams) {
      stream.close();
      await stream.ended;
    }
    await expect.poll(() => sample('kb_watchers')).toBe(0);
  });

  it('forgets changes past 24 h and the last 10,000 of each organization, and answers a cursor before them 410; keeps any number younger than 24 h', async () => {
    const { database, env } = await storage();
    let server = await serve(env);
    const [token, youngToken] = [await newToken(env, 'kept'), await newToken(env, 'young')];
    expect(await post(server.url, token, '/ns_create', { key: 'fresh' })).toBe(200);
    expect(await post(server.url, youngToken, '/ns_create', { key: 'fresh' })).toBe(200);
    server.child.kill('SIGTERM');
    await server.exited;
    const orgIdOf = async (name: string) => ((await database.sql('SELECT id FROM orgs WHERE name = ?', [name])) as Array<{ id: number }>)[0]?.id as number;
    /** 10,050 changes made at `at`, before the one the organization made above. */
    const before = async (orgId: number, at: string) => {
      if (ENGINE === 'sqlite') {
        // A row a commit and organization, its id the organization's times 2^40 plus its last cursor: one change each here.
        await database.sql('UPDATE change_log SET id = id + 10050 WHERE id > ? * 1099511627776 AND id < (? + 1) * 1099511627776', [orgId, orgId]);
        await database.sql(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)
           INSERT INTO change_log SELECT ? * 1099511627776 + i, 1, ?, json('[["updated","namespace","fresh","fresh",null]]') FROM n`,
          [orgId, at],
        );
      } else {
        await database.sql('UPDATE changes SET seq = seq + 10050 WHERE org_id = ?', [orgId]);
        await database.sql(
          `INSERT INTO changes (org_id, seq, type, kind, namespace, key, at)
           SELECT ?, i, 'updated', 'namespace', 'fresh', 'fresh', ?::timestamptz FROM generate_series(1, 10050) i`,
          [orgId, at],
        );
      }
      await database.sql('UPDATE change_heads SET seq = seq + 10050 WHERE org_id = ?', [orgId]);
    };
    // Organization kept: a day old, the first 50 may go and the others must stay. Organization young: 23 h old, none may go.
    const [orgId, youngId] = [await orgIdOf('kept'), await orgIdOf('young')];
    await before(orgId, '2000-01-01T00:00:00.000Z');
    await before(youngId, new Date(Date.now() - 23 * 60 * 60 * 1000).toISOString());
    // The purge runs as the server starts, one statement for every organization.
    server = await serve(env);
    const marks = async (id: number) => ((await database.sql('SELECT purged FROM change_heads WHERE org_id = ?', [id])) as Array<{ purged: number }>).map((row) => Number(row.purged));
    await expect.poll(() => marks(orgId)).toEqual([51]);
    const [counting, countArgs] =
      ENGINE === 'sqlite'
        ? ['SELECT sum(count) AS count FROM change_log WHERE id > ? * 1099511627776 AND id < (? + 1) * 1099511627776', (id: number) => [id, id]]
        : ['SELECT count(*) AS count FROM changes WHERE org_id = ?', (id: number) => [id]];
    const count = async (id: number) => Number(((await database.sql(counting, countArgs(id))) as [{ count: number }])[0].count);
    expect(await count(orgId)).toBe(10_000);
    expect(await marks(youngId)).toEqual([0]);
    expect(await count(youngId)).toBe(10_051);
    for (const since of ['0', '50']) {
      const refused = await openWatch(server.url, token, `?since=${since}`);
      expect(refused.status).toBe(410);
      expect(refused.events).toEqual([]);
    }
    const kept = await openWatch(server.url, token, '?since=10049');
    await kept.until((events) => events.length === 2);
    kept.close();
    expect(kept.events.map((event) => [event.id, event.data.type])).toEqual([['10050', 'updated'], ['10051', 'created']]);
    const young = await openWatch(server.url, youngToken, '?since=0');
    await young.until((events) => events.length === 10_051);
    young.close();
    expect(young.events.map((event) => Number(event.id))).toEqual(Array.from({ length: 10_051 }, (_, n) => n + 1));
  });
});
