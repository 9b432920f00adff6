import { describe, expect, it } from 'vitest';
import { generateToken } from '../../src/server/tokens.js';
import { call } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Counts the store's authentications (a hash and, on PostgreSQL, maybe a query each) while `run` goes. */
async function authentications(server: TestServer, run: () => Promise<void>): Promise<number> {
  const store = server.store;
  const original = store.authenticate;
  let count = 0;
  store.authenticate = (hash) => {
    count++;
    return original.call(store, hash);
  };
  try {
    await run();
  } finally {
    store.authenticate = original;
  }
  return count;
}

describe('the known-token cache', () => {
  it('keeps a token known across writes of data: only a change of tokens makes it ask the store again', async () => {
    const server = await startTestServer({ listen: false });
    try {
      const auth = { token: server.token };
      expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
      const asked = await authentications(server, async () => {
        for (let i = 0; i < 5; i++) {
          const created = await call(server.app, 'POST', '/v1/base_create', { ...auth, json: { namespace: 'kept', key: `base-${i}` } });
          expect(created.status, created.text).toBe(200);
          expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
        }
      });
      expect(asked).toBe(0);
      // A token made since is a change of tokens: the known one is looked up again, once.
      const other = await server.newToken('globex');
      const again = await authentications(server, async () => {
        expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
        expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
      });
      expect(again).toBe(1);
      expect((await call(server.app, 'GET', '/v1/auth', { token: other })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses a revoked token at once, for reads and writes, whether this server or another process revoked it', async () => {
    const server = await startTestServer({ listen: false });
    const other = await server.database.open();
    try {
      for (const revoker of ['this server', 'another process'] as const) {
        const doomed = generateToken();
        const info = await server.store.createToken('acme', doomed.id, doomed.hash);
        const auth = { token: doomed.token };
        expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
        expect((await call(server.app, 'POST', '/v1/ns_create', { ...auth, json: { key: `before-${doomed.id}` } })).status).toBe(200);
        expect((await call(server.app, 'GET', '/v1/auth', auth)).status).toBe(200);
        await (revoker === 'this server' ? server.store : other).revokeToken(info.id);
        expect((await call(server.app, 'POST', '/v1/ns_create', { ...auth, json: { key: `after-${doomed.id}` } })).status, revoker).toBe(401);
        expect((await call(server.app, 'GET', '/v1/auth', auth)).status, revoker).toBe(401);
        expect((await call(server.app, 'GET', '/v1/ns_list', auth)).status, revoker).toBe(401);
        const listed = await call(server.app, 'GET', '/v1/ns_list', { token: server.token });
        expect((listed.body as { data: Array<{ key: string }> }).data.map((ns) => ns.key)).not.toContain(`after-${doomed.id}`);
      }
    } finally {
      await other.close();
      await server.close();
    }
  });
});
