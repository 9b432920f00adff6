import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import type { Store } from '../../src/store/store.js';
import { call, expectFailure } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('Idempotency-Key on POST and DELETE', () => {
  let server: TestServer;
  let token: string;
  let other: string;
  const post = (path: string, key: string | undefined, json: unknown, as = token) =>
    call(server.app, path === '/v1/base_delete' ? 'DELETE' : 'POST', path, {
      token: as,
      json,
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });
  const bases = async (namespace: string) =>
    (await call(server.app, 'GET', `/v1/base_list?namespace=${namespace}`, { token })).body as { data: Array<{ key: string }> };

  beforeAll(async () => {
    server = await startTestServer({ listen: false });
    token = server.token;
    other = await server.newToken('other-org');
  });
  afterAll(() => server.close());

  it('runs a create once and replays its first reply, byte for byte, to a repeat', async () => {
    const first = await post('/v1/base_create', 'key-1', { namespace: 'idem', description: 'generated key' });
    const again = await post('/v1/base_create', 'key-1', { description: 'generated key', namespace: 'idem' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect((await bases('idem')).data).toHaveLength(1);
  });

  it('answers 422 to the same key with another body, and writes nothing', async () => {
    await post('/v1/ns_create', 'key-2', { key: 'first-ns' });
    const other = await post('/v1/ns_create', 'key-2', { key: 'second-ns' });
    expect(expectFailure(expect, other, 422).message).toMatch(/different request/);
    const listed = (await call(server.app, 'GET', '/v1/ns_list', { token })).body as { data: Array<{ key: string }> };
    expect(listed.data.map((ns) => ns.key)).not.toContain('second-ns');
  });

  it('keeps keys per organization', async () => {
    const mine = await post('/v1/ns_create', 'shared-key', { key: 'per-org' });
    const theirs = await post('/v1/ns_create', 'shared-key', { key: 'per-org' }, other);
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('replays a 404 that ran, even once the base exists', async () => {
    const missing = await post('/v1/base_delete', 'key-3', { namespace: 'later', base: 'later-base' });
    expect(missing.status).toBe(404);
    await post('/v1/base_create', undefined, { namespace: 'later', key: 'later-base' });
    const replay = await post('/v1/base_delete', 'key-3', { namespace: 'later', base: 'later-base' });
    expect(replay.status).toBe(404);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await bases('later')).data.map((base) => base.key)).toEqual(['later-base']);
  });

  it('keeps nothing for a request refused before it ran (400), so a corrected retry runs', async () => {
    expect((await post('/v1/ns_create', 'key-4', { key: 'x' })).status).toBe(400);
    expect((await post('/v1/ns_create', 'key-4', { key: 'fixed-ns' })).status).toBe(200);
    expect((await post('/v1/ns_create', 'key-5', { key: 'y' })).status).toBe(400);
    const retried = await post('/v1/ns_create', 'key-5', { key: 'y' });
    expect(retried.status).toBe(400);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  /** An app over the test's store whose keyed writes wait until `release` is called. */
  const heldApp = (repeatWaitMs?: number) => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const store = new Proxy(server.store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'performKeyed') return async (...args: Parameters<Store['performKeyed']>) => held.then(() => target.performKeyed(...args));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const app = buildApp({ store, logger: createLogger('silent'), ...(repeatWaitMs === undefined ? {} : { repeatWaitMs }) });
    return { app, release };
  };

  it('answers a repeat that arrives while the first request runs with that request\'s reply, once it is done', async () => {
    const { app, release } = heldApp();
    const send = () =>
      call(app, 'POST', '/v1/base_create', { token, json: { namespace: 'race-idem', key: 'only' }, headers: { 'idempotency-key': 'key-6' } });
    const pending = [send(), send(), send()];
    // Both repeats are waiting (none answered) while the first request is held.
    const early = await Promise.race([Promise.race(pending).then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
    expect(early).toBe('waiting');
    release();
    const replies = await Promise.all(pending);
    await app.close();
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
    expect(new Set(replies.map((reply) => reply.text)).size).toBe(1);
    expect(replies.filter((reply) => reply.headers['idempotent-replayed'] === 'true')).toHaveLength(2);
    expect((await bases('race-idem')).data.map((base) => base.key)).toEqual(['only']);
  });

  it('answers 409 with Retry-After to a repeat whose first request is still running past the wait, and replays it after', async () => {
    const { app, release } = heldApp(100);
    const send = () =>
      call(app, 'POST', '/v1/base_create', { token, json: { namespace: 'slow-idem', key: 'only' }, headers: { 'idempotency-key': 'key-10' } });
    const first = send();
    const repeat = await send();
    expect(expectFailure(expect, repeat, 409).message).toMatch(/still in progress/);
    expect(repeat.headers['retry-after']).toBe('1');
    release();
    expect((await first).status).toBe(200);
    await app.close();
    const replay = await post('/v1/base_create', 'key-10', { namespace: 'slow-idem', key: 'only' });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses a malformed key with 400', async () => {
    expect((await post('/v1/ns_create', 'x'.repeat(256), { key: 'long-key-ns' })).status).toBe(400);
    expect((await post('/v1/ns_create', 'has space', { key: 'space-key-ns' })).status).toBe(400);
  });

  it('keeps a key for 24 hours: an older one is forgotten, and purged', async () => {
    await post('/v1/base_create', 'key-7', { namespace: 'aging', key: 'aged' });
    await server.database.sql("UPDATE idempotency SET created_at = ? WHERE key = 'key-7'", [new Date(Date.now() - 25 * 3600 * 1000).toISOString()]);
    // Forgotten: the create runs again and meets the base it made a day ago.
    expect((await post('/v1/base_create', 'key-8', { namespace: 'aging', key: 'other' })).status).toBe(200);
    const rerun = await post('/v1/base_create', 'key-7', { namespace: 'aging', key: 'aged' });
    expect(rerun.status).toBe(409);
    expect(await server.store.idempotencyPurge()).toBe(0);
  });

  it('purges keys older than 24 hours', async () => {
    await post('/v1/ns_create', 'key-9', { key: 'purge-me' });
    await server.database.sql("UPDATE idempotency SET created_at = ? WHERE key = 'key-9'", [new Date(Date.now() - 25 * 3600 * 1000).toISOString()]);
    expect(await server.store.idempotencyPurge()).toBe(1);
    const rerun = await post('/v1/ns_create', 'key-9', { key: 'purge-me' });
    expect(rerun.status).toBe(409);
    expect(rerun.headers['idempotent-replayed']).toBeUndefined();
  });
});
