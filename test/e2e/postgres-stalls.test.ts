import { describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { ownCluster, pgQuery } from '../helpers/database.js';

/**
 * Connections that stop answering, against built `kb serve --database` processes: the PostgreSQL backend serving one
 * connection is stopped with SIGSTOP, as a frozen database host or a half-open TCP connection would leave it (the
 * kernel still acknowledges what kb sends; nothing comes back). This file stops backends of a PostgreSQL of its own.
 */

const { cluster, freshDatabase } = ownCluster('kb_stalls');

/** Longer than anything kb serve should hold a request for, and than its own bound on a round trip (5 s). */
const HANG_MS = 30_000;

interface Replica {
  server: ServeProcess;
  admin: string;
}

interface Setup {
  url: string;
  name: string;
  token: string;
  env: NodeJS.ProcessEnv;
  replicas: Replica[];
}

async function setUp(): Promise<Setup> {
  const url = await freshDatabase();
  const env = isolatedEnv();
  const created = await runKb(['serve', 'token', 'create', '--org', 'stalls', '--database', url], { env });
  expect(created.code, created.stderr).toBe(0);
  return { url, name: new URL(url).pathname.slice(1), token: created.stdout.trim(), env, replicas: [] };
}

async function startReplica(setup: Setup, args: string[] = []): Promise<Replica> {
  const server = await startServe(['--database', setup.url, '--admin-port', '0', ...args], setup.env);
  const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
  const replica = { server, admin };
  setup.replicas.push(replica);
  return replica;
}

async function tearDown(setup: Setup, stopped: number[]): Promise<void> {
  for (const pid of stopped) continueBackend(pid);
  for (const { server } of setup.replicas) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

function continueBackend(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // gone already
  }
}

interface Reply {
  status?: number;
  retryAfter?: string | null;
  body?: { success?: boolean; data?: unknown; message?: string };
  error?: string;
}

/** One request; a reply that does not come within HANG_MS is reported as such, not waited for. */
async function call(replica: Replica, token: string, method: string, path: string, body?: unknown, key?: string): Promise<Reply> {
  try {
    const response = await fetch(`${replica.server.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(HANG_MS),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Reply['body'] };
  } catch (error) {
    return { error: String(error) };
  }
}

async function ready(replica: Replica): Promise<{ status: number; text: string }> {
  const response = await fetch(`${replica.admin}/ready`);
  return { status: response.status, text: await response.text() };
}

/** The PostgreSQL backends of the database whose connections match the condition on pg_stat_activity. */
async function backends(setup: Setup, condition: string): Promise<number[]> {
  const { rows } = await pgQuery(
    cluster().url,
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND ${condition} ORDER BY pid`,
    [setup.name],
  );
  return rows.map((row: { pid: number }) => row.pid);
}

/** Waits until the backends are gone (a stopped one, continued, reads the end of its closed connection and exits). */
async function gone(setup: Setup, pids: number[]): Promise<void> {
  await expect.poll(async () => (await backends(setup, `pid = ANY('{${pids.join(',')}}'::int[])`)).length, { timeout: 30_000, interval: 200 }).toBe(0);
}

async function namespaces(setup: Setup): Promise<string[]> {
  return (await pgQuery(setup.url, 'SELECT key FROM namespaces ORDER BY key')).rows.map((row: { key: string }) => row.key);
}

function expectRefused(reply: Reply, message: RegExp): void {
  expect(reply.error).toBeUndefined();
  expect(reply.status).toBe(503);
  expect(reply.retryAfter).toMatch(/^\d+$/);
  expect(reply.body?.success).toBe(false);
  expect(reply.body?.message).toMatch(message);
}

/** /ready turns 503, saying a connection has not answered, while a request is held on a stalled connection. */
async function notReadyWhileHeld(replica: Replica): Promise<void> {
  await expect.poll(async () => (await ready(replica)).status, { timeout: HANG_MS, interval: 100 }).toBe(503);
  expect((await ready(replica)).status).toBe(503);
  expect((await ready(replica)).text).toMatch(/^not ready: /);
  expect((await fetch(`${replica.admin}/live`)).status).toBe(200);
}

describe('kb serve when the database stops answering on one of its connections (its backend stopped with SIGSTOP)', () => {
  it('the group commit\'s connection: the write it holds is answered 503 with Retry-After, saying it may have been applied, while the backend stays stopped; /ready 503 meanwhile; reads served; writes work again without a restart', async () => {
    const setup = await setUp();
    const stopped: number[] = [];
    try {
      const replica = await startReplica(setup);
      expect((await call(replica, setup.token, 'POST', '/ns_create', { key: 'docs' }, 'k-docs')).status).toBe(200);
      // A batch of base creates alone is one statement that commits by itself: it marks the group commit's connection.
      expect((await call(replica, setup.token, 'POST', '/base_create', { namespace: 'docs', key: 'first' })).status).toBe(200);
      const writers = await backends(setup, `application_name = 'kb serve' AND query LIKE '%INSERT INTO bases%'`);
      expect(writers).toHaveLength(1);
      process.kill(writers[0] as number, 'SIGSTOP');
      stopped.push(...writers);

      const held = call(replica, setup.token, 'POST', '/base_create', { namespace: 'docs', key: 'held' });
      await notReadyWhileHeld(replica);
      // Reads go on, on the pool's other connections.
      const listed = await call(replica, setup.token, 'GET', '/ns_list');
      expect(listed.status).toBe(200);
      // The INSERT was sent: it may have been committed (here it is, once the backend runs again). Never a 200 for it.
      expectRefused(await held, /may have been applied/);
      // The stalled connection is replaced: writes and /ready are back while its backend is still stopped.
      expect((await call(replica, setup.token, 'POST', '/ns_create', { key: 'after' }, 'k-after')).status).toBe(200);
      await expect.poll(async () => (await ready(replica)).status, { timeout: HANG_MS, interval: 200 }).toBe(200);

      for (const pid of stopped.splice(0)) continueBackend(pid);
      await gone(setup, writers);
      expect(await namespaces(setup)).toEqual(['after', 'docs']);
      const bases = (await pgQuery(setup.url, 'SELECT key FROM bases ORDER BY key')).rows.map((row: { key: string }) => row.key);
      expect(bases).toEqual(['first', 'held']);
      expect(replica.server.child.exitCode, replica.server.stderr()).toBeNull();
    } finally {
      await tearDown(setup, stopped);
    }
  }, 120_000);

  it('the group commit\'s connection stalling inside COMMIT: the keyed write is answered 503 saying it may have been applied, and once the backend runs again it was, and a retry with its key replays its 200', async () => {
    const setup = await setUp();
    const stopped: number[] = [];
    try {
      const replica = await startReplica(setup);
      // A COMMIT that takes 2 s for one key (a deferred trigger, under PostgreSQL's own 4 s statement timeout): long
      // enough to stop its backend while it is inside that COMMIT.
      await pgQuery(
        setup.url,
        `CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN IF NEW.key = 'slow' THEN PERFORM pg_sleep(2); END IF; RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON namespaces DEFERRABLE INITIALLY DEFERRED
           FOR EACH ROW EXECUTE FUNCTION slow_commit()`,
      );
      const held = call(replica, setup.token, 'POST', '/ns_create', { key: 'slow' }, 'k-slow');
      let committing: number[] = [];
      await expect
        .poll(async () => (committing = await backends(setup, `application_name = 'kb serve' AND wait_event = 'PgSleep' AND query LIKE '%COMMIT'`)).length, { timeout: HANG_MS, interval: 20 })
        .toBe(1);
      process.kill(committing[0] as number, 'SIGSTOP');
      stopped.push(...committing);
      await notReadyWhileHeld(replica);
      expectRefused(await held, /may have been applied/);

      for (const pid of stopped.splice(0)) continueBackend(pid);
      await gone(setup, committing);
      // It was: the commit went on once the backend ran again, its reply under its key with it.
      expect(await namespaces(setup)).toEqual(['slow']);
      const retried = await fetch(`${replica.server.url}/v1/ns_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${setup.token}`, 'content-type': 'application/json', 'idempotency-key': 'k-slow' },
        body: JSON.stringify({ key: 'slow' }),
      });
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(replica.server.child.exitCode, replica.server.stderr()).toBeNull();
    } finally {
      await tearDown(setup, stopped);
    }
  }, 120_000);

  it('the pool\'s connections: the read and the keyed write they hold are answered 503 with Retry-After while the backends stay stopped; /ready 503 meanwhile; the write is not in the database, and runs when retried with its key', async () => {
    const setup = await setUp();
    const stopped: number[] = [];
    try {
      const replica = await startReplica(setup);
      expect((await call(replica, setup.token, 'POST', '/ns_create', { key: 'docs' }, 'k-docs')).status).toBe(200);
      expect((await call(replica, setup.token, 'GET', '/ns_list')).status).toBe(200);
      const pool = await backends(setup, `application_name = 'kb serve'`);
      expect(pool.length).toBeGreaterThan(0);
      for (const pid of pool) process.kill(pid, 'SIGSTOP');
      stopped.push(...pool);

      // A list never read before is not kept: it needs a connection of the pool.
      const read = call(replica, setup.token, 'GET', '/base_list?namespace=docs');
      const write = call(replica, setup.token, 'POST', '/ns_create', { key: 'held' }, 'k-held');
      await notReadyWhileHeld(replica);
      expectRefused(await read, /cannot be reached/);
      expectRefused(await write, /cannot be reached/);
      // Each stalled connection is closed and replaced as a request meets it: reads, writes and /ready come back
      // while the stopped backends still are.
      let n = 0;
      await expect.poll(async () => (await call(replica, setup.token, 'POST', '/ns_create', { key: `after-${n++}` })).status, { timeout: HANG_MS, interval: 200 }).toBe(200);
      await expect.poll(async () => (await call(replica, setup.token, 'GET', '/base_list?namespace=docs')).status, { timeout: HANG_MS, interval: 200 }).toBe(200);
      await expect.poll(async () => (await ready(replica)).status, { timeout: HANG_MS, interval: 200 }).toBe(200);

      for (const pid of stopped.splice(0)) continueBackend(pid);
      await gone(setup, pool);
      // Its transaction never committed: nothing of it is kept, its key included, and the retry runs it.
      expect(await namespaces(setup)).not.toContain('held');
      const retried = await call(replica, setup.token, 'POST', '/ns_create', { key: 'held' }, 'k-held');
      expect(retried.status).toBe(200);
      expect(await namespaces(setup)).toContain('held');
      expect(replica.server.child.exitCode, replica.server.stderr()).toBeNull();
    } finally {
      await tearDown(setup, stopped);
    }
  }, 120_000);

  it('the LISTEN connection: reads are answered from the database, never from what was kept, while /ready says 503 until it has reconnected, without a restart', async () => {
    const setup = await setUp();
    const stopped: number[] = [];
    try {
      const a = await startReplica(setup);
      // Replica a's own LISTEN backend: the only one before b starts.
      const listen = await backends(setup, `application_name = 'kb serve (listen)'`);
      expect(listen).toHaveLength(1);
      const b = await startReplica(setup);
      expect((await call(b, setup.token, 'POST', '/ns_create', { key: 'one' }, 'k-one')).status).toBe(200);
      const keys = async () => {
        const reply = await call(a, setup.token, 'GET', '/ns_list');
        expect(reply.status).toBe(200);
        return (reply.body?.data as Array<{ key: string }>).map((ns) => ns.key);
      };
      // Read twice: the second answer is the one a kept.
      expect(await keys()).toEqual(['one']);
      expect(await keys()).toEqual(['one']);
      process.kill(listen[0] as number, 'SIGSTOP');
      stopped.push(...listen);

      // Told through b, while a hears nothing.
      expect((await call(b, setup.token, 'POST', '/ns_create', { key: 'two' }, 'k-two')).status).toBe(200);
      // Nothing but a's probe asks the stalled connection anything: /ready finds it.
      await expect.poll(async () => (await ready(a)).status, { timeout: HANG_MS, interval: 100 }).toBe(503);
      expect((await ready(a)).text).toMatch(/^not ready: /);
      // a's reads are not its kept answer, whether its LISTEN connection stalls or has been replaced.
      expect(await keys()).toEqual(['one', 'two']);
      expect(await keys()).toEqual(['one', 'two']);
      // a drops the stalled connection and LISTENs on a new one: ready again, and told of b's writes again.
      await expect.poll(async () => (await ready(a)).status, { timeout: HANG_MS, interval: 200 }).toBe(200);
      expect((await call(b, setup.token, 'POST', '/ns_create', { key: 'three' }, 'k-three')).status).toBe(200);
      expect(await keys()).toEqual(['one', 'three', 'two']);
      expect(a.server.child.exitCode, a.server.stderr()).toBeNull();
    } finally {
      await tearDown(setup, stopped);
    }
  }, 120_000);
});
