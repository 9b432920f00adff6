import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import type { StorageOptions } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { DATABASE_FILE, SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { type PostgresCluster, startCluster } from '../postgres-setup.js';
import { tempDir } from './temp.js';

export type Engine = 'sqlite' | 'postgres';

/** The engine under test: each vitest project (vitest.config.ts) sets KB_TEST_ENGINE for the files it runs. */
export const ENGINE: Engine = process.env.KB_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** The data tables: what "nothing changed" compares (the failed-authentication count is not data). */
const DATA_TABLES = ['orgs', 'tokens', 'namespaces', 'bases', 'idempotency'];

/** Each table's rows as compared: a token's last use is a note of the server's, written by reads too, not data. */
function dumped(table: string): string {
  return table === 'tokens'
    ? 'SELECT id, org_id, hash, created_at, revoked_at, name, scope, expires_at FROM tokens'
    : `SELECT * FROM ${table}`;
}

/** A fresh, empty database of one engine, for one test server or store test. */
export interface TestDatabase {
  engine: Engine;
  /** How kb opens it: a data dir, or a database URL. */
  storage: StorageOptions;
  /** The environment that points `kb serve` and `kb serve token` at it: KB_DATA_DIR, or KB_DATABASE_URL. */
  env: Record<string, string>;
  /**
   * A new store over this database (close it; a second open() is a "reopen"). On PostgreSQL, `roundTripMs` is the
   * store's bound on a round trip (PostgresStoreOptions).
   */
  open(options?: { roundTripMs?: number }): Promise<Store>;
  /** Runs one statement directly on the database, with `?` placeholders; resolves with its rows. */
  sql(text: string, params?: unknown[]): Promise<unknown[]>;
  /** Every row of the data tables, read through a connection of its own, as JSON. */
  dump(): Promise<string>;
  /** Every byte the engine keeps on disk for this database (data files and write-ahead log), after a checkpoint. */
  storedBytes(): Promise<Buffer>;
  /** Removes the database and everything in it. */
  drop(): Promise<void>;
}

/** The test PostgreSQL cluster that test/postgres-setup.ts started for the postgres project. */
export function postgresCluster(): { url: string; dataDir: string } {
  const cluster = inject('postgres');
  if (!cluster) throw new Error('no test PostgreSQL: run this file in the postgres project (vitest --project postgres)');
  return cluster;
}

/** Runs one statement on a connection of its own, then closes it. */
export async function pgQuery(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

/**
 * A PostgreSQL of the calling file's own (for the files that stop, start or freeze it; the project's shared one serves
 * the others), started before its tests and removed after them, and a new database in it per `freshDatabase` call.
 */
export function ownCluster(prefix: string): { cluster: () => PostgresCluster; freshDatabase: () => Promise<string> } {
  let cluster: PostgresCluster | undefined;
  let databases = 0;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster?.remove();
  });
  const started = (): PostgresCluster => {
    if (!cluster) throw new Error('ownCluster: the cluster starts in beforeAll; use it inside a test');
    return cluster;
  };
  return {
    cluster: started,
    freshDatabase: async () => {
      const name = `${prefix}_${process.pid}_${++databases}`;
      await pgQuery(started().url, `CREATE DATABASE ${name}`);
      const url = new URL(started().url);
      url.pathname = `/${name}`;
      return url.href;
    },
  };
}

/** A URL of the test cluster naming another database. */
export function databaseUrl(name: string): string {
  const url = new URL(postgresCluster().url);
  url.pathname = `/${name}`;
  return url.href;
}

export function createTestDatabase(engine: Engine = ENGINE): Promise<TestDatabase> {
  return engine === 'postgres' ? createPostgresDatabase() : Promise.resolve(createSqliteDatabase());
}

function createSqliteDatabase(): TestDatabase {
  const dataDir = tempDir('kb-data-');
  const file = join(dataDir, DATABASE_FILE);
  const withDb = <T>(readonly: boolean, fn: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    engine: 'sqlite',
    storage: { engine: 'sqlite', dataDir },
    env: { KB_DATA_DIR: dataDir },
    open: async () => SqliteStore.open(dataDir),
    sql: async (text, params = []) =>
      withDb(false, (db) => {
        const statement = db.prepare(text);
        return statement.reader ? statement.all(...params) : (statement.run(...params), []);
      }),
    dump: async () =>
      withDb(true, (db) =>
        JSON.stringify(
          DATA_TABLES.map((table) =>
            db
              .prepare(dumped(table))
              .raw()
              .all()
              .map((row) => JSON.stringify(row, (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString('hex') : value)))
              .sort(),
          ),
        ),
      ),
    storedBytes: async () => Buffer.concat(readdirSync(dataDir).map((name) => readFileSync(join(dataDir, name)))),
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

let databases = 0;

async function createPostgresDatabase(): Promise<TestDatabase> {
  const cluster = postgresCluster();
  const name = `kb_test_${process.pid}_${++databases}_${randomBytes(3).toString('hex')}`;
  await pgQuery(cluster.url, `CREATE DATABASE ${name}`);
  // WAL segments from here on can hold this database's writes.
  const start = (await pgQuery(cluster.url, 'SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS segment')).rows[0].segment as string;
  const url = databaseUrl(name);
  return {
    engine: 'postgres',
    storage: { engine: 'postgres', url, waitMs: 0 },
    env: { KB_DATABASE_URL: url },
    open: (options = {}) => PostgresStore.open({ url, waitMs: 0, ...options }),
    sql: async (text, params = []) => {
      let n = 0;
      return (await pgQuery(url, text.replace(/\?/g, () => `$${++n}`), params)).rows;
    },
    dump: async () => {
      const tables = [];
      for (const table of DATA_TABLES) {
        const { rows } = await pgQuery(url, `SELECT row_to_json(t)::text AS row FROM (${dumped(table)}) t`);
        tables.push(rows.map((row: { row: string }) => row.row).sort());
      }
      return JSON.stringify(tables);
    },
    storedBytes: async () => {
      await pgQuery(cluster.url, 'CHECKPOINT');
      const oid = (await pgQuery(cluster.url, 'SELECT oid FROM pg_database WHERE datname = $1', [name])).rows[0].oid as number;
      const files = listFiles(join(cluster.dataDir, 'base', String(oid)));
      const wal = join(cluster.dataDir, 'pg_wal');
      for (const segment of readdirSync(wal)) if (/^[0-9A-F]{24}$/.test(segment) && segment >= start) files.push(join(wal, segment));
      return Buffer.concat(files.map((file) => readFileSync(file)));
    },
    drop: async () => {
      await pgQuery(cluster.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

function listFiles(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

/** A list for the test databases a test file creates: each is dropped once the file's tests are done. */
export function droppedAfterAll(): TestDatabase[] {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.splice(0).map((database) => database.drop()));
  });
  return databases;
}
