import { randomBytes } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/server/tokens.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-migrations.js';
import { CHECKOUT_CHANNEL, PostgresStore } from '../../src/store/postgres.js';
import { idempotencyLock } from '../../src/store/postgres-sql.js';
import {
  type IdempotencyCapture,
  type IdempotencyRecord,
  type Store,
  StoreOpenError,
  StoreUnreachableError,
  type Write,
  type WriteOutcome,
} from '../../src/store/store.js';
import { createTestDatabase, databaseUrl, pgQuery, postgresCluster, type TestDatabase } from '../helpers/database.js';
import { rejection } from '../helpers/rejection.js';
import { orgIdOf } from '../helpers/store.js';

const databases: TestDatabase[] = [];

/** A keyed write that did not run: its key's kept reply was replayed. */
class Replayed extends Error {
  constructor(readonly record: IdempotencyRecord) {
    super('replayed');
  }
}
/** A keyed write that did not run: another connection runs its key now. */
class Busy extends Error {}

/**
 * A write as the batch tests compare them: the value of one that ran and succeeded; a rejection with its own error, or
 * with Replayed or Busy for a keyed write that did not run.
 */
async function write(store: Store, change: Write, capture?: IdempotencyCapture): Promise<unknown> {
  if (capture === undefined) return store.perform(change);
  const result = await store.performKeyed(change, capture);
  if (result.kind === 'replayed') throw new Replayed(result.record);
  if (result.kind === 'busy') throw new Busy('busy');
  if (result.outcome.ok) return result.outcome.value;
  throw result.outcome.error;
}
const stores: PostgresStore[] = [];
async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase('postgres');
  databases.push(database);
  return database;
}
async function open(database: TestDatabase, options: { poolSize?: number; authFailureLimit?: number; authFailureWindowMs?: number } = {}) {
  const url = (database.storage as { url: string }).url;
  const store = await PostgresStore.open({ url, waitMs: 0, ...options });
  stores.push(store);
  return store;
}
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

const orgId = orgIdOf;

/** The tables of the database's public schema, and kb_schema's rows: what "writes nothing" compares. */
async function shape(database: TestDatabase): Promise<string> {
  const tables = await database.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  const marked = (tables as Array<{ tablename: string }>).some((table) => table.tablename === 'kb_schema');
  return JSON.stringify({ tables, schema: marked ? await database.sql('SELECT * FROM kb_schema') : null });
}

async function refusal(promise: Promise<unknown>): Promise<StoreOpenError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(StoreOpenError);
  return error as StoreOpenError;
}

describe('PostgresStore: the schema', () => {
  it("creates its tables on an empty database and marks it as kb's, at this kb's version; reopening changes nothing", async () => {
    const database = await freshDatabase();
    await open(database);
    expect(await database.sql('SELECT application, version FROM kb_schema')).toEqual([{ application: 'kb', version: POSTGRES_SCHEMA_VERSION }]);
    const before = await shape(database);
    expect(before).toContain('"namespaces"');
    expect(before).toContain('"auth_failures"');
    await open(database);
    expect(await shape(database)).toBe(before);
  });

  it('migrates once when several replicas open an empty database together', async () => {
    const database = await freshDatabase();
    const opened = await Promise.all(Array.from({ length: 6 }, () => open(database)));
    expect(opened).toHaveLength(6);
    expect(await database.sql('SELECT application, version FROM kb_schema')).toEqual([{ application: 'kb', version: POSTGRES_SCHEMA_VERSION }]);
    // Every table (9, the change log's 2 included), trigger (11, the change log's 3) and the kb_schema row were made by one
    // transaction: one replica migrated, the others waited.
    expect(
      await database.sql(
        `SELECT count(DISTINCT xmin::text)::int AS transactions, count(*)::int AS objects FROM (
           SELECT xmin FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
           UNION ALL SELECT xmin FROM pg_trigger WHERE NOT tgisinternal
           UNION ALL SELECT xmin FROM kb_schema) created`,
      ),
    ).toEqual([{ transactions: 1, objects: 9 + 11 + 1 }]);
    const org = await orgId(opened[0] as PostgresStore, 'acme');
    await opened[3]?.nsCreate(org, { key: 'shared', description: null });
    expect(await opened[5]?.nsList(org)).toEqual([{ key: 'shared', description: null }]);
  });

  it('refuses a database whose schema is newer than this kb, writing nothing', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    await store.nsCreate(org, { key: 'kept', description: 'as it was' });
    await database.sql('UPDATE kb_schema SET version = version + 1');
    const before = [await shape(database), await database.dump()];
    const error = await refusal(open(database));
    expect(error.message).toContain(`schema version ${POSTGRES_SCHEMA_VERSION + 1}, newer than this kb supports (${POSTGRES_SCHEMA_VERSION})`);
    expect(error.message).toMatch(/^the database at postgres:\/\/kb:\*\*\*@127\.0\.0\.1:\d+\/kb_test_/);
    expect([await shape(database), await database.dump()]).toEqual(before);
  });

  it("refuses a database of another application, creating nothing in it", async () => {
    const database = await freshDatabase();
    await database.sql('CREATE TABLE invoices (id integer PRIMARY KEY, total numeric)');
    await database.sql('INSERT INTO invoices VALUES (1, 9.5)');
    const before = await shape(database);
    const error = await refusal(open(database));
    expect(error.message).toMatch(/is not a kb database/);
    expect(error.help).toMatch(/empty database/);
    expect(await shape(database)).toBe(before);
    expect(await database.sql('SELECT * FROM invoices')).toEqual([{ id: 1, total: '9.5' }]);
  });

  it('refuses a kb_schema table that another application made', async () => {
    const database = await freshDatabase();
    await database.sql('CREATE TABLE kb_schema (application text NOT NULL, version integer NOT NULL)');
    await database.sql("INSERT INTO kb_schema VALUES ('knowledge-bot', 1)");
    const before = await shape(database);
    expect((await refusal(open(database))).message).toMatch(/is not a kb database/);
    expect(await shape(database)).toBe(before);
  });
});

describe('PostgresStore: connecting', () => {
  it('waits a bounded time for a database that does not answer, says so once, then names the URL with its password masked', async () => {
    const told: string[] = [];
    const started = Date.now();
    const error = await PostgresStore.open({ url: 'postgres://u:secret@127.0.0.1:1/x', waitMs: 600, onWaiting: (message) => told.push(message) }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(5000);
    const message = (error as Error).message;
    expect(message).toContain('postgres://u:***@127.0.0.1:1/x');
    expect(message).toContain('ECONNREFUSED');
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('postgres://u:***@127.0.0.1:1/x');
    expect([message, ...told].join('\n')).not.toContain('secret');
  });

  it('connects once the database answers within the wait', async () => {
    // A port that refuses at first, then forwards to the test PostgreSQL: a database that is still starting.
    const { createServer, connect } = await import('node:net');
    const target = new URL(postgresCluster().url);
    const proxy = createServer((socket) => {
      const upstream = connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const database = await freshDatabase();
    const url = new URL((database.storage as { url: string }).url);
    url.port = String(port);
    const told: string[] = [];
    setTimeout(() => proxy.listen(port, '127.0.0.1'), 400);
    try {
      const store = await PostgresStore.open({ url: url.href, waitMs: 10_000, onWaiting: (message) => told.push(message) });
      stores.push(store);
      expect(told).toHaveLength(1);
      expect(await store.listTokens()).toEqual([]);
    } finally {
      await Promise.all(stores.splice(0).map((store) => store.close()));
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('reports a wrong password at once, without waiting and without the password', async () => {
    const url = new URL(postgresCluster().url);
    url.password = 'not-the-password';
    const started = Date.now();
    const error = await refusal(PostgresStore.open({ url: url.href, waitMs: 10_000 }));
    expect(error).not.toBeInstanceOf(StoreUnreachableError);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.message).toContain('password authentication failed');
    expect(error.message).toContain(`postgres://kb:***@127.0.0.1:${url.port}/postgres`);
    expect(error.message).not.toContain('not-the-password');
    expect(error.help).toMatch(/password/);
  });

  it('reports a database that does not exist, and how to make it', async () => {
    const error = await refusal(PostgresStore.open({ url: databaseUrl(`kb_missing_${randomBytes(3).toString('hex')}`), waitMs: 0 }));
    expect(error.message).toMatch(/does not exist/);
    expect(error.help).toMatch(/createdb/);
  });

  it('opens at most --database-pool connections, however many requests wait', async () => {
    const database = await freshDatabase();
    const store = await open(database, { poolSize: 3 });
    const org = await orgId(store, 'acme');
    const name = new URL((database.storage as { url: string }).url).pathname.slice(1);
    let most = 0;
    const watching = setInterval(() => {
      void pgQuery(postgresCluster().url, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'kb serve'", [name])
        .then((result) => (most = Math.max(most, result.rows[0].n as number)))
        .catch(() => undefined);
    }, 5);
    try {
      await Promise.all(Array.from({ length: 60 }, (_, i) => store.baseCreate(org, { namespace: 'pool', key: `base-${i}`, description: null })));
    } finally {
      clearInterval(watching);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
    expect(await store.baseList(org, 'pool')).toHaveLength(60);
  });
});

describe('PostgresStore: two stores over one database behave as one (replicas in one process)', () => {
  it('a write acknowledged through one is read through the other at once; a token revoked through one is refused by the other', async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const token = generateToken();
    await a.createToken('acme', token.id, token.hash);
    const org = (await b.authenticate(token.hash))?.orgId as number;
    expect(org).toBeGreaterThan(0);
    for (let i = 0; i < 20; i++) {
      await (i % 2 ? a : b).baseCreate(org, { namespace: 'seen', key: `k-${i}`, description: `d${i}` });
      expect((await (i % 2 ? b : a).baseList(org, 'seen')).map((base) => base.key)).toContain(`k-${i}`);
    }
    await b.revokeToken(token.id);
    expect(await a.authenticate(token.hash)).toBeNull();
  });

  it('answers busy while another connection holds a key that has no reply yet, and runs the write once it is free', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const capture: IdempotencyCapture = { orgId: org, key: 'held', fingerprint: 'print', reply: () => ({ status: 200, body: '{}' }) };
    const other = new pg.Client({ connectionString: (database.storage as { url: string }).url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLock(org, 'held')]);
      await expect(write(store, { op: 'nsCreate', orgId: org, ns: { key: 'held-ns', description: null } }, capture)).rejects.toBeInstanceOf(Busy);
      expect(await store.nsList(org)).toEqual([]);
      await other.query('COMMIT');
      expect(await write(store, { op: 'nsCreate', orgId: org, ns: { key: 'held-ns', description: null } }, capture)).toEqual({ key: 'held-ns', description: null });
    } finally {
      await other.end();
    }
  });

  it('counts failed authentications of an address across stores, and forgets them once they leave the window', async () => {
    const database = await freshDatabase();
    const options = { authFailureLimit: 3, authFailureWindowMs: 60_000 };
    const [a, b] = [await open(database, options), await open(database, options)];
    const limitA = a.authFailures;
    const limitB = b.authFailures;
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    expect(await limitB.recordFailure('10.0.0.1')).toBe(0);
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    const wait = await limitB.recordFailure('10.0.0.1');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(await limitA.recordFailure('10.0.0.2')).toBe(0);
    // The window passes for 10.0.0.1's failures (their times moved back, rather than waiting for the clock).
    await database.sql("UPDATE auth_failures SET failed_at = failed_at - interval '61 seconds' WHERE address = '10.0.0.1'");
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    // The refused attempt was not counted; failures that left the window are gone from the table.
    expect(await database.sql("SELECT count(*)::int AS n FROM auth_failures WHERE address = '10.0.0.1'")).toEqual([{ n: 1 }]);
    expect(await database.sql("SELECT count(*)::int AS n FROM auth_failures WHERE address = '10.0.0.2'")).toEqual([{ n: 1 }]);
  });

  it('answers an address it found over the limit from memory until the limit ends, without the database', async () => {
    const database = await freshDatabase();
    const store = await open(database, { authFailureLimit: 2, authFailureWindowMs: 60_000 });
    expect(await store.authFailures.recordFailure('198.51.100.1')).toBe(0);
    expect(await store.authFailures.recordFailure('198.51.100.1')).toBe(0);
    const wait = await store.authFailures.recordFailure('198.51.100.1');
    expect(wait).toBeGreaterThan(59_000);
    // Were the database asked, the emptied table would let the address in again.
    await database.sql('DELETE FROM auth_failures');
    const again = await store.authFailures.recordFailure('198.51.100.1');
    expect(again).toBeGreaterThan(0);
    expect(again).toBeLessThanOrEqual(wait);
    expect(await database.sql('SELECT count(*)::int AS n FROM auth_failures')).toEqual([{ n: 0 }]);
  });

  it('lets no concurrent failures from replicas slip over the limit', async () => {
    const database = await freshDatabase();
    const replicas = await Promise.all(Array.from({ length: 3 }, () => open(database, { authFailureLimit: 20 })));
    const waits = await Promise.all(Array.from({ length: 60 }, (_, i) => (replicas[i % 3] as PostgresStore).authFailures.recordFailure('192.0.2.9')));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(20);
    expect(waits.filter((wait) => wait > 0 && wait <= 60_000)).toHaveLength(40);
  });
});

describe('PostgresStore: what it writes', () => {
  it('never writes the raw token to disk, only its hash', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const canary = generateToken();
    await store.createToken('canary-org', canary.id, canary.hash);
    await store.nsCreate(await orgId(store, 'acme'), { key: 'docs', description: 'x'.repeat(100) });
    const secret = canary.token.slice('kbt_'.length);
    const bytes = await database.storedBytes();
    // The hash must be there (proves these bytes hold the write), the token in no encoding.
    expect(bytes.includes(canary.hash)).toBe(true);
    expect(bytes.includes(Buffer.from(canary.token, 'utf8'))).toBe(false);
    expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false);
    expect(bytes.includes(Buffer.from(secret, 'base64url'))).toBe(false);
    expect(bytes.includes(Buffer.from(canary.token, 'utf16le'))).toBe(false);
  });

  it('keeps times in the ISO format of the SQLite engine, from the database clock', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const token = generateToken();
    const before = Date.now();
    const info = await store.createToken('acme', token.id, token.hash);
    expect(info.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(info.createdAt) - before)).toBeLessThan(5000);
    expect((await store.revokeToken(token.id))?.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

/**
 * Transactions committed in the database while run() ran, from pg_stat_database. A backend reports its counts when it
 * goes idle, at most once a second, and when it exits: the stores are closed (their backends exit) before counting.
 */
async function commitsDuring(database: TestDatabase, run: () => Promise<void>): Promise<number> {
  const count = async () => {
    const [row] = (await database.sql('SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()')) as Array<{ n: number }>;
    return row?.n ?? 0;
  };
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const before = await count();
  await run();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  return (await count()) - before;
}

describe('PostgresStore: group commit', () => {
  it('commits concurrent writes together, each with its own outcome: a 409 or a 404 among them undoes no other', async () => {
    const database = await freshDatabase();
    const setup = await PostgresStore.open({ url: (database.storage as { url: string }).url, waitMs: 0 });
    const org = await orgId(setup, 'acme');
    await setup.nsCreate(org, { key: 'taken', description: null });
    await setup.close();
    let results: PromiseSettledResult<unknown>[] = [];
    const commits = await commitsDuring(database, async () => {
      const store = await PostgresStore.open({ url: (database.storage as { url: string }).url, waitMs: 0 });
      results = await Promise.allSettled([
        ...Array.from({ length: 60 }, (_, i) => store.nsCreate(org, { key: `group-${i}`, description: `d${i}` })),
        store.nsCreate(org, { key: 'taken', description: 'again' }),
        store.baseUpdate(org, 'missing', 'base', { description: 'x' }),
        store.baseCreate(org, { namespace: 'group-0', key: 'faq', description: null }),
      ]);
      await store.close();
    });
    expect(results.slice(0, 60).every((result) => result.status === 'fulfilled')).toBe(true);
    expect(results[60]).toMatchObject({ status: 'rejected', reason: { status: 409 } });
    expect(results[61]).toMatchObject({ status: 'rejected', reason: { status: 404 } });
    expect(results[62]).toMatchObject({ status: 'fulfilled', value: { namespace: 'group-0', key: 'faq' } });
    expect(await database.sql("SELECT count(*)::int AS n FROM namespaces WHERE key LIKE 'group-%'")).toEqual([{ n: 60 }]);
    expect(await database.sql("SELECT description FROM namespaces WHERE key = 'taken'")).toEqual([{ description: null }]);
    // 63 writes, a handful of commits (opening the store and counting take a few more): not one per write.
    expect(commits).toBeLessThan(15);
  });

  it('resolves a write only once its commit is done: another session sees it at that moment, keyed or not', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    // A deferred trigger makes each COMMIT that created a namespace take 300 ms more, after every statement ran.
    await database.sql(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$`);
    await database.sql(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON namespaces DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
    const capture: IdempotencyCapture = { orgId: org, key: 'seen', fingerprint: 'seen', reply: () => ({ status: 200, body: '{}' }) };
    const seen = await Promise.all([
      store.nsCreate(org, { key: 'plain', description: null }).then(() => database.sql("SELECT key FROM namespaces WHERE key = 'plain'")),
      write(store, { op: 'nsCreate', orgId: org, ns: { key: 'keyed', description: null } }, capture).then(() => database.sql("SELECT key FROM idempotency WHERE key = 'seen'")),
    ]);
    expect(seen).toEqual([[{ key: 'plain' }], [{ key: 'seen' }]]);
  });

  it('writes keys and descriptions as given, whatever quotes, backslashes or NUL they hold (values written into statements)', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const tricky = ["it's", 'back\\slash \\x41', "'); DROP TABLE bases; --", 'emoji 😀 $$ $1'];
    for (const [i, text] of tricky.entries()) {
      const description = `${text} nul \u0000 byte`;
      expect(await store.nsCreate(org, { key: `${text}-ns-${i}`, description })).toEqual({ key: `${text}-ns-${i}`, description });
      expect(await store.baseCreate(org, { namespace: `${text}-ns-${i}`, key: text, description: text })).toMatchObject({ key: text, description: text });
    }
    // A key with NUL (which the API never lets through) fails alone: the write beside it in the batch is kept.
    const [nul, beside] = await Promise.allSettled([
      store.nsCreate(org, { key: 'nul \u0000 key', description: null }),
      store.nsCreate(org, { key: 'beside-nul', description: null }),
    ]);
    expect(nul?.status).toBe('rejected');
    expect(beside).toMatchObject({ status: 'fulfilled' });
    const listed = await store.nsList(org);
    for (const [i, text] of tricky.entries()) {
      expect(listed).toContainEqual({ key: `${text}-ns-${i}`, description: `${text} nul \u0000 byte` });
      expect(await store.baseList(org, `${text}-ns-${i}`)).toEqual([{ namespace: `${text}-ns-${i}`, key: text, description: text }]);
    }
    expect(await database.sql("SELECT count(*)::int AS n FROM bases")).toEqual([{ n: tricky.length }]);
  });

  it("writes a batch's base rows as given, whatever quotes, backslashes, braces, commas or NUL they hold (the batch's array literals)", async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const odd = ['NULL', 'a,b', '{x}', ' spaced ', 'quo"te', 'back\\slash', '\\', '""', "it's", 'emoji 😀', ''];
    for (const [i, text] of odd.entries()) await store.nsCreate(org, { key: `ns ${text} ${i}`, description: null });
    const bases = odd.flatMap((text, i) => [
      { namespace: `ns ${text} ${i}`, key: `k ${text}`, description: text },
      { namespace: `ns ${text} ${i}`, key: `${text}`, description: i % 2 === 0 ? null : `${text} nul \u0000 ${text}` },
    ]);
    // In one turn: one batch, its rows in one INSERT.
    expect(await Promise.all(bases.map((b) => store.baseCreate(org, b)))).toEqual(bases);
    expect(await store.baseListAll(org)).toEqual([...bases].sort((a, b) => (a.namespace === b.namespace ? (a.key < b.key ? -1 : 1) : a.namespace < b.namespace ? -1 : 1)));
    // All by the batch's one statement (a row run alone would have a subtransaction of its own).
    expect(await database.sql('SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM bases')).toEqual([{ n: bases.length, transactions: 1 }]);
  });

  it('gives exactly one of 40 concurrent creates of one key its 200, within one batch and across two stores', async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const org = await orgId(a, 'acme');
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).baseCreate(org, { namespace: 'race', key: 'one', description: `r${i}` })),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected' && (result.reason as { status: number }).status === 409)).toHaveLength(39);
    expect(await database.sql("SELECT count(*)::int AS n FROM bases WHERE key = 'one'")).toEqual([{ n: 1 }]);
  });

  it('commits the reply under each Idempotency-Key with its write, in the same transaction', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    await store.nsCreate(org, { key: 'taken', description: null });
    const capture = (key: string): IdempotencyCapture => ({
      orgId: org,
      key,
      fingerprint: `print-${key}`,
      reply: (outcome) => ({ status: outcome.ok ? 200 : 409, body: JSON.stringify(outcome.ok ? outcome.value : 'conflict') }),
    });
    const results = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => write(store, { op: 'nsCreate', orgId: org, ns: { key: `keyed-${i}`, description: null } }, capture(`k${i}`))),
      write(store, { op: 'nsCreate', orgId: org, ns: { key: 'taken', description: null } }, capture('k-taken')),
    ]);
    expect(results.slice(0, 10).every((result) => result.status === 'fulfilled')).toBe(true);
    expect(results[10]).toMatchObject({ status: 'rejected', reason: { status: 409 } });
    const kept = (await database.sql('SELECT key, status FROM idempotency ORDER BY key')) as Array<{ key: string; status: number }>;
    expect(kept.map((row) => [row.key, row.status])).toEqual([...Array.from({ length: 10 }, (_, i) => [`k${i}`, 200]), ['k-taken', 409]].sort());
    // Each reply was written by the very (sub)transaction that wrote its namespace.
    const paired = await database.sql(
      `SELECT count(*)::int AS n FROM idempotency i JOIN namespaces n ON n.key = 'keyed-' || substr(i.key, 2) AND n.xmin = i.xmin`,
    );
    expect(paired).toEqual([{ n: 10 }]);
  });

  /** What each write of a batch got: 'ok', an API error's status, or the class of another rejection. */
  const verdicts = (results: PromiseSettledResult<unknown>[]) =>
    results.map((result) =>
      result.status === 'fulfilled'
        ? 'ok'
        : result.reason instanceof Error && 'status' in result.reason
          ? (result.reason as { status: number }).status
          : (result.reason as Error).constructor.name,
    );

  it('inserts the bases of a batch together, each with its own outcome: a taken key, a repeat and a new namespace among them', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    await store.baseCreate(org, { namespace: 'docs', key: 'taken', description: 'first' });
    const results = await Promise.allSettled([
      store.baseCreate(org, { namespace: 'docs', key: 'twice', description: 'one' }),
      store.baseCreate(org, { namespace: 'docs', key: 'twice', description: 'two' }),
      store.baseCreate(org, { namespace: 'fresh', key: 'in-new-ns', description: null }),
      ...Array.from({ length: 10 }, (_, i) => store.baseCreate(org, { namespace: 'docs', key: `new-${i}`, description: `d${i}` })),
      store.baseCreate(org, { namespace: 'docs', key: 'taken', description: 'again' }),
    ]);
    expect(verdicts(results)).toEqual(['ok', 409, 'ok', ...Array.from({ length: 10 }, () => 'ok'), 409]);
    results.slice(3, 13).forEach((result, i) => expect(result).toMatchObject({ value: { namespace: 'docs', key: `new-${i}`, description: `d${i}` } }));
    const rows = await database.sql(
      `SELECT n.key AS namespace, b.key, convert_from(b.description, 'UTF8') AS description
       FROM bases b JOIN namespaces n ON n.id = b.namespace_id ORDER BY n.key, b.key`,
    );
    expect(rows).toEqual([
      ...Array.from({ length: 10 }, (_, i) => ({ namespace: 'docs', key: `new-${i}`, description: `d${i}` })),
      { namespace: 'docs', key: 'taken', description: 'first' },
      { namespace: 'docs', key: 'twice', description: 'one' },
      { namespace: 'fresh', key: 'in-new-ns', description: null },
    ]);
  });

  it('keeps under each Idempotency-Key of a batch of base creates the reply of its own write, whatever the others got', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const body = (outcome: WriteOutcome) => JSON.stringify(outcome.ok ? outcome.value : (outcome.error as Error).message);
    const capture = (key: string): IdempotencyCapture => ({
      orgId: org,
      key,
      fingerprint: `print-${key}`,
      reply: (outcome) => ({ status: outcome.ok ? 200 : 409, body: body(outcome) }),
    });
    await store.baseCreate(org, { namespace: 'docs', key: 'taken', description: null });
    // A key used before, for another base: its repeat is answered with that reply, and writes nothing.
    await write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'earlier', description: null } }, capture('k-reused'));
    const other = new pg.Client({ connectionString: (database.storage as { url: string }).url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLock(org, 'k-held')]);
      const results = await Promise.allSettled([
        ...Array.from({ length: 8 }, (_, i) => write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: `b-${i}`, description: null } }, capture(`k-${i}`))),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'taken', description: null } }, capture('k-taken')),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'race', description: null } }, capture('k-race-1')),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'race', description: null } }, capture('k-race-2')),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'not-written', description: null } }, capture('k-reused')),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key: 'not-held', description: null } }, capture('k-held')),
        write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'new-ns', key: 'b-new', description: null } }, capture('k-new-ns')),
        store.baseCreate(org, { namespace: 'docs', key: 'unkeyed', description: null }),
      ]);
      expect(verdicts(results)).toEqual([...Array.from({ length: 8 }, () => 'ok'), 409, 'ok', 409, 'Replayed', 'Busy', 'ok', 'ok']);
      expect((results[11] as PromiseRejectedResult).reason).toMatchObject({ record: { fingerprint: 'print-k-reused', status: 200 } });
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    const kept = (await database.sql('SELECT key, fingerprint, status, body FROM idempotency ORDER BY key')) as Array<Record<string, unknown>>;
    const reply = (key: string, status: number, data: unknown) => ({ key, fingerprint: `print-${key}`, status, body: JSON.stringify(data) });
    expect(kept).toEqual(
      [
        ...Array.from({ length: 8 }, (_, i) => reply(`k-${i}`, 200, { namespace: 'docs', key: `b-${i}`, description: null })),
        reply('k-taken', 409, 'Base taken already exists in namespace docs'),
        reply('k-race-1', 200, { namespace: 'docs', key: 'race', description: null }),
        reply('k-race-2', 409, 'Base race already exists in namespace docs'),
        reply('k-reused', 200, { namespace: 'docs', key: 'earlier', description: null }),
        reply('k-new-ns', 200, { namespace: 'new-ns', key: 'b-new', description: null }),
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
    const bases = (await database.sql('SELECT key FROM bases ORDER BY key')) as Array<{ key: string }>;
    expect(bases.map((row) => row.key)).toEqual(
      ['taken', 'earlier', ...Array.from({ length: 8 }, (_, i) => `b-${i}`), 'race', 'b-new', 'unkeyed'].sort(),
    );
  });

  for (const keyed of [false, true]) {
    it(`runs each base create of a batch alone when PostgreSQL refuses their shared INSERT, ${keyed ? 'with' : 'without'} Idempotency-Keys: only the failing one fails`, async () => {
      const database = await freshDatabase();
      const store = await open(database);
      const org = await orgId(store, 'acme');
      await store.nsCreate(org, { key: 'docs', description: null });
      // A row of the batch that PostgreSQL refuses fails the one statement that inserts them all.
      await database.sql(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$`);
      await database.sql('CREATE TRIGGER refuse_poison BEFORE INSERT ON bases FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
      const capture = (key: string): IdempotencyCapture | undefined =>
        keyed ? { orgId: org, key, fingerprint: key, reply: (outcome) => (outcome.ok ? { status: 200, body: key } : undefined) } : undefined;
      const results = await Promise.allSettled(
        ['a', 'b', 'poison', 'c', 'd'].map((key) => write(store, { op: 'baseCreate', orgId: org, base: { namespace: 'docs', key, description: null } }, capture(key))),
      );
      expect(verdicts(results)).toEqual(['ok', 'ok', 'DatabaseError', 'ok', 'ok']);
      expect(await database.sql('SELECT key FROM bases ORDER BY key')).toEqual(['a', 'b', 'c', 'd'].map((key) => ({ key })));
      expect(await database.sql('SELECT key FROM idempotency ORDER BY key')).toEqual(keyed ? ['a', 'b', 'c', 'd'].map((key) => ({ key })) : []);
    });
  }

  it('fails every write of a batch whose connection is lost before COMMIT with 503, keeping nothing of any, keyed or not', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const url = (database.storage as { url: string }).url;
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE idempotency IN SHARE ROW EXCLUSIVE MODE');
      const capture = (key: string): IdempotencyCapture => ({ orgId: org, key, fingerprint: key, reply: () => ({ status: 200, body: '{}' }) });
      const pending = Promise.allSettled([
        store.nsCreate(org, { key: 'lost-1', description: null }),
        write(store, { op: 'nsCreate', orgId: org, ns: { key: 'lost-2', description: null } }, capture('lost-2')),
        store.baseCreate(org, { namespace: 'lost-ns', key: 'lost-3', description: null }),
        write(store, { op: 'nsCreate', orgId: org, ns: { key: 'lost-4', description: null } }, capture('lost-4')),
      ]);
      // The batch waits on the idempotency table (after its first writes ran); its connection is then cut.
      await expect
        .poll(async () => {
          const { rows } = await blocker.query<{ ended: boolean }>(
            `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
          );
          return rows.filter((row) => row.ended).length;
        })
        .toBe(1);
      await blocker.query('ROLLBACK');
      const results = await pending;
      for (const result of results) expect(result).toMatchObject({ status: 'rejected', reason: { status: 503, message: 'The database cannot be reached' } });
    } finally {
      await blocker.end();
    }
    expect(await database.sql("SELECT key FROM namespaces WHERE key LIKE 'lost-%'")).toEqual([]);
    expect(await database.sql('SELECT key FROM bases')).toEqual([]);
    expect(await database.sql('SELECT key FROM idempotency')).toEqual([]);
    expect(await store.nsCreate(org, { key: 'lost-1', description: null })).toEqual({ key: 'lost-1', description: null });
  });
});

describe('PostgresStore: a write sent with a token (Write.tokenId) runs only while the token is active', () => {
  it('refuses, with 401 and nothing written or kept, the writes of a token revoked through another store, in every kind of batch', async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const [live, doomed] = [generateToken(), generateToken()];
    await a.createToken('acme', live.id, live.hash);
    await a.createToken('acme', doomed.id, doomed.hash);
    const org = await orgId(a, 'acme');
    await a.nsCreate(org, { key: 'ns', description: null });
    await b.revokeToken(doomed.id);
    const capture = (key: string): IdempotencyCapture => ({ orgId: org, key, fingerprint: key, reply: () => ({ status: 200, body: key }) });
    const base = (key: string, tokenId: string): Write => ({ op: 'baseCreate', orgId: org, base: { namespace: 'ns', key, description: null }, tokenId });
    // Base creates alone (one INSERT); with a namespace create (savepoints); keyed (the keys claimed first).
    const batches: Array<Array<[Write, IdempotencyCapture?]>> = [
      [[base('rows-live', live.id)], [base('rows-doomed', doomed.id)]],
      [[base('mixed-live', live.id)], [{ op: 'nsCreate', orgId: org, ns: { key: 'mixed-doomed', description: null }, tokenId: doomed.id }]],
      [[base('keyed-live', live.id), capture('keyed-live')], [base('keyed-doomed', doomed.id), capture('keyed-doomed')]],
    ];
    for (const batch of batches) {
      const [ran, refused] = await Promise.allSettled(batch.map(([change, keyed]) => write(a, change, keyed)));
      expect(ran).toMatchObject({ status: 'fulfilled' });
      expect(refused).toMatchObject({ status: 'rejected', reason: { status: 401, code: 'unauthorized' } });
    }
    expect(await database.sql("SELECT key FROM bases ORDER BY key")).toEqual([{ key: 'keyed-live' }, { key: 'mixed-live' }, { key: 'rows-live' }]);
    expect(await database.sql("SELECT key FROM namespaces ORDER BY key")).toEqual([{ key: 'ns' }]);
    expect(await database.sql('SELECT key FROM idempotency')).toEqual([{ key: 'keyed-live' }]);
  });
});

describe('PostgresStore: what it keeps between requests', () => {
  it("changes its readVersion at once for another store's commit, and for SQL run behind kb's back; keeps it otherwise", async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const org = await orgId(a, 'acme');
    let seen = await b.readVersion();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await b.readVersion()).toBe(seen);
    for (let i = 0; i < 30; i++) {
      await (i % 3 === 0 ? a.nsCreate(org, { key: `v-${i}`, description: null }) : i % 3 === 1 ? a.nsUpdate(org, `v-${i - 1}`, { description: 'x' }) : a.createToken('acme', `tok_v${i}`, randomBytes(32)));
      const now = await b.readVersion();
      expect(now, `after write ${i}`).not.toBe(seen);
      seen = now;
    }
    await database.sql("UPDATE namespaces SET description = NULL WHERE key = 'v-0'");
    expect(await b.readVersion()).not.toBe(seen);
  });

  it("changes one organization's dataVersion for its writes through another store and SQL behind kb's back, never for another organization's", async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const [acme, globex] = [await orgId(a, 'acme'), await orgId(a, 'globex')];
    await b.readVersion();
    let [acmeSeen, globexSeen] = [b.dataVersion(acme), b.dataVersion(globex)];
    expect(globexSeen).toBeDefined();
    const writes: Array<() => Promise<unknown>> = [
      () => a.nsCreate(acme, { key: 'ns', description: null }),
      () => Promise.all([a.baseCreate(acme, { namespace: 'ns', key: 'one', description: null }), a.baseCreate(acme, { namespace: 'ns', key: 'two', description: null })]),
      () => a.baseUpdate(acme, 'ns', 'one', { description: 'x' }),
      () => a.baseDelete(acme, 'ns', 'two'),
      () => a.nsUpdate(acme, 'ns', { description: 'y' }),
      () => database.sql("UPDATE bases SET description = NULL WHERE key = 'one'"),
    ];
    for (const [i, write] of writes.entries()) {
      await write();
      await b.readVersion();
      expect(b.dataVersion(acme), `after write ${i}`).not.toBe(acmeSeen);
      expect(b.dataVersion(globex), `after write ${i}`).toBe(globexSeen);
      acmeSeen = b.dataVersion(acme);
    }
    await a.nsCreate(globex, { key: 'theirs', description: null });
    await b.readVersion();
    expect(b.dataVersion(globex)).not.toBe(globexSeen);
    expect(b.dataVersion(acme)).toBe(acmeSeen);
    globexSeen = b.dataVersion(globex);
    // A token changes every organization's: a revocation must be seen by every request.
    await a.createToken('globex', 'tok_dataversion', randomBytes(32));
    await b.readVersion();
    expect(b.dataVersion(acme)).not.toBe(acmeSeen);
    expect(b.dataVersion(globex)).not.toBe(globexSeen);
  });

  it('authenticates a known token without a query, also after data writes; a revocation through another store is refused at once', async () => {
    const database = await freshDatabase();
    const [a, b] = [await open(database), await open(database)];
    const token = generateToken();
    await a.createToken('acme', token.id, token.hash);
    await b.readVersion();
    const org = (await b.authenticate(token.hash))?.orgId as number;
    let checkouts = 0;
    const count = (message: unknown) => {
      if ((message as { store: unknown }).store === b) checkouts++;
    };
    subscribe(CHECKOUT_CHANNEL, count);
    try {
      for (let i = 0; i < 20; i++) {
        await b.readVersion();
        expect(await b.authenticate(token.hash)).toMatchObject({ orgId: org, org: 'acme', tokenId: token.id });
        await a.nsCreate(org, { key: `data-${i}`, description: null });
      }
      expect(checkouts).toBe(0);
      await a.revokeToken(token.id);
      await b.readVersion();
      expect(await b.authenticate(token.hash)).toBeNull();
      expect(checkouts).toBe(1);
    } finally {
      unsubscribe(CHECKOUT_CHANNEL, count);
    }
  });

  it('keeps nothing while its LISTEN connection is down, and drops what it kept before, once it listens again', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const before = await store.readVersion();
    const { rows } = await pgQuery(
      (database.storage as { url: string }).url,
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'kb serve (listen)'`,
    );
    expect(rows).toEqual([{ ended: true }]);
    // While it reconnects, every version differs: nothing read then is kept.
    const during = [await store.readVersion(), await store.readVersion()];
    expect(during[0]).not.toBe(during[1]);
    await expect
      .poll(async () => {
        const [x, y] = [await store.readVersion(), await store.readVersion()];
        return x === y && x !== before;
      })
      .toBe(true);
  });
});
