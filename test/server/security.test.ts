import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/api/routes.js';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { generateToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/database.js';
import { call, type CallOptions, expectFailure } from '../helpers/http.js';

describe(`no one gets in where they do not belong (${ENGINE})`, () => {
  let database: TestDatabase;
  let store: Store;
  let app: FastifyInstance;
  const logs: string[] = [];
  const tokens: Record<string, string> = {};
  let address = 0;
  /** Each request from its own address, so the failed-auth limit never decides these answers. */
  const fresh = () => `10.1.${Math.floor(address / 250)}.${(address++ % 250) + 1}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await database.open();
    app = buildApp({ store, logger: createLogger('info', { sink: (line) => logs.push(line) }) });
    for (const org of ['alpha', 'beta', 'gamma']) {
      const minted = generateToken();
      await store.createToken(org, minted.id, minted.hash);
      tokens[org] = minted.token;
    }
    const revoked = generateToken();
    await store.createToken('alpha', revoked.id, revoked.hash);
    await store.revokeToken(revoked.id);
    tokens.revoked = revoked.token;
    await app.ready();
    await call(app, 'POST', '/v1/base_create', { token: tokens.alpha, json: { namespace: 'alpha-ns', key: 'alpha-base', description: 'secret' } });
    await call(app, 'POST', '/v1/ns_create', { token: tokens.alpha, json: { key: 'alpha-empty' } });
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await database?.drop();
  });

  const requests: Array<[string, string, CallOptions]> = [
    ['GET', '/v1/auth', {}],
    ['GET', '/v1/ns_list', {}],
    ['GET', '/v1/base_list?namespace=alpha-ns', {}],
    ['GET', '/v1/base_list_all', {}],
    ['POST', '/v1/ns_create', { json: { key: 'intruder' } }],
    ['POST', '/v1/ns_update', { json: { namespace: 'alpha-ns', data: { description: 'pwned' } } }],
    ['POST', '/v1/base_create', { json: { namespace: 'alpha-ns', key: 'intruder' } }],
    ['POST', '/v1/base_update', { json: { namespace: 'alpha-ns', base: 'alpha-base', data: { description: 'pwned' } } }],
    ['DELETE', '/v1/base_delete', { json: { namespace: 'alpha-ns', base: 'alpha-base' } }],
    ['DELETE', '/v1/ns_delete', { json: { namespace: 'alpha-ns', cascade: true } }],
  ];

  it('covers every authenticated route of the API', () => {
    const covered = new Set(requests.map(([method, path]) => `${method} ${path.split('?')[0]}`));
    const routes = Object.values(ROUTES).filter((route) => route.auth).map((route) => `${route.method} /v1${route.path}`);
    expect([...covered].sort()).toEqual(routes.sort());
  });

  const badCredentials: Array<[string, (options: CallOptions) => CallOptions]> = [
    ['no token', (options) => options],
    ['a Basic header', (options) => ({ ...options, headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } })],
    ['a bare "Bearer"', (options) => ({ ...options, headers: { authorization: 'Bearer' } })],
    ['two tokens in the header', (options) => ({ ...options, headers: { authorization: `Bearer ${tokens.alpha} ${tokens.alpha}` } })],
    ['an unknown token', (options) => ({ ...options, token: `kbt_${'A'.repeat(43)}` })],
    ['a revoked token', (options) => ({ ...options, token: tokens.revoked })],
    ['the token in the URL instead of the header', (options) => options],
  ];

  it('answers 401 with one identical body whatever is wrong with the credentials, and changes nothing', async () => {
    const before = await database.dump();
    const bodies = new Set<string>();
    for (const [method, path, options] of requests) {
      for (const [what, credentials] of badCredentials) {
        const url = what.includes('URL') ? `${path}${path.includes('?') ? '&' : '?'}token=${tokens.alpha}` : path;
        const reply = await call(app, method, url, { ...credentials(options), remoteAddress: fresh() });
        expect({ what, method, path, status: reply.status }).toEqual({ what, method, path, status: 401 });
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        bodies.add(reply.text);
      }
    }
    expect(bodies.size).toBe(1);
    expect(await database.dump()).toBe(before);
  });

  it('answers another organization exactly as if the namespace and base did not exist, and changes nothing', async () => {
    const before = await database.dump();
    for (const org of ['beta', 'gamma']) {
      for (const [method, path, options] of requests) {
        if (path === '/v1/auth' || path === '/v1/ns_list' || path === '/v1/ns_create' || path === '/v1/base_create') continue;
        if (path === '/v1/base_list_all') {
          // Names no namespace: another organization gets its own bases, none of alpha's.
          const all = await call(app, method, path, { ...options, token: tokens[org] });
          expect({ org, status: all.status, body: all.body }).toEqual({ org, status: 200, body: { success: true, data: [] } });
          continue;
        }
        const theirs = await call(app, method, path, { ...options, token: tokens[org] });
        const missing = await call(app, method, path.replace('alpha-ns', 'never-ns'), {
          ...options,
          token: tokens[org],
          ...(options.json ? { json: JSON.parse(JSON.stringify(options.json).replace('alpha-ns', 'never-ns')) } : {}),
        });
        expect({ org, path, status: theirs.status }).toEqual({ org, path, status: 404 });
        expect(theirs.text.replace('alpha-ns', 'never-ns')).toBe(missing.text);
      }
      const listed = await call(app, 'GET', '/v1/ns_list', { token: tokens[org] });
      expect(listed.text).not.toContain('alpha');
    }
    expect(await database.dump()).toBe(before);
    // beta's own create of a namespace named like alpha's is its own, and leaves alpha's alone.
    const own = await call(app, 'POST', '/v1/base_create', { token: tokens.beta, json: { namespace: 'alpha-ns', key: 'alpha-base' } });
    expect(own.status).toBe(200);
    const alpha = await call(app, 'GET', '/v1/base_list?namespace=alpha-ns', { token: tokens.alpha });
    expect(alpha.body).toEqual({ success: true, data: [{ namespace: 'alpha-ns', key: 'alpha-base', description: 'secret' }] });
  });

  it('never writes a raw token to the database files or the logs', async () => {
    for (const token of Object.values(tokens)) {
      await call(app, 'GET', `/v1/ns_list?token=${token}`, { token, remoteAddress: fresh() });
      await call(app, 'POST', '/v1/ns_create', { token, json: { key: 'canary-ns', description: 'x' }, remoteAddress: fresh() });
      await call(app, 'POST', '/v1/ns_create', { headers: { authorization: `Basic ${token}` }, json: { key: 'canary-ns' }, remoteAddress: fresh() });
    }
    const stored = await database.storedBytes();
    expect(stored.length).toBeGreaterThan(0);
    expect(logs.length).toBeGreaterThan(0);
    for (const token of Object.values(tokens)) {
      const secret = token.slice(4);
      expect(stored.includes(Buffer.from(secret))).toBe(false);
      expect(logs.join('\n')).not.toContain(secret);
    }
  });

  it('limits failed authentication per address: 429 with Retry-After after 20 failures, valid tokens unaffected', async () => {
    const attacker = '192.0.2.7';
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await call(app, 'GET', '/v1/ns_list', { token: `kbt_wrong${i}`, remoteAddress: attacker })).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(5).fill(429));
    const limited = await call(app, 'GET', '/v1/ns_list', { remoteAddress: attacker });
    const body = expectFailure(expect, limited, 429);
    expect(body.message).toMatch(/too many failed/i);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The same address with a valid token is served, and others are not limited.
    expect((await call(app, 'GET', '/v1/ns_list', { token: tokens.alpha, remoteAddress: attacker })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/ns_list', { token: 'kbt_wrong', remoteAddress: '192.0.2.8' })).status).toBe(401);
  });
});
