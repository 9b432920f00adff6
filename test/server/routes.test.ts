import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ROUTES, type RouteSpec } from '../../src/api/routes.js';
import { Base, LIMITS, Namespace } from '../../src/api/schemas.js';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { generateToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { call, type CallOptions, envelopeProblem, expectFailure, expectSuccess, fetchCall, type Reply } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const UUID_V4 = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const GENERATED_NS = new RegExp(`^ns_${UUID_V4}$`);
const GENERATED_BASE = new RegExp(`^kb_${UUID_V4}$`);
const ALL_ROUTES = Object.values(ROUTES) as RouteSpec[];
const AUTH_ROUTES = ALL_ROUTES.filter((route) => route.auth);
const EMOJI = '\u{1F600}';

/** A body that is valid for each route (for tests that must fail on something other than the body). */
const VALID_INPUT: Record<string, { body?: unknown; query?: string }> = {
  auth: {},
  ns_list: {},
  ns_create: { body: { key: 'valid-ns' } },
  ns_update: { body: { namespace: 'valid-ns', data: {} } },
  base_create: { body: { namespace: 'valid-ns', key: 'valid-base' } },
  base_update: { body: { namespace: 'valid-ns', base: 'valid-base', data: {} } },
  base_delete: { body: { namespace: 'valid-ns', base: 'valid-base' } },
  base_list: { query: '?namespace=valid-ns' },
};

let server: TestServer;
let acme: string;
let globex: string;

beforeAll(async () => {
  server = await startTestServer({ listen: false, org: 'acme' });
  acme = server.token;
  globex = await server.newToken('globex');
});

afterAll(async () => {
  await server?.close();
});

const request = (method: string, path: string, options?: CallOptions) => call(server.app, method, path, options);
const post = (route: string, json: unknown, token: string | undefined = acme) => request('POST', `/v1/${route}`, { token, json });
const get = (route: string, token: string | undefined = acme) => request('GET', `/v1/${route}`, { token });
const del = (json: unknown, token: string | undefined = acme) => request('DELETE', '/v1/base_delete', { token, json });

/** A token of a new organization with nothing in it, so lists can be compared exactly. */
const freshOrg = (name: string) => server.newToken(name);

describe('GET /v1/health', () => {
  it('answers alive without a token', async () => {
    const reply = await request('GET', '/v1/health');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"success":true,"data":"alive"}');
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('ignores an invalid token', async () => {
    const reply = await request('GET', '/v1/health', { token: 'kbt_nonsense' });
    expect(reply.status).toBe(200);
  });
});

describe('GET /v1/auth', () => {
  it('names the organization of the token', async () => {
    expect((await get('auth')).text).toBe('{"success":true,"data":"acme"}');
    expect((await get('auth', globex)).text).toBe('{"success":true,"data":"globex"}');
  });

  it('accepts the scheme name in any case, as RFC 7235 says', async () => {
    const reply = await request('GET', '/v1/auth', { headers: { authorization: `bearer ${acme}` } });
    expect(reply.status).toBe(200);
  });

  it('rejects a query parameter with 400', async () => {
    const body = expectFailure(expect, await request('GET', '/v1/auth?verbose=1', { token: acme }), 400);
    expect(body.message).toBe('Invalid query: unknown field: verbose');
  });
});

describe('POST /v1/ns_create', () => {
  it('creates a namespace with key and description', async () => {
    const reply = await post('ns_create', { key: 'create-ns', description: 'Documents' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"success":true,"data":{"key":"create-ns","description":"Documents"}}');
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('generates an ns_<uuid v4> key when the key is omitted or null', async () => {
    const token = await freshOrg('generated-ns');
    const omitted = expectSuccess(expect, await post('ns_create', {}, token), Namespace);
    const nulled = expectSuccess(expect, await post('ns_create', { key: null, description: 'd' }, token), Namespace);
    expect(omitted.key).toMatch(GENERATED_NS);
    expect(omitted.description).toBeNull();
    expect(nulled.key).toMatch(GENERATED_NS);
    expect(nulled.description).toBe('d');
    expect(nulled.key).not.toBe(omitted.key);
    const listed = expectSuccess(expect, await get('ns_list', token), z.array(Namespace));
    expect(listed).toEqual([omitted, nulled].sort((a, b) => (a.key < b.key ? -1 : 1)));
  });

  it('stores a null description as null', async () => {
    expect((await post('ns_create', { key: 'null-desc', description: null })).text).toBe(
      '{"success":true,"data":{"key":"null-desc","description":null}}',
    );
  });

  it('accepts 1024 emojis as a description and returns them unchanged', async () => {
    const description = EMOJI.repeat(1024);
    expect(expectSuccess(expect, await post('ns_create', { key: 'emoji-ns', description }), Namespace)).toEqual({
      key: 'emoji-ns', description,
    });
  });

  it.each(['__proto__', 'constructor', 'prototype', 'hasOwnProperty'])('takes %s as an ordinary key', async (key) => {
    const token = await freshOrg(`proto-${key.replace(/_/g, '')}`);
    expect(expectSuccess(expect, await post('ns_create', { key, description: key }, token), Namespace)).toEqual({ key, description: key });
    expect(expectSuccess(expect, await post('base_create', { namespace: key, key }, token), Base)).toEqual({
      namespace: key, key, description: null,
    });
    expect(expectSuccess(expect, await get('ns_list', token), z.array(Namespace))).toEqual([{ key, description: key }]);
    expect(expectSuccess(expect, await get(`base_list?namespace=${key}`, token), z.array(Base))).toEqual([
      { namespace: key, key, description: null },
    ]);
    expectFailure(expect, await post('ns_create', { key }, token), 409);
  });
});

describe('POST /v1/ns_update', () => {
  it('sets, leaves (data {}) and clears the description', async () => {
    await post('ns_create', { key: 'update-ns', description: 'old' });
    expect((await post('ns_update', { namespace: 'update-ns', data: { description: 'new' } })).text).toBe(
      '{"success":true,"data":{"key":"update-ns","description":"new"}}',
    );
    expect((await post('ns_update', { namespace: 'update-ns', data: {} })).text).toBe(
      '{"success":true,"data":{"key":"update-ns","description":"new"}}',
    );
    expect((await post('ns_update', { namespace: 'update-ns', data: { description: null } })).text).toBe(
      '{"success":true,"data":{"key":"update-ns","description":null}}',
    );
    const listed = expectSuccess(expect, await get('ns_list'), z.array(Namespace));
    expect(listed.find((ns) => ns.key === 'update-ns')).toEqual({ key: 'update-ns', description: null });
  });
});

describe('GET /v1/ns_list', () => {
  it('lists nothing for a new organization', async () => {
    expect((await get('ns_list', await freshOrg('empty-org'))).text).toBe('{"success":true,"data":[]}');
  });

  it("lists the organization's namespaces ordered by key in byte order", async () => {
    const token = await freshOrg('lister');
    for (const key of ['b_x', 'a-x', 'B-x', 'abc', '9zz', '_ab', '-ab', 'Zzz']) {
      expectSuccess(expect, await post('ns_create', { key, description: `about ${key}` }, token), Namespace);
    }
    const reply = await get('ns_list', token);
    expect(expectSuccess(expect, reply, z.array(Namespace))).toEqual(
      ['-ab', '9zz', 'B-x', 'Zzz', '_ab', 'a-x', 'abc', 'b_x'].map((key) => ({ key, description: `about ${key}` })),
    );
  });
});

describe('POST /v1/base_create', () => {
  it('creates a base with key and description', async () => {
    await post('ns_create', { key: 'base-ns' });
    expect((await post('base_create', { namespace: 'base-ns', key: 'manual', description: 'The manual' })).text).toBe(
      '{"success":true,"data":{"namespace":"base-ns","key":"manual","description":"The manual"}}',
    );
  });

  it('generates a kb_<uuid v4> key when the key is omitted or null', async () => {
    const omitted = expectSuccess(expect, await post('base_create', { namespace: 'base-ns' }), Base);
    const nulled = expectSuccess(expect, await post('base_create', { namespace: 'base-ns', key: null }), Base);
    expect(omitted).toEqual({ namespace: 'base-ns', key: expect.stringMatching(GENERATED_BASE), description: null });
    expect(nulled.key).toMatch(GENERATED_BASE);
    expect(nulled.key).not.toBe(omitted.key);
  });

  it('creates a missing namespace with the base', async () => {
    const token = await freshOrg('auto-ns');
    expect((await post('base_create', { namespace: 'auto', key: 'first' }, token)).text).toBe(
      '{"success":true,"data":{"namespace":"auto","key":"first","description":null}}',
    );
    expect((await get('ns_list', token)).text).toBe('{"success":true,"data":[{"key":"auto","description":null}]}');
  });

  it('keeps the description of an existing namespace', async () => {
    await post('ns_create', { key: 'kept-ns', description: 'kept' });
    await post('base_create', { namespace: 'kept-ns', key: 'abc' });
    const listed = expectSuccess(expect, await get('ns_list'), z.array(Namespace));
    expect(listed.find((ns) => ns.key === 'kept-ns')).toEqual({ key: 'kept-ns', description: 'kept' });
  });
});

describe('POST /v1/base_update', () => {
  it('sets, leaves (data {}) and clears the description', async () => {
    await post('base_create', { namespace: 'bu-ns', key: 'bu-base', description: 'old' });
    const at = { namespace: 'bu-ns', base: 'bu-base' };
    expect((await post('base_update', { ...at, data: { description: 'new' } })).text).toBe(
      '{"success":true,"data":{"namespace":"bu-ns","key":"bu-base","description":"new"}}',
    );
    expect((await post('base_update', { ...at, data: {} })).text).toBe(
      '{"success":true,"data":{"namespace":"bu-ns","key":"bu-base","description":"new"}}',
    );
    expect((await get('base_list?namespace=bu-ns')).text).toBe(
      '{"success":true,"data":[{"namespace":"bu-ns","key":"bu-base","description":"new"}]}',
    );
    expect((await post('base_update', { ...at, data: { description: null } })).text).toBe(
      '{"success":true,"data":{"namespace":"bu-ns","key":"bu-base","description":null}}',
    );
    expect((await get('base_list?namespace=bu-ns')).text).toBe(
      '{"success":true,"data":[{"namespace":"bu-ns","key":"bu-base","description":null}]}',
    );
  });
});

describe('DELETE /v1/base_delete', () => {
  it('deletes a base and returns it; a second delete is 404', async () => {
    await post('base_create', { namespace: 'del-ns', key: 'doomed', description: 'bye' });
    await post('base_create', { namespace: 'del-ns', key: 'stays' });
    expect((await del({ namespace: 'del-ns', base: 'doomed' })).text).toBe(
      '{"success":true,"data":{"namespace":"del-ns","key":"doomed","description":"bye"}}',
    );
    expect((await get('base_list?namespace=del-ns')).text).toBe(
      '{"success":true,"data":[{"namespace":"del-ns","key":"stays","description":null}]}',
    );
    const again = expectFailure(expect, await del({ namespace: 'del-ns', base: 'doomed' }), 404);
    expect(again.message).toBe('Base doomed not found in namespace del-ns');
  });
});

describe('GET /v1/base_list', () => {
  it('lists the bases of a namespace ordered by key in byte order', async () => {
    for (const key of ['b_x', 'B-x', '_ab', '-ab', 'a-x', '9zz']) await post('base_create', { namespace: 'bl-ns', key });
    await post('base_create', { namespace: 'bl-other', key: 'elsewhere' });
    const listed = expectSuccess(expect, await get('base_list?namespace=bl-ns'), z.array(Base));
    expect(listed).toEqual(['-ab', '9zz', 'B-x', '_ab', 'a-x', 'b_x'].map((key) => ({ namespace: 'bl-ns', key, description: null })));
  });

  it('lists an empty namespace as []', async () => {
    await post('ns_create', { key: 'bl-empty' });
    expect((await get('base_list?namespace=bl-empty')).text).toBe('{"success":true,"data":[]}');
  });
});

describe('400: the request is malformed', () => {
  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, string, string, CallOptions, RegExp]> = [
    ['malformed JSON', 'POST', '/v1/ns_create', { payload: '{"key": "abc"', headers: json }, /^Request body is not valid JSON$/],
    ['a body that is an array', 'POST', '/v1/ns_create', { json: [{ key: 'abc' }] }, /^Invalid request body: expected a JSON object$/],
    ['a body that is a string', 'POST', '/v1/ns_create', { json: 'abc' }, /^Invalid request body: expected a JSON object$/],
    ['a body that is null', 'POST', '/v1/base_create', { payload: 'null', headers: json }, /expected a JSON object/],
    ['a body that is a number', 'POST', '/v1/base_update', { payload: '42', headers: json }, /expected a JSON object/],
    ['an empty JSON body', 'POST', '/v1/ns_create', { payload: '', headers: json }, /^Request body is empty/],
    ['a key of the wrong type', 'POST', '/v1/ns_create', { json: { key: 42 } }, /^Invalid request body: key: must be a string/],
    ['a description of the wrong type', 'POST', '/v1/ns_create', { json: { description: ['x'] } }, /description: must be a string or null/],
    ['a key of 2 characters', 'POST', '/v1/ns_create', { json: { key: 'ab' } }, /key: a key is 3 to 63 characters/],
    ['a key of 64 characters', 'POST', '/v1/base_create', { json: { namespace: 'abc', key: 'k'.repeat(64) } }, /key: a key is 3 to 63/],
    ['a key with a trailing newline', 'POST', '/v1/ns_create', { json: { key: 'abc\n' } }, /key: a key is 3 to 63/],
    ['a key with a non-ASCII letter', 'POST', '/v1/ns_create', { json: { key: 'caf\u00e9' } }, /key: a key is 3 to 63/],
    ['an empty description', 'POST', '/v1/ns_create', { json: { description: '' } }, /description: a description is 1 to 1024/],
    ['a description of 1025 characters', 'POST', '/v1/base_create', { json: { namespace: 'abc', description: 'd'.repeat(1025) } }, /description: a description is 1 to 1024/],
    ['a description of 1025 emojis', 'POST', '/v1/ns_create', { json: { description: EMOJI.repeat(1025) } }, /description: a description is 1 to 1024/],
    ['a description with an unpaired surrogate', 'POST', '/v1/ns_create', { payload: '{"description":"a\\ud800"}', headers: json }, /description: a description must be valid Unicode/],
    ['a missing required field', 'POST', '/v1/base_create', { json: { key: 'abc' } }, /^Invalid request body: namespace: is required$/],
    ['a required field sent as null', 'POST', '/v1/base_create', { json: { namespace: null } }, /^Invalid request body: namespace: must be a string/],
    ['an update without data', 'POST', '/v1/ns_update', { json: { namespace: 'abc' } }, /^Invalid request body: data: is required$/],
    ['an update with data null', 'POST', '/v1/base_update', { json: { namespace: 'abc', base: 'def', data: null } }, /data: /],
    ['an update with data an array', 'POST', '/v1/ns_update', { json: { namespace: 'abc', data: [] } }, /data: /],
    ['an update with data a string', 'POST', '/v1/ns_update', { json: { namespace: 'abc', data: 'x' } }, /data: /],
    ['a malformed namespace reference', 'POST', '/v1/base_update', { json: { namespace: 'a b', base: 'def', data: {} } }, /namespace: a key is/],
    ['a malformed base reference', 'DELETE', '/v1/base_delete', { json: { namespace: 'abc', base: 'x' } }, /base: a key is/],
    ['base_delete without a body', 'DELETE', '/v1/base_delete', {}, /^Invalid request body: expected a JSON object$/],
    ['base_delete with an empty JSON body', 'DELETE', '/v1/base_delete', { payload: '', headers: json }, /^Request body is empty/],
    // Refused while parsing (prototype poisoning), with the field named.
    ['a __proto__ field', 'POST', '/v1/ns_create', { payload: '{"__proto__":{"key":"abc"}}', headers: json }, /^Request body has a forbidden field: __proto__$/],
    ['a constructor.prototype field', 'POST', '/v1/ns_create', { payload: '{"constructor":{"prototype":{}}}', headers: json }, /^Request body has a forbidden field: constructor$/],
    ['a __proto__ field spelled with an escape', 'POST', '/v1/ns_create', { payload: '{"\\u005f_proto__":{"key":"abc"}}', headers: json }, /^Request body has a forbidden field: __proto__$/],
    ['a constructor field', 'POST', '/v1/ns_create', { json: { constructor: 'abc' } }, /^Invalid request body: unknown field: constructor$/],
    ['base_list without a namespace', 'GET', '/v1/base_list', {}, /^Invalid query: namespace: is required$/],
    ['base_list with a malformed namespace', 'GET', '/v1/base_list?namespace=a%20b', {}, /^Invalid query: namespace: a key is/],
    ['base_list with the namespace twice', 'GET', '/v1/base_list?namespace=abc&namespace=def', {}, /namespace: must be a string/],
    ['ns_list with a query parameter', 'GET', '/v1/ns_list?limit=10', {}, /^Invalid query: unknown field: limit$/],
  ];

  it.each(cases)('rejects %s', async (_what, method, path, options, message) => {
    const body = expectFailure(expect, await request(method, path, { token: acme, ...options }), 400);
    expect(body.message).toMatch(message);
  });

  it('refuses an invalid query every time it is asked, and answers a valid one every time', async () => {
    for (let i = 0; i < 3; i++) {
      expect(expectFailure(expect, await request('GET', '/v1/ns_list?limit=10', { token: acme }), 400).message).toBe('Invalid query: unknown field: limit');
      expect((await request('GET', '/v1/ns_list', { token: acme })).status).toBe(200);
    }
  });

  it('names an unknown field and lists the allowed ones in help', async () => {
    const body = expectFailure(expect, await post('base_create', { namespace: 'abc', colour: 'blue' }), 400);
    expect(body.message).toBe('Invalid request body: unknown field: colour');
    expect(body.help).toBe('Allowed fields: namespace, key, description.');
  });

  it('names an unknown field inside data, and lists what data allows', async () => {
    const body = expectFailure(expect, await post('ns_update', { namespace: 'abc', data: { descripton: 'typo' } }), 400);
    expect(body.message).toBe('Invalid request body: unknown field in data: descripton');
    expect(body.help).toBe('Allowed fields: description.');
  });

  it('gives the key rule for a key out of bounds', async () => {
    const body = expectFailure(expect, await post('ns_create', { key: 'ab' }), 400);
    expect(body.message).toContain('3 to 63');
  });

  it('writes nothing for a rejected request', async () => {
    const token = await freshOrg('rejected-writes');
    expectFailure(expect, await post('base_create', { namespace: 'never', key: 'ab' }, token), 400);
    expectFailure(expect, await post('base_create', { namespace: 'never', key: 'fine', extra: 1 }, token), 400);
    expect((await get('ns_list', token)).text).toBe('{"success":true,"data":[]}');
  });
});

describe('401: no valid token', () => {
  let revoked: string;
  let client = 0;
  /** Each failing request from its own address, so a limit on failed authentication per address never applies here. */
  const unauthenticated = (method: string, path: string, options: CallOptions = {}) =>
    request(method, path, { ...options, remoteAddress: `10.1.${client >> 8}.${client++ & 255}` });

  beforeAll(async () => {
    const token = generateToken();
    await server.store.createToken('acme', token.id, token.hash);
    expect((await get('auth', token.token)).status).toBe(200);
    await server.store.revokeToken(token.id);
    revoked = token.token;
  });

  const invalid: Array<[string, () => Record<string, string>]> = [
    ['no Authorization header', () => ({})],
    ['the Basic scheme', () => ({ authorization: `Basic ${Buffer.from(`acme:${acme}`).toString('base64')}` })],
    ['another scheme with a valid token', () => ({ authorization: `Token ${acme}` })],
    ['a valid token without a scheme', () => ({ authorization: acme })],
    ['Bearer without a token', () => ({ authorization: 'Bearer' })],
    ['Bearer and spaces only', () => ({ authorization: 'Bearer    ' })],
    ['an unknown token', () => ({ authorization: `Bearer kbt_${'A'.repeat(43)}` })],
    ['a valid token with a character added', () => ({ authorization: `Bearer ${acme}x` })],
    ['two tokens', () => ({ authorization: `Bearer ${acme} ${acme}` })],
    ['a revoked token', () => ({ authorization: `Bearer ${revoked}` })],
  ];

  for (const route of AUTH_ROUTES) {
    it.each(invalid)(`${route.method} ${route.path}: %s gives 401 with WWW-Authenticate: Bearer`, async (_what, headers) => {
      const input = VALID_INPUT[route.name] ?? {};
      const reply = await unauthenticated(route.method, `/v1${route.path}${input.query ?? ''}`, {
        headers: headers(),
        ...(input.body === undefined ? {} : { json: input.body }),
      });
      const body = expectFailure(expect, reply, 401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(body.message).toMatch(/^Authentication required/);
      expect(reply.text).not.toContain(acme);
    });
  }

  const badBodies: Array<[string, CallOptions]> = [
    ['malformed JSON', { payload: '{"key":', headers: { 'content-type': 'application/json' } }],
    ['an unknown field', { json: { colour: 'blue' } }],
    ['a body over 64 KiB', { json: { key: 'abc', description: 'x'.repeat(70_000) } }],
    ['a text/plain body', { payload: 'hello', headers: { 'content-type': 'text/plain' } }],
    ['a body without content type', { payload: Buffer.from('{"key":"abc"}') }],
  ];

  it.each(badBodies)('comes before the body: %s without a token is 401', async (_what, options) => {
    expectFailure(expect, await unauthenticated('POST', '/v1/ns_create', options), 401);
    expectFailure(expect, await unauthenticated('POST', '/v1/ns_create', { ...options, headers: { ...options.headers, authorization: `Bearer ${revoked}` } }), 401);
  });

  it('comes before the body: base_delete without a body and without a token is 401', async () => {
    expectFailure(expect, await unauthenticated('DELETE', '/v1/base_delete'), 401);
  });

  it('comes before the query: base_list with a bad query and without a token is 401', async () => {
    expectFailure(expect, await unauthenticated('GET', '/v1/base_list?namespace=x&junk=1'), 401);
  });
});

describe('404: not found, including other organizations', () => {
  it.each([
    ['ns_update, unknown namespace', 'POST', '/v1/ns_update', { json: { namespace: 'nowhere', data: {} } }, 'Namespace nowhere not found'],
    ['base_update, unknown namespace', 'POST', '/v1/base_update', { json: { namespace: 'nowhere', base: 'nothing', data: {} } }, 'Namespace nowhere not found'],
    ['base_delete, unknown namespace', 'DELETE', '/v1/base_delete', { json: { namespace: 'nowhere', base: 'nothing' } }, 'Namespace nowhere not found'],
    ['base_list, unknown namespace', 'GET', '/v1/base_list?namespace=nowhere', {}, 'Namespace nowhere not found'],
    ['base_update, unknown base', 'POST', '/v1/base_update', { json: { namespace: 'base-ns', base: 'nothing', data: {} } }, 'Base nothing not found in namespace base-ns'],
    ['base_delete, unknown base', 'DELETE', '/v1/base_delete', { json: { namespace: 'base-ns', base: 'nothing' } }, 'Base nothing not found in namespace base-ns'],
  ] as Array<[string, string, string, CallOptions, string]>)('%s', async (_what, method, path, options, message) => {
    await post('ns_create', { key: 'base-ns' });
    const body = expectFailure(expect, await request(method, path, { token: acme, ...options }), 404);
    expect(body.message).toBe(message);
  });

  describe('isolation between two organizations, both ways', () => {
    let orgA: string;
    let orgB: string;

    beforeAll(async () => {
      orgA = await freshOrg('isolation-a');
      orgB = await freshOrg('isolation-b');
      for (const [token, suffix] of [[orgA, 'a'], [orgB, 'b']] as const) {
        expectSuccess(expect, await post('ns_create', { key: `ns-${suffix}`, description: `secret ${suffix}` }, token), Namespace);
        expectSuccess(expect, await post('base_create', { namespace: `ns-${suffix}`, key: `base-${suffix}`, description: `secret ${suffix}` }, token), Base);
      }
    });

    const snapshot = async (token: string, ns: string) => [(await get('ns_list', token)).text, (await get(`base_list?namespace=${ns}`, token)).text];

    /** The reply for another organization's thing must equal, up to the key, the reply for a thing that never existed. */
    async function expectSameAsNeverExisting(
      send: (ns: string, base: string) => Promise<Reply>,
      theirs: { ns: string; base: string },
    ): Promise<void> {
      const foreign = await send(theirs.ns, theirs.base);
      const never = await send('ns-never', 'base-never');
      expectFailure(expect, foreign, 404);
      expectFailure(expect, never, 404);
      const normalize = (text: string, ns: string, base: string) => text.replaceAll(ns, 'NS').replaceAll(base, 'BASE');
      expect(normalize(foreign.text, theirs.ns, theirs.base)).toBe(normalize(never.text, 'ns-never', 'base-never'));
      expect(foreign.headers['content-type']).toBe(never.headers['content-type']);
    }

    it.each([
      ['A', 'B'],
      ['B', 'A'],
    ])('organization %s cannot list, update, delete or list the bases of organization %s', async (me, them) => {
      const mine = me === 'A' ? orgA : orgB;
      const theirs = them === 'A' ? orgA : orgB;
      const suffix = them.toLowerCase();
      const target = { ns: `ns-${suffix}`, base: `base-${suffix}` };
      const before = await snapshot(theirs, target.ns);

      const myList = expectSuccess(expect, await get('ns_list', mine), z.array(Namespace));
      expect(myList.map((ns) => ns.key)).not.toContain(target.ns);
      expect(JSON.stringify(myList)).not.toContain(`secret ${suffix}`);

      await expectSameAsNeverExisting((ns) => post('ns_update', { namespace: ns, data: { description: 'pwned' } }, mine), target);
      await expectSameAsNeverExisting((ns, base) => post('base_update', { namespace: ns, base, data: { description: 'pwned' } }, mine), target);
      await expectSameAsNeverExisting((ns, base) => del({ namespace: ns, base }, mine), target);
      await expectSameAsNeverExisting((ns) => get(`base_list?namespace=${ns}`, mine), target);

      expect(await snapshot(theirs, target.ns)).toEqual(before);
    });

    it("creating a namespace or base under another organization's key makes one's own, and leaves theirs alone", async () => {
      const before = await snapshot(orgA, 'ns-a');
      const intruder = await freshOrg('isolation-c');
      expect(expectSuccess(expect, await post('ns_create', { key: 'ns-a' }, intruder), Namespace)).toEqual({ key: 'ns-a', description: null });
      expect(expectSuccess(expect, await post('base_create', { namespace: 'ns-a', key: 'base-a' }, intruder), Base)).toEqual({
        namespace: 'ns-a', key: 'base-a', description: null,
      });
      expect(expectSuccess(expect, await post('base_update', { namespace: 'ns-a', base: 'base-a', data: { description: 'mine' } }, intruder), Base)).toEqual({
        namespace: 'ns-a', key: 'base-a', description: 'mine',
      });
      expect(await snapshot(orgA, 'ns-a')).toEqual(before);
    });
  });
});

describe('409: the key is taken', () => {
  it('refuses a second namespace with the same key, keeping the first', async () => {
    const token = await freshOrg('dup-ns');
    await post('ns_create', { key: 'dup', description: 'first' }, token);
    const body = expectFailure(expect, await post('ns_create', { key: 'dup', description: 'second' }, token), 409);
    expect(body.message).toBe('Namespace dup already exists');
    expect((await get('ns_list', token)).text).toBe('{"success":true,"data":[{"key":"dup","description":"first"}]}');
  });

  it('refuses ns_create of a namespace that base_create made', async () => {
    await post('base_create', { namespace: 'made-by-base', key: 'abc' });
    expectFailure(expect, await post('ns_create', { key: 'made-by-base' }), 409);
  });

  it('refuses a second base with the same key in one namespace, keeping the first', async () => {
    await post('base_create', { namespace: 'dup-base-ns', key: 'dup', description: 'first' });
    const body = expectFailure(expect, await post('base_create', { namespace: 'dup-base-ns', key: 'dup', description: 'second' }), 409);
    expect(body.message).toBe('Base dup already exists in namespace dup-base-ns');
    expect((await get('base_list?namespace=dup-base-ns')).text).toBe(
      '{"success":true,"data":[{"namespace":"dup-base-ns","key":"dup","description":"first"}]}',
    );
  });

  it('allows the same base key in different namespaces', async () => {
    expectSuccess(expect, await post('base_create', { namespace: 'same-key-1', key: 'shared' }), Base);
    expectSuccess(expect, await post('base_create', { namespace: 'same-key-2', key: 'shared' }), Base);
  });
});

describe('413: the body is over 64 KiB', () => {
  const padded = (json: unknown, size: number) => {
    const text = JSON.stringify(json);
    return text + ' '.repeat(size - Buffer.byteLength(text));
  };
  const headers = { 'content-type': 'application/json' };

  it('accepts a body of exactly 64 KiB', async () => {
    const reply = await request('POST', '/v1/ns_create', { token: acme, headers, payload: padded({ key: 'exactly-64k' }, LIMITS.bodyBytes) });
    expectSuccess(expect, reply, Namespace);
  });

  it.each([
    ['POST', '/v1/ns_create', { key: 'too-big' }],
    ['POST', '/v1/base_update', { namespace: 'abc', base: 'def', data: {} }],
    ['DELETE', '/v1/base_delete', { namespace: 'abc', base: 'def' }],
  ])('refuses a body of 64 KiB + 1 on %s %s', async (method, path, json) => {
    const reply = await request(method, path, { token: acme, headers, payload: padded(json, LIMITS.bodyBytes + 1) });
    expectFailure(expect, reply, 413);
  });

  it('writes nothing for a refused body', async () => {
    expectFailure(expect, await request('POST', '/v1/ns_create', { token: acme, headers, payload: padded({ key: 'too-big-ns' }, LIMITS.bodyBytes + 1) }), 413);
    const listed = expectSuccess(expect, await get('ns_list'), z.array(Namespace));
    expect(listed.map((ns) => ns.key)).not.toContain('too-big-ns');
  });
});

describe('415: the body is not JSON', () => {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['text/plain with a charset', { 'content-type': 'text/plain; charset=utf-8' }],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['XML', { 'content-type': 'application/xml' }],
    ['an octet stream', { 'content-type': 'application/octet-stream' }],
    ['no content type', {}],
  ] as Array<[string, Record<string, string>]>)('refuses a JSON text sent as %s', async (_what, headers) => {
    const reply = await request('POST', '/v1/ns_create', { token: acme, headers, payload: Buffer.from('{"key":"not-json-ns"}') });
    const body = expectFailure(expect, reply, 415);
    expect(body.message).toBe('Request bodies must be JSON');
    const listed = expectSuccess(expect, await get('ns_list'), z.array(Namespace));
    expect(listed.map((ns) => ns.key)).not.toContain('not-json-ns');
  });

  it('refuses a base_delete body without content type', async () => {
    expectFailure(expect, await request('DELETE', '/v1/base_delete', { token: acme, payload: Buffer.from('{"namespace":"abc","base":"def"}') }), 415);
  });

  it('accepts application/json with a charset', async () => {
    const reply = await request('POST', '/v1/ns_create', {
      token: acme, headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"key":"charset-ns"}',
    });
    expectSuccess(expect, reply, Namespace);
  });
});

describe('routing', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['POST', '/v1/documents_create'],
    ['GET', '/nope'],
    ['GET', '/'],
    ['GET', '/v1'],
    ['GET', '/v1/'],
    ['GET', '/health'],
    ['GET', '/v2/health'],
    ['GET', '/v1/ns_list/extra'],
    ['GET', '/v1/NS_LIST'],
    ['GET', '/v1/openapi.yaml'],
  ])('answers an unknown route %s %s with 404', async (method, path) => {
    const body = expectFailure(expect, await request(method, path, { token: acme }), 404);
    expect(body.message).toBe(`No such route: ${method} ${path}`);
  });

  it('answers an unknown route with 404 without a token too', async () => {
    expectFailure(expect, await request('GET', '/v1/nope'), 404);
  });

  const methods = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'];
  for (const route of ALL_ROUTES) {
    for (const method of methods.filter((m) => m !== route.method)) {
      it(`answers ${method} ${route.path} with 405 and Allow: ${route.method}`, async () => {
        const reply = await request(method, `/v1${route.path}`, { token: acme });
        const body = expectFailure(expect, reply, 405);
        expect(reply.headers.allow).toBe(route.method === 'GET' ? 'GET, HEAD' : route.method);
        expect(body.message).toBe(`${method} is not allowed on /v1${route.path}`);
      });
    }
  }

  it('answers a URL that cannot be decoded with 400 and the failure envelope', async () => {
    const body = expectFailure(expect, await request('GET', '/v1/%E0%A4%A', { token: acme }), 400);
    expect(body.message).toContain('not a valid url');
  });
});

describe('500 and 503: failures of the store', () => {
  const principal = { orgId: 1, org: 'acme', tokenId: 'tok_1', scope: 'full', expiresAt: null } as const;

  async function appOver(store: Partial<Store>) {
    const lines: string[] = [];
    const app = buildApp({
      store: { authenticate: async () => principal, markTokensUsed: async () => undefined, ...store } as Store,
      logger: createLogger('error', { sink: (line) => lines.push(line) }),
    });
    await app.ready();
    return { app, lines };
  }

  it('answers an unexpected error with 500, the failure envelope and no detail, and logs the stack', async () => {
    const { app, lines } = await appOver({
      nsList: async () => {
        throw new Error('disk on fire at /var/secret/path');
      },
    });
    try {
      const reply = await call(app, 'GET', '/v1/ns_list', { token: 'kbt_whatever' });
      expect(reply.status).toBe(500);
      expect(envelopeProblem(reply)).toBeUndefined();
      expect(reply.body).toEqual({ success: false, message: 'Internal server error' });
      expect(reply.text).not.toContain('secret');
      expect(lines.join('\n')).toContain('disk on fire');
      expect(lines.join('\n')).not.toContain('kbt_whatever');
    } finally {
      await app.close();
    }
  });

  it('answers a store that rejects a non-Error value with 500 too', async () => {
    const { app } = await appOver({ nsList: () => Promise.reject('a string') });
    try {
      const reply = await call(app, 'GET', '/v1/ns_list', { token: 'kbt_whatever' });
      expect(reply.status).toBe(500);
      expect(envelopeProblem(reply)).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('answers 503 with the failure envelope once the store is closed', async () => {
    const closing = await startTestServer({ listen: false });
    try {
      await closing.store.close();
      const reply = await call(closing.app, 'POST', '/v1/ns_create', { token: closing.token, json: { key: 'late' } });
      expect(reply.status).toBe(503);
      expect(envelopeProblem(reply)).toBeUndefined();
    } finally {
      await closing.close();
    }
  });
});

describe('over a real port', () => {
  let live: TestServer;
  let token: string;
  const send = (method: string, path: string, options?: CallOptions) => fetchCall(live.url, method, path, options);

  beforeAll(async () => {
    live = await startTestServer();
    token = live.token;
  });

  afterAll(async () => {
    await live?.close();
  });

  it('answers health, auth and a create/list/update/delete round trip', async () => {
    expect((await send('GET', '/v1/health')).text).toBe('{"success":true,"data":"alive"}');
    expect((await send('GET', '/v1/auth', { token })).text).toBe('{"success":true,"data":"acme"}');
    expect((await send('POST', '/v1/base_create', { token, json: { namespace: 'live', key: 'one', description: 'd' } })).text).toBe(
      '{"success":true,"data":{"namespace":"live","key":"one","description":"d"}}',
    );
    expect((await send('POST', '/v1/ns_update', { token, json: { namespace: 'live', data: { description: 'ns' } } })).text).toBe(
      '{"success":true,"data":{"key":"live","description":"ns"}}',
    );
    expect((await send('POST', '/v1/base_update', { token, json: { namespace: 'live', base: 'one', data: {} } })).text).toBe(
      '{"success":true,"data":{"namespace":"live","key":"one","description":"d"}}',
    );
    expect((await send('GET', '/v1/base_list?namespace=live', { token })).text).toBe(
      '{"success":true,"data":[{"namespace":"live","key":"one","description":"d"}]}',
    );
    expect((await send('DELETE', '/v1/base_delete', { token, json: { namespace: 'live', base: 'one' } })).text).toBe(
      '{"success":true,"data":{"namespace":"live","key":"one","description":"d"}}',
    );
    expect((await send('GET', '/v1/ns_list', { token })).text).toBe('{"success":true,"data":[{"key":"live","description":"ns"}]}');
  });

  it('answers 401 with WWW-Authenticate, also to a request with an oversized body', async () => {
    const plain = await send('GET', '/v1/ns_list', { token: 'kbt_unknown' });
    expectFailure(expect, plain, 401);
    expect(plain.headers['www-authenticate']).toBe('Bearer');
    expectFailure(expect, await send('POST', '/v1/ns_create', { json: { key: 'abc', description: 'x'.repeat(200_000) } }), 401);
  });

  it('answers 413, 415, 400 for a DELETE without a body, and 405 with Allow', async () => {
    expectFailure(expect, await send('POST', '/v1/ns_create', { token, json: { key: 'abc', description: 'x'.repeat(LIMITS.bodyBytes) } }), 413);
    expectFailure(expect, await send('POST', '/v1/ns_create', { token, payload: '{"key":"abc"}', headers: { 'content-type': 'text/plain' } }), 415);
    expectFailure(expect, await send('DELETE', '/v1/base_delete', { token }), 400);
    const wrong = await send('DELETE', '/v1/ns_create', { token });
    expectFailure(expect, wrong, 405);
    expect(wrong.headers.allow).toBe('POST');
  });

  it('answers a malformed HTTP request with 400 and the failure envelope', async () => {
    const { port } = new URL(live.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString('utf8')));
      socket.on('end', () => resolve(data));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.write('GARBAGE / NOT-HTTP\r\nx y z\r\n\r\n');
    });
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body)).toEqual({ success: false, message: 'Malformed HTTP request' });
    expect((await send('GET', '/v1/health')).status).toBe(200);
  });

  it('gives exactly one 200 and 39 409s to 40 simultaneous base_create of one key', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send('POST', '/v1/base_create', { token, json: { namespace: 'race-ns', key: 'race', description: `r${i}` } })),
    );
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(39);
    for (const reply of replies) expect(envelopeProblem(reply, Base)).toBeUndefined();
    const winner = replies.find((reply) => reply.status === 200)?.body as { data: Base };
    const listed = await send('GET', '/v1/base_list?namespace=race-ns', { token });
    expect(listed.body).toEqual({ success: true, data: [winner.data] });
    const namespaces = expectSuccess(expect, await send('GET', '/v1/ns_list', { token }), z.array(Namespace));
    expect(namespaces.filter((ns) => ns.key === 'race-ns')).toHaveLength(1);
  });

  it('gives exactly one 200 and 39 409s to 40 simultaneous ns_create of one key', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send('POST', '/v1/ns_create', { token, json: { key: 'race-ns-2', description: `r${i}` } })),
    );
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(39);
    for (const reply of replies) expect(envelopeProblem(reply, Namespace)).toBeUndefined();
    const winner = replies.find((reply) => reply.status === 200)?.body as { data: Namespace };
    const namespaces = expectSuccess(expect, await send('GET', '/v1/ns_list', { token }), z.array(Namespace));
    expect(namespaces.filter((ns) => ns.key === 'race-ns-2')).toEqual([winner.data]);
  });
});
