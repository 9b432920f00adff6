import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../helpers/database.js';
import { call, expectFailure, type Reply } from '../helpers/http.js';
import { failCommitsWhen } from '../helpers/commit-faults.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

/**
 * The commit of a write fails after the write itself ran (and, under an Idempotency-Key, after its reply was made):
 * the client must get a 5xx envelope, and nothing of the request may be kept, the reply under the key included.
 * docs/contract.md, Storage faults. The failure is a real one, raised by the database at COMMIT: a deferred
 * constraint the test adds to the schema, armed for one namespace key at a time (so each case stands alone).
 */
describe('a write whose commit fails', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Listening, for GET /v1/watch's stream (the other requests are injected).
    server = await startTestServer();
    await server.database.sql('CREATE TABLE fail_commit (key TEXT PRIMARY KEY)');
    // Armed for one namespace key at a time, by a row in fail_commit.
    await failCommitsWhen(server.database, 'NEW.key IN (SELECT key FROM fail_commit)');
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

  /** Nothing of a failed request was kept (not its namespace, not a reply under its key); the same request then runs as a first one. */
  const expectNothingKeptThenRetried = async (key: string, idempotencyKey: string | undefined) => {
    expect(await namespaces()).not.toContain(key);
    if (idempotencyKey) {
      expect(await server.database.sql('SELECT key FROM idempotency WHERE key = ?', [idempotencyKey])).toEqual([]);
    }
    const retried = await create(key, idempotencyKey);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await namespaces()).toContain(key);
  };

  for (const keyed of [true, false]) {
    const how = keyed ? 'with an Idempotency-Key' : 'without an Idempotency-Key';
    it(`answers a 5xx envelope when COMMIT fails and keeps nothing, ${how}; a retry then succeeds`, async () => {
      const key = keyed ? 'at-commit-keyed' : 'at-commit-plain';
      const idempotencyKey = keyed ? 'commit-fails-at-commit' : undefined;
      await server.database.sql('INSERT INTO fail_commit (key) VALUES (?)', [key]);
      const failed = await create(key, idempotencyKey);
      // SQLite's broken deferred key is no storage fault kb knows (500); PostgreSQL's is a full disk (507).
      const envelope = expectFailure(expect, failed, ENGINE === 'sqlite' ? 500 : 507);
      if (ENGINE === 'postgres') expect(envelope.message).toMatch(/disk space; nothing was written/);
      await server.database.sql('DELETE FROM fail_commit WHERE key = ?', [key]);

      await expectNothingKeptThenRetried(key, idempotencyKey);
    });
  }

  it('never streams a write whose COMMIT failed: the next event is the next write that committed, at the next cursor', async () => {
    const stream = await openWatch(server.url, server.token);
    expect(stream.status).toBe(200);
    const began = Number(stream.headers.get('kb-watch-cursor'));
    await server.database.sql('INSERT INTO fail_commit (key) VALUES (?)', ['never-streamed']);
    expectFailure(expect, await create('never-streamed', undefined), ENGINE === 'sqlite' ? 500 : 507);
    await server.database.sql('DELETE FROM fail_commit WHERE key = ?', ['never-streamed']);
    expect((await create('streamed-after', undefined)).status).toBe(200);
    await stream.until((events) => events.length >= 1);
    stream.close();
    expect(stream.events.map((event) => [Number(event.id), event.data.type, event.data.object.key])).toEqual([[began + 1, 'created', 'streamed-after']]);
  });

  if (ENGINE === 'postgres') {
    for (const keyed of [true, false]) {
      const how = keyed ? 'with an Idempotency-Key' : 'without an Idempotency-Key';
      it(`answers 503 when the connection is lost inside the write's transaction and keeps nothing, ${how}; a retry then succeeds`, async () => {
        const key = keyed ? 'lost-keyed' : 'lost-plain';
        const idempotencyKey = keyed ? 'commit-fails-1' : undefined;
        const failed = await postgresConnectionLost(server, keyed, () => create(key, idempotencyKey));
        const envelope = expectFailure(expect, failed, 503);
        expect(envelope.message).toMatch(/cannot be reached/);
        expect(failed.headers['retry-after']).toMatch(/^\d+$/);
        await expectNothingKeptThenRetried(key, idempotencyKey);
      });
    }
  }
});

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
