import type Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../helpers/database.js';
import { call, expectFailure, type Reply } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The commit of a write fails after the write itself ran (and, under an Idempotency-Key, after its reply was made):
 * the client must get a 5xx envelope, and nothing of the request may be kept, the reply under the key included.
 * docs/contract.md, Storage faults.
 */
describe('a write whose commit fails', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ listen: false });
  });
  afterAll(() => server.close());

  const create = (key: string, idempotencyKey: string | undefined) =>
    call(server.app, 'POST', '/v1/ns_create', {
      token: server.token,
      json: { key, description: 'must not be kept unless acknowledged' },
      ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
    });

  const namespaces = async () =>
    ((await call(server.app, 'GET', '/v1/ns_list', { token: server.token })).body as { data: Array<{ key: string }> }).data.map((ns) => ns.key);

  /**
   * Sends the request while the engine is made to fail its commit, the way each engine really fails: SQLite's COMMIT
   * raises SQLITE_FULL (as it does when the WAL cannot grow on a full disk); PostgreSQL loses the connection while
   * the transaction is open (pg_terminate_backend, as in a database restart).
   */
  const withFailingCommit = ENGINE === 'sqlite' ? sqliteCommitFails : postgresConnectionLost;

  for (const keyed of [true, false]) {
    const how = keyed ? 'with an Idempotency-Key' : 'without an Idempotency-Key';
    it(`answers a 5xx envelope and keeps nothing, ${how}; a retry then succeeds`, async () => {
      const key = keyed ? 'lost-keyed' : 'lost-plain';
      const idempotencyKey = keyed ? 'commit-fails-1' : undefined;
      const failed = await withFailingCommit(server, keyed, () => create(key, idempotencyKey));
      const expected = ENGINE === 'sqlite' ? 507 : 503;
      const envelope = expectFailure(failed, expected);
      expect(envelope.message).toMatch(ENGINE === 'sqlite' ? /disk space; nothing was written/ : /cannot be reached/);
      if (expected === 503) expect(failed.headers['retry-after']).toMatch(/^\d+$/);

      // Nothing kept: not the namespace, not a reply under the key.
      expect(await namespaces()).not.toContain(key);
      if (idempotencyKey) {
        expect(await server.database.sql('SELECT key FROM idempotency WHERE key = ?', [idempotencyKey])).toEqual([]);
      }
      // Reads keep working, and the same request (same key) runs now, as a first request, not a replay.
      const retried = await create(key, idempotencyKey);
      expect(retried.status).toBe(200);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(await namespaces()).toContain(key);
    });
  }
});

/** SQLite: the next COMMIT of the store's connection raises SQLITE_FULL, once. */
async function sqliteCommitFails(server: TestServer, _keyed: boolean, send: () => Promise<Reply>): Promise<Reply> {
  const db = (server.store as unknown as { db: Database.Database }).db;
  const exec = db.exec.bind(db);
  let armed = true;
  db.exec = (sql: string) => {
    if (armed && sql === 'COMMIT') {
      armed = false;
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    }
    return exec(sql);
  };
  try {
    const reply = await send();
    expect(armed).toBe(false);
    return reply;
  } finally {
    db.exec = exec;
  }
}

/**
 * PostgreSQL: another session locks a table the write is about to write, so the write waits inside its open
 * transaction; the write's backend is then terminated. Under a key the write waits on the idempotency table, after
 * the namespace was inserted and its reply made; without one, on the namespaces table.
 */
async function postgresConnectionLost(server: TestServer, keyed: boolean, send: () => Promise<Reply>): Promise<Reply> {
  const url = (server.database.storage as { url: string }).url;
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query(`LOCK TABLE ${keyed ? 'idempotency' : 'namespaces'} IN SHARE ROW EXCLUSIVE MODE`);
    const pending = send();
    let terminated = 0;
    for (let tries = 0; terminated === 0 && tries < 500; tries++) {
      const { rows } = await blocker.query<{ ended: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
      );
      terminated = rows.filter((row) => row.ended).length;
      if (terminated === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(terminated).toBe(1);
    await blocker.query('ROLLBACK');
    return await pending;
  } finally {
    await blocker.end();
  }
}
