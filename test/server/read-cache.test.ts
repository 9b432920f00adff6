import { describe, expect, it } from 'vitest';
import { VersionedCache } from '../../src/server/read-cache.js';
import { generateToken, hashToken } from '../../src/server/tokens.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

describe('VersionedCache', () => {
  it('keeps values for one version and forgets them all at the next', () => {
    const cache = new VersionedCache<string>(100);
    expect(cache.get('1', 'a')).toBeUndefined();
    cache.set('1', 'a', 'A');
    expect(cache.get('1', 'a')).toBe('A');
    expect(cache.get('2', 'a')).toBeUndefined();
    cache.set('1', 'a', 'stale');
    expect(cache.get('2', 'a')).toBeUndefined();
  });

  it('drops a value read at a version older than the newest seen', () => {
    const cache = new VersionedCache<string>(100);
    cache.get('1', 'a');
    cache.get('2', 'b');
    cache.set('1', 'a', 'read before the write of version 2');
    expect(cache.get('2', 'a')).toBeUndefined();
  });

  it('keeps each value at the version it was read at, so a new version of one key leaves the others', () => {
    const cache = new VersionedCache<string>(100);
    cache.set('acme.1', 'acme', 'A1');
    cache.set('globex.1', 'globex', 'G1');
    expect(cache.get('acme.2', 'acme')).toBeUndefined();
    expect(cache.get('globex.1', 'globex')).toBe('G1');
    expect(cache.get('acme.1', 'acme')).toBeUndefined();
  });

  it('stays within its capacity, forgetting the least recently used first', () => {
    const cache = new VersionedCache<string>(12, (value) => value.length);
    cache.get('v', '');
    cache.set('v', 'a', 'aaa');
    cache.set('v', 'b', 'bbb');
    cache.set('v', 'c', 'ccc');
    expect(cache.get('v', 'a')).toBe('aaa');
    cache.set('v', 'd', 'ddd');
    cache.set('v', 'e', 'eee');
    expect(cache.get('v', 'b')).toBeUndefined();
    expect(cache.get('v', 'a')).toBe('aaa');
    expect(cache.get('v', 'e')).toBe('eee');
    cache.set('v', 'big', 'x'.repeat(4));
    expect(cache.get('v', 'big')).toBeUndefined();
  });
});

describe('answers kept between writes', () => {
  it('a list read twice reflects every write in between, by this server or by another store over the same database', async () => {
    const server = await startTestServer({ listen: false });
    const other = await server.database.open();
    try {
      const auth = { token: server.token };
      const list = async () => ((await call(server.app, 'GET', '/v1/ns_list', auth)).body as { data: { key: string }[] }).data.map((ns) => ns.key);
      expect(await list()).toEqual([]);
      expect(await list()).toEqual([]);
      expect((await call(server.app, 'POST', '/v1/ns_create', { ...auth, json: { key: 'mine' } })).status).toBe(200);
      expect(await list()).toEqual(['mine']);
      const principal = await other.authenticate(hashToken(server.token));
      await other.nsCreate(principal!.orgId, { key: 'theirs', description: null });
      expect(await list()).toEqual(['mine', 'theirs']);
      await other.baseCreate(principal!.orgId, { namespace: 'theirs', key: 'faq', description: 'x' });
      const bases = await call(server.app, 'GET', '/v1/base_list?namespace=theirs', auth);
      expect((bases.body as { data: unknown[] }).data).toEqual([{ namespace: 'theirs', key: 'faq', description: 'x' }]);
      await other.baseUpdate(principal!.orgId, 'theirs', 'faq', { description: 'y' });
      const again = await call(server.app, 'GET', '/v1/base_list?namespace=theirs', auth);
      expect((again.body as { data: unknown[] }).data).toEqual([{ namespace: 'theirs', key: 'faq', description: 'y' }]);
    } finally {
      await other.close();
      await server.close();
    }
  });

  it('a token revoked by another process (kb serve token revoke) is refused at the next request', async () => {
    const server = await startTestServer({ listen: false });
    const other = await server.database.open();
    try {
      const second = generateToken();
      await other.createToken('acme', second.id, second.hash);
      expect((await call(server.app, 'GET', '/v1/auth', { token: second.token })).status).toBe(200);
      expect((await call(server.app, 'GET', '/v1/auth', { token: second.token })).status).toBe(200);
      await other.revokeToken(second.id);
      expect((await call(server.app, 'GET', '/v1/auth', { token: second.token })).status).toBe(401);
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: second.token })).status).toBe(401);
      expect((await call(server.app, 'GET', '/v1/auth', { token: server.token })).status).toBe(200);
    } finally {
      await other.close();
      await server.close();
    }
  });

  it('lists of one organization are never answered to another', async () => {
    const server = await startTestServer({ listen: false });
    try {
      const otherToken = await server.newToken('globex');
      await call(server.app, 'POST', '/v1/ns_create', { token: server.token, json: { key: 'acme-only' } });
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: server.token })).body).toMatchObject({ data: [{ key: 'acme-only' }] });
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: otherToken })).body).toEqual({ success: true, data: [] });
    } finally {
      await server.close();
    }
  });
});

describe('a read with a body', () => {
  it('is 415 without Content-Type, after the token is checked, as any request with an untyped body', async () => {
    const server = await startTestServer({ listen: false });
    try {
      const headers = { 'content-length': '5' };
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: server.token, headers, payload: 'hello' })).status).toBe(415);
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: 'kbt_nope', headers, payload: 'hello' })).status).toBe(401);
      expect((await call(server.app, 'GET', '/v1/ns_list', { token: server.token })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
