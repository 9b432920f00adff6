import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import type { AppObserver } from '../../src/server/observer.js';
import { generateToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/database.js';
import { call } from '../helpers/http.js';

/** DELETE /v1/ns_delete, kb serve's extension (docs/contract.md, The local server), over the engine under test. */
describe(`DELETE /v1/ns_delete (${ENGINE})`, () => {
  let database: TestDatabase;
  let store: Store;
  let app: ReturnType<typeof buildApp>;
  let acme: string;
  let globex: string;
  /** Each read of a kept route, in order: whether it was answered from what was kept. */
  let kept: { route: string; hit: boolean }[];

  beforeEach(async () => {
    database = await createTestDatabase();
    store = await database.open();
    kept = [];
    const observer: AppObserver = { responded: () => undefined, keptAnswer: (route, hit) => kept.push({ route, hit }), replayed: () => undefined };
    app = buildApp({ store, logger: createLogger('silent'), observer });
    await app.ready();
    const token = async (org: string) => {
      const made = generateToken();
      await store.createToken(org, made.id, made.hash);
      return made.token;
    };
    [acme, globex] = [await token('acme'), await token('globex')];
  });

  afterEach(async () => {
    await app.close();
    await store.close();
    await database.drop();
  });

  const post = (token: string, path: string, json: unknown) => call(app, 'POST', `/v1/${path}`, { token, json });
  const nsDelete = (token: string, json: unknown, headers: Record<string, string> = {}) => call(app, 'DELETE', '/v1/ns_delete', { token, json, headers });
  const keys = async (token: string) => ((await call(app, 'GET', '/v1/ns_list', { token })).body as { data: { key: string }[] }).data.map((ns) => ns.key);

  it('deletes an empty namespace and answers it; again is 404', async () => {
    await post(acme, 'ns_create', { key: 'empty', description: 'Nothing' });
    const deleted = await nsDelete(acme, { namespace: 'empty' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { key: 'empty', description: 'Nothing' } });
    expect(await keys(acme)).toEqual([]);
    const again = await nsDelete(acme, { namespace: 'empty' });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ success: false, message: 'Namespace empty not found' });
  });

  it('is 409 for a namespace with bases, saying how many and what to do, unless "cascade": true', async () => {
    await post(acme, 'base_create', { namespace: 'docs', key: 'faq' });
    await post(acme, 'base_create', { namespace: 'docs', key: 'guide' });
    for (const body of [{ namespace: 'docs' }, { namespace: 'docs', cascade: false }]) {
      const refused = await nsDelete(acme, body);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({ success: false, message: 'Namespace docs holds 2 bases', help: 'Delete its bases first, or send "cascade": true to delete them with it.' });
    }
    expect(await keys(acme)).toEqual(['docs']);
    const cascaded = await nsDelete(acme, { namespace: 'docs', cascade: true });
    expect(cascaded.status).toBe(200);
    expect(await keys(acme)).toEqual([]);
    expect((await call(app, 'GET', '/v1/base_list_all', { token: acme })).body).toEqual({ success: true, data: [] });
    expect((await call(app, 'GET', '/v1/base_list?namespace=docs', { token: acme })).status).toBe(404);
  });

  it('refuses a malformed body with 400 and changes nothing', async () => {
    await post(acme, 'ns_create', { key: 'docs' });
    for (const body of [{}, { namespace: 'a!' }, { namespace: 'docs', cascade: 'yes' }, { namespace: 'docs', extra: 1 }]) {
      expect((await nsDelete(acme, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await keys(acme)).toEqual(['docs']);
  });

  it("never reaches another organization's namespace of the same key", async () => {
    await post(globex, 'base_create', { namespace: 'docs', key: 'faq' });
    expect((await nsDelete(acme, { namespace: 'docs', cascade: true })).status).toBe(404);
    expect(await keys(globex)).toEqual(['docs']);
  });

  it('replays its reply to a repeat of its Idempotency-Key, and refuses the key with another body (422)', async () => {
    await post(acme, 'base_create', { namespace: 'docs', key: 'faq' });
    const headers = { 'idempotency-key': 'delete-docs-1' };
    const first = await nsDelete(acme, { namespace: 'docs', cascade: true }, headers);
    expect(first.status).toBe(200);
    // The namespace is made again: a replay does not run, so it stays.
    await post(acme, 'ns_create', { key: 'docs' });
    const repeat = await nsDelete(acme, { namespace: 'docs', cascade: true }, headers);
    expect(repeat.status).toBe(200);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.text).toBe(first.text);
    expect(await keys(acme)).toEqual(['docs']);
    expect((await nsDelete(acme, { namespace: 'docs' }, headers)).status).toBe(422);
  });

  it("drops the kept lists of its own organization only: another's are still answered from what was kept", async () => {
    await post(acme, 'ns_create', { key: 'mine' });
    await post(globex, 'ns_create', { key: 'theirs' });
    expect(await keys(acme)).toEqual(['mine']);
    expect(await keys(globex)).toEqual(['theirs']);
    kept.length = 0;
    expect((await nsDelete(acme, { namespace: 'mine' })).status).toBe(200);
    expect(await keys(acme)).toEqual([]);
    expect(await keys(globex)).toEqual(['theirs']);
    expect(kept).toEqual([
      { route: 'ns_list', hit: false },
      { route: 'ns_list', hit: true },
    ]);
  });
});
