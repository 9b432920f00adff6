import pg from 'pg';
import { APPLICATION, CREATE_SCHEMA_TABLE, POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, SCHEMA_TABLE } from './postgres-migrations.js';
import { connectionConfig, MAINTENANCE_ROUND_TRIP_MS } from './postgres-pool.js';
import { isConnectionFailure, MIGRATION_LOCK, reasonOf, sqlState } from './postgres-sql.js';
import { StoreOpenError, StoreUnreachableError } from './store.js';
import type { PostgresStoreOptions } from './postgres.js';

// Opening a PostgreSQL database for kb: waiting for it to answer, and bringing its schema to this kb's version.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * Connects once to see that the database answers, retrying while it is unreachable (not started yet, restarting,
 * a name not resolvable yet) until waitMs has passed. A database that answers but refuses (wrong password, no such
 * database) is reported at once: waiting would not change its answer.
 */
export async function waitForDatabase(options: PostgresStoreOptions, shown: string, redact: (text: string) => string): Promise<void> {
  const waitMs = options.waitMs ?? 10_000;
  const deadline = Date.now() + waitMs;
  let delay = 100;
  let told = false;
  for (;;) {
    const left = deadline - Date.now();
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: Math.min(5000, Math.max(left, 1000)) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      const reason = redact(reasonOf(error));
      if (!isConnectionFailure(error)) throw refusal(`cannot open the database at ${shown}: ${reason}`, error);
      if (Date.now() >= deadline) {
        throw new StoreUnreachableError(
          `cannot reach the database at ${shown}${waitMs > 0 ? ` (waited ${seconds(waitMs)})` : ''}: ${reason}`,
          'Check that PostgreSQL is running and that the URL names the right host and port.',
        );
      }
      if (!told) {
        options.onWaiting?.(`cannot reach the database at ${shown} yet (${reason}); trying again for up to ${seconds(waitMs)}`);
        told = true;
      }
      await sleep(Math.min(delay, Math.max(deadline - Date.now(), 0)));
      delay = Math.min(delay * 2, 1000);
    }
  }
}

/** A StoreOpenError with help for the refusals PostgreSQL states by SQLSTATE. */
export function refusal(message: string, error: unknown): StoreOpenError {
  const state = sqlState(error);
  const help =
    state === '28P01' || state === '28000'
      ? 'Check the user name and password in the URL.'
      : state === '3D000'
        ? 'Create the database first (createdb NAME), or name an existing one.'
        : state === '42501'
          ? 'Let the user create tables in the database (it should own it), or pick a database it owns.'
          : undefined;
  return new StoreOpenError(message, help);
}

/**
 * Brings the schema to this kb's version in one transaction, under an advisory lock, so that replicas starting
 * together migrate once. Refuses, without writing anything, a database that is not kb's (it has tables but no
 * kb_schema, or a kb_schema of another application) or whose schema is newer than this kb. On a connection of its
 * own, under the maintenance limits (postgres-pool.ts): a migration, or the wait for another replica's, may be long.
 */
export async function migrate(url: string, shown: string, redact: (text: string) => string): Promise<void> {
  const client = new pg.Client(connectionConfig(url, 'kb serve (migrate)', MAINTENANCE_ROUND_TRIP_MS));
  // For the client's whole life: a connection that breaks must not raise an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw refusal(`cannot open the database at ${shown}: ${redact(reasonOf(error))}`, error);
  }
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows } = await client.query<{ schema: string | null; marked: boolean; relations: number }>(
      `SELECT current_schema() AS schema,
              to_regclass(quote_ident(current_schema()) || '.${SCHEMA_TABLE}') IS NOT NULL AS marked,
              (SELECT count(*) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
               WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')) AS relations`,
    );
    const found = rows[0] as { schema: string | null; marked: boolean; relations: number };
    if (found.schema === null) {
      throw new StoreOpenError(`the database at ${shown} has no schema to keep kb's tables in`, 'Check the search_path of the user.');
    }
    let version = 0;
    if (found.marked) {
      const marks = await client.query<{ application: string; version: number }>(`SELECT application, version FROM ${SCHEMA_TABLE}`);
      const mark = marks.rows[0];
      if (marks.rows.length !== 1 || mark?.application !== APPLICATION) throw foreign(shown);
      version = mark.version;
    } else if (found.relations > 0) {
      throw foreign(shown);
    }
    if (version > POSTGRES_SCHEMA_VERSION) {
      throw new StoreOpenError(
        `the database at ${shown} has schema version ${version}, newer than this kb supports (${POSTGRES_SCHEMA_VERSION}).`,
        'Upgrade kb to open it.',
      );
    }
    if (version < POSTGRES_SCHEMA_VERSION) {
      if (version === 0) {
        await client.query(CREATE_SCHEMA_TABLE);
        await client.query(`INSERT INTO ${SCHEMA_TABLE} (application, version) VALUES ($1, 0)`, [APPLICATION]);
      }
      for (let next = version; next < POSTGRES_SCHEMA_VERSION; next++) await client.query(POSTGRES_MIGRATIONS[next] as string);
      await client.query(`UPDATE ${SCHEMA_TABLE} SET version = $1`, [POSTGRES_SCHEMA_VERSION]);
    }
    await client.query('COMMIT');
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    if (isConnectionFailure(error)) throw new StoreUnreachableError(`lost the database at ${shown}: ${redact(reasonOf(error))}`);
    throw refusal(`cannot set up kb's tables in the database at ${shown}: ${redact(reasonOf(error))}`, error);
  } finally {
    // Ending the connection ends its transaction too: what failed is rolled back.
    await client.end().catch(() => undefined);
  }
}

export function foreign(shown: string): StoreOpenError {
  return new StoreOpenError(
    `the database at ${shown} is not a kb database: it has tables of another application.`,
    'Give kb an empty database of its own (createdb kb), or one kb created.',
  );
}
