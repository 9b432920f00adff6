import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** GET /v1/base_list_all, kb serve's extension that reads every base of an organization in one reply (kb export). */
describe('base_list_all', () => {
  let server: TestServer;
  let other: string;
  beforeAll(async () => {
    server = await startTestServer({ listen: false });
    other = await server.newToken('other-org');
  });
  afterAll(() => server.close());

  const post = (path: string, json: unknown, token = server.token) => call(server.app, 'POST', path, { token, json });

  it('gives every base of the organization, ordered by namespace key then base key in byte order, and no other\'s', async () => {
    for (const [namespace, key] of [['zeta', 'b-1'], ['Alpha', 'zzz'], ['Alpha', 'Abc'], ['zeta', 'a-1'], ['mid', 'only']]) {
      expect((await post('/v1/base_create', { namespace, key, description: `${namespace}/${key}` })).status).toBe(200);
    }
    await post('/v1/ns_create', { key: 'empty-ns' });
    await post('/v1/base_create', { namespace: 'zeta', key: 'theirs' }, other);
    const reply = await call(server.app, 'GET', '/v1/base_list_all', { token: server.token });
    expect(reply.status).toBe(200);
    expect((reply.body as { data: Array<{ namespace: string; key: string }> }).data.map((base) => `${base.namespace}/${base.key}`)).toEqual([
      'Alpha/Abc',
      'Alpha/zzz',
      'mid/only',
      'zeta/a-1',
      'zeta/b-1',
    ]);
    expect((reply.body as { data: unknown[] }).data[0]).toEqual({ namespace: 'Alpha', key: 'Abc', description: 'Alpha/Abc' });
  });

  it('needs a token and takes no query', async () => {
    expect((await call(server.app, 'GET', '/v1/base_list_all')).status).toBe(401);
    expect((await call(server.app, 'GET', '/v1/base_list_all?namespace=zeta', { token: server.token })).status).toBe(400);
  });
});
