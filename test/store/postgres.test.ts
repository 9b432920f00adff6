import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/server/tokens.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-migrations.js';
import { idempotencyLock, PostgresStore } from '../../src/store/postgres.js';
import { IdempotencyInProgress, type IdempotencyCapture, StoreOpenError, StoreUnreachableError } from '../../src/store/store.js';
import { createTestDatabase, databaseUrl, pgQuery, postgresCluster, type TestDatabase } from '../helpers/database.js';
import { rejection } from '../helpers/rejection.js';
import { orgIdOf } from '../helpers/store.js';

const databases: TestDatabase[] = [];
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
    // Every table, trigger and the kb_schema row were made by one transaction: one replica migrated, the others waited.
    expect(
      await database.sql(
        `SELECT count(DISTINCT xmin::text)::int AS transactions, count(*)::int AS objects FROM (
           SELECT xmin FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
           UNION ALL SELECT xmin FROM pg_trigger WHERE NOT tgisinternal
           UNION ALL SELECT xmin FROM kb_schema) created`,
      ),
    ).toEqual([{ transactions: 1, objects: 7 + 4 + 1 }]);
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

  it('answers IdempotencyInProgress while another connection holds the key, and runs the write once it is free', async () => {
    const database = await freshDatabase();
    const store = await open(database);
    const org = await orgId(store, 'acme');
    const capture: IdempotencyCapture = { orgId: org, key: 'held', fingerprint: 'print', reply: () => ({ status: 200, body: '{}' }) };
    const other = new pg.Client({ connectionString: (database.storage as { url: string }).url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLock(org, 'held')]);
      await expect(store.nsCreate(org, { key: 'held-ns', description: null }, capture)).rejects.toBeInstanceOf(IdempotencyInProgress);
      expect(await store.nsList(org)).toEqual([]);
      await other.query('COMMIT');
      expect(await store.nsCreate(org, { key: 'held-ns', description: null }, capture)).toEqual({ key: 'held-ns', description: null });
    } finally {
      await other.end();
    }
  });

  it('counts failed authentications of an address across stores, and forgets them once they leave the window', async () => {
    const database = await freshDatabase();
    const options = { authFailureLimit: 3, authFailureWindowMs: 800 };
    const [a, b] = [await open(database, options), await open(database, options)];
    const limitA = a.authFailures;
    const limitB = b.authFailures;
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    expect(await limitB.recordFailure('10.0.0.1')).toBe(0);
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    const wait = await limitB.recordFailure('10.0.0.1');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(800);
    expect(await limitA.recordFailure('10.0.0.2')).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, wait + 50));
    expect(await limitA.recordFailure('10.0.0.1')).toBe(0);
    // The refused attempt was not counted; failures that left the window are gone from the table.
    expect(await database.sql("SELECT count(*)::int AS n FROM auth_failures WHERE address = '10.0.0.1'")).toEqual([{ n: 1 }]);
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
