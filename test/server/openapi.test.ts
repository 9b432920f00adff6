import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, EXTENSION_FLAG, UNMATCHED_FLAG } from '../../src/api/openapi.js';
import { API_PREFIX, ROUTES, type RouteSpec } from '../../src/api/routes.js';
import { LIMITS } from '../../src/api/schemas.js';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import type { Store } from '../../src/store/store.js';
import { ROOT } from '../helpers/cli.js';
import { call, type CallOptions, type Reply } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

type Schema = Record<string, unknown>;

const DOC = buildOpenApiDocument() as Record<string, unknown> & {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; [key: string]: unknown }>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/** Follows a local `$ref` (`#/a/b`) through the document. */
function resolvePointer(ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported: ${ref}`);
  let node: unknown = DOC;
  for (const raw of ref.slice(2).split('/')) {
    const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, step)) throw new Error(`unresolvable $ref ${ref}`);
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

function deref<T>(node: T): T {
  let current: unknown = node;
  while (typeof current === 'object' && current !== null && typeof (current as { $ref?: unknown }).$ref === 'string') {
    current = resolvePointer((current as { $ref: string }).$ref);
  }
  return current as T;
}

/** The keywords this validator checks; annotations it may ignore. Anything else in a schema fails the test. */
const ASSERTIONS = new Set(['$ref', 'type', 'properties', 'required', 'additionalProperties', 'enum', 'const', 'pattern', 'minLength', 'maxLength', 'items', 'anyOf', 'oneOf', 'allOf']);
const ANNOTATIONS = new Set(['description', 'title']);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A JSON Schema 2020-12 check of the keywords the generated document uses, and only those: a schema with any other
 * keyword throws, so nothing the document says can be skipped silently. Returns the problems found.
 */
function validate(schema: unknown, value: unknown, at = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${at}: no value is allowed here`];
  if (typeof schema !== 'object' || schema === null) throw new Error(`${at}: not a schema: ${JSON.stringify(schema)}`);
  const s = schema as Schema;
  for (const keyword of Object.keys(s)) {
    if (!ASSERTIONS.has(keyword) && !ANNOTATIONS.has(keyword)) throw new Error(`unsupported JSON Schema keyword ${keyword} at ${at}`);
  }
  const problems: string[] = [];
  if (typeof s.$ref === 'string') problems.push(...validate(resolvePointer(s.$ref), value, at));
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) problems.push(`${at}: is ${actual}, not ${types.join(' or ')}`);
  }
  if (s.enum !== undefined && !(s.enum as unknown[]).some((option) => sameJson(option, value))) problems.push(`${at}: not one of ${JSON.stringify(s.enum)}`);
  if (Object.hasOwn(s, 'const') && !sameJson(s.const, value)) problems.push(`${at}: is not ${JSON.stringify(s.const)}`);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength) problems.push(`${at}: shorter than ${s.minLength}`);
    if (typeof s.maxLength === 'number' && length > s.maxLength) problems.push(`${at}: longer than ${s.maxLength}`);
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) problems.push(`${at}: does not match ${s.pattern}`);
  }
  if (Array.isArray(value) && s.items !== undefined) value.forEach((item, i) => problems.push(...validate(s.items, item, `${at}[${i}]`)));
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    for (const name of (s.required ?? []) as string[]) if (!Object.hasOwn(record, name)) problems.push(`${at}: ${name} is required`);
    for (const [name, member] of Object.entries(record)) {
      if (Object.hasOwn(properties, name)) problems.push(...validate(properties[name], member, `${at}.${name}`));
      else if (s.additionalProperties !== undefined) problems.push(...validate(s.additionalProperties, member, `${at}.${name}`));
    }
  }
  if (s.allOf !== undefined) for (const part of s.allOf as unknown[]) problems.push(...validate(part, value, at));
  if (s.anyOf !== undefined && !(s.anyOf as unknown[]).some((part) => validate(part, value, at).length === 0)) problems.push(`${at}: matches none of anyOf`);
  if (s.oneOf !== undefined) {
    const matches = (s.oneOf as unknown[]).filter((part) => validate(part, value, at).length === 0).length;
    if (matches !== 1) problems.push(`${at}: matches ${matches} of oneOf, not exactly 1`);
  }
  return problems;
}

interface ResponseObject {
  description: string;
  headers?: Record<string, { schema: Schema; required?: boolean }>;
  content?: Record<string, { schema: Schema }>;
}

/** The document's response for a request and status: from its operation, or the document's unmatched responses. */
function documentedResponse(method: string, url: string, status: number): ResponseObject | string {
  const path = url.split('?')[0] as string;
  const relative = path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : undefined;
  const operation = relative === undefined ? undefined : DOC.paths[relative]?.[method.toLowerCase()];
  const responses = operation ? operation.responses : (DOC[UNMATCHED_FLAG] as Record<string, unknown>);
  const response = responses[String(status)];
  if (response === undefined) return `${method} ${path} answered ${status}, which the document does not list for ${operation ? 'this operation' : 'a request that matches no operation'}`;
  return deref(response as ResponseObject);
}

/** What is wrong with a reply, per the document: its status, content type, headers and body. Empty when it conforms. */
function conformance(method: string, url: string, reply: Reply): string[] {
  const response = documentedResponse(method, url, reply.status);
  if (typeof response === 'string') return [response];
  const problems: string[] = [];
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = reply.headers[name.toLowerCase()];
    // OpenAPI's headers are optional by default; the document says `required: false` of those a reply may leave out.
    if (value === undefined) {
      if (header.required !== false) problems.push(`header ${name} is missing`);
    }
    else problems.push(...validate(header.schema, String(value), `header ${name}`));
  }
  const media = response.content?.['application/json'];
  if (!media) return [...problems, 'the document gives no application/json content'];
  if (!/^application\/json\b/.test(String(reply.headers['content-type'] ?? ''))) problems.push(`content-type is ${String(reply.headers['content-type'])}`);
  if (reply.body === undefined) return [...problems, `body is not JSON: ${reply.text.slice(0, 200)}`];
  return [...problems, ...validate(media.schema, reply.body)];
}

const schemaOf = (id: string) => ({ $ref: `#/components/schemas/${id}` });

describe('the validator used below (so that a pass means something)', () => {
  it('accepts bodies that keep the schemas', () => {
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { namespace: 'docs', key: 'faq', description: null } })).toEqual([]);
    expect(validate(schemaOf('NsListSuccess'), { success: true, data: [{ key: 'abc', description: '\u{1F600}'.repeat(1024) }] })).toEqual([]);
    expect(validate(schemaOf('Failure'), { success: false, message: 'Nope', help: null })).toEqual([]);
    expect(validate(schemaOf('Failure'), { success: false, message: 'Nope' })).toEqual([]);
    expect(validate(schemaOf('HealthSuccess'), { success: true, data: 'alive' })).toEqual([]);
  });

  it('rejects bodies that break them, saying where', () => {
    const base = { namespace: 'docs', key: 'faq', description: null };
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { ...base, extra: 1 } })).toEqual(['$.data.extra: no value is allowed here']);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { ...base, key: 'no' } })).toEqual([
      '$.data.key: shorter than 3',
      '$.data.key: does not match ^[A-Za-z0-9_-]{3,63}$',
    ]);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { ...base, key: 'faq\n' } })).toEqual(['$.data.key: does not match ^[A-Za-z0-9_-]{3,63}$']);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { namespace: 'docs', key: 'faq' } })).toEqual(['$.data: description is required']);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { ...base, description: 'x'.repeat(1025) } })).toEqual([
      '$.data.description: matches none of anyOf',
    ]);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: true, data: { ...base, description: '' } })).toEqual(['$.data.description: matches none of anyOf']);
    expect(validate(schemaOf('BaseCreateSuccess'), { success: false, data: base })).toEqual(['$.success: is not true']);
    expect(validate(schemaOf('NsListSuccess'), { success: true, data: {} })).toEqual(['$.data: is object, not array']);
    expect(validate(schemaOf('Failure'), { success: false, message: 'Nope', help: 3 })).toEqual(['$.help: is integer, not string or null']);
    expect(validate(schemaOf('Failure'), { success: false, message: 'Nope', stack: 'at x' })).toEqual(['$.stack: no value is allowed here']);
    expect(validate(schemaOf('Failure'), { success: false })).toEqual(['$: message is required']);
    expect(validate(schemaOf('HealthSuccess'), { success: true, data: 'dead' })).toEqual(['$.data: is not "alive"']);
  });

  it('refuses a schema keyword it does not check, rather than skip it', () => {
    expect(() => validate({ type: 'integer', minimum: 3 }, 1)).toThrow(/unsupported JSON Schema keyword minimum/);
  });

  it('finds a status the document does not list, and a missing header', () => {
    expect(conformance('GET', '/v1/ns_list', { status: 409, headers: { 'content-type': 'application/json' }, text: '', body: {} })).toEqual([
      expect.stringMatching(/answered 409, which the document does not list/),
    ]);
    expect(conformance('GET', '/v1/ns_list', { status: 401, headers: { 'content-type': 'application/json' }, text: '', body: { success: false, message: 'x' } })).toEqual([
      'header WWW-Authenticate is missing',
    ]);
  });
});

describe('the OpenAPI document', () => {
  it('is current: docs/openapi.json is what the generator writes (run node --import tsx scripts/gen-openapi.ts)', () => {
    expect(readFileSync(`${ROOT}docs/openapi.json`, 'utf8')).toBe(`${JSON.stringify(DOC, null, 2)}\n`);
  });

  it('is OpenAPI 3.1 with bearer authentication, every route of src/api, and base_list marked as an extension', () => {
    expect(DOC.openapi).toBe('3.1.0');
    expect(DOC.components.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(DOC.security).toEqual([{ bearerAuth: [] }]);
    for (const route of Object.values(ROUTES) as RouteSpec[]) {
      const operation = DOC.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation?.operationId, route.name).toBe(route.name);
      expect(operation?.[EXTENSION_FLAG], route.name).toBe(route.extension ? true : undefined);
      if (route.auth) {
        expect(operation?.security, route.name).toBeUndefined();
        expect(Object.keys(operation?.responses ?? {}), route.name).toEqual(expect.arrayContaining(['200', '400', '401', '500']));
      } else {
        expect(operation?.security, route.name).toEqual([]);
      }
    }
    expect(DOC.paths['/base_list']?.get?.[EXTENSION_FLAG]).toBe(true);
    expect(DOC.paths['/openapi.json']?.get?.security).toEqual([]);
  });

  it('lists every status of docs/contract.md, Status codes, and each $ref resolves', () => {
    const statuses = new Set<string>(Object.keys(DOC[UNMATCHED_FLAG] as object));
    for (const item of Object.values(DOC.paths)) for (const operation of Object.values(item)) for (const status of Object.keys(operation.responses)) statuses.add(status);
    expect([...statuses]).toEqual(expect.arrayContaining(['200', '400', '401', '404', '405', '409', '413', '415', '500']));
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === 'object' && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else walk(value);
        }
      }
    };
    walk(DOC);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(() => resolvePointer(ref), ref).not.toThrow();
  });

  it('is valid JSON Schema for every component this validator checks (no keyword it would skip)', () => {
    for (const [id, schema] of Object.entries(DOC.components.schemas)) {
      expect(() => validate(schema, null), id).not.toThrow();
    }
  });
});

describe('every reply of the server conforms to the document', () => {
  let server: TestServer;
  let failing: FastifyInstance;
  let token: string;
  let other: string;
  const seen = new Map<string, Set<number>>();

  beforeAll(async () => {
    server = await startTestServer({ listen: false, org: 'openapi' });
    token = server.token;
    other = await server.newToken('openapi-other');
    // A store that authenticates (and tells its version) but fails at everything else: the server's 500.
    const store = server.store as unknown as Store;
    const broken = new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'authenticate' || property === 'readVersion' || property === 'tokensVersion' || property === 'dataVersion' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return () => Promise.reject(new Error('the disk is on fire'));
      },
    });
    failing = buildApp({ store: broken, logger: createLogger('silent') });
    await failing.ready();
  });

  afterAll(async () => {
    await failing?.close();
    await server?.close();
  });

  /** Sends a request through app.inject, checks the status the test meant to get, and the reply against the document. */
  async function check(method: string, url: string, status: number, options: CallOptions = {}, app?: FastifyInstance): Promise<Reply> {
    const reply = await call(app ?? server.app, method, url, options);
    expect(reply.status, `${method} ${url}: ${reply.text}`).toBe(status);
    expect(conformance(method, url, reply), `${method} ${url} ${reply.status}: ${reply.text.slice(0, 300)}`).toEqual([]);
    const key = `${method} ${url.split('?')[0]}`;
    seen.set(key, (seen.get(key) ?? new Set()).add(reply.status));
    return reply;
  }

  const big = (fields: Record<string, unknown>) => JSON.stringify({ ...fields, description: 'x'.repeat(LIMITS.bodyBytes) });
  const text = { payload: '{"key":"abc"}', headers: { 'content-type': 'text/plain' } };

  it('health and the document itself, without a token', async () => {
    await check('GET', '/v1/health', 200);
    const reply = await check('GET', '/v1/openapi.json', 200);
    expect(reply.body).toEqual(DOC);
    await check('GET', '/v1/openapi.json', 200, { token: 'kbt_not-a-token' });
  });

  it('auth and ns_list: 200, 400, 401', async () => {
    for (const path of ['/v1/auth', '/v1/ns_list']) {
      await check('GET', path, 200, { token });
      await check('GET', `${path}?extra=1`, 400, { token });
      await check('GET', path, 401);
      await check('GET', path, 401, { token: 'kbt_unknown' });
    }
  });

  it('ns_create: 200 with a key and without, 400 in each way, 401, 409, 413, 415', async () => {
    await check('POST', '/v1/ns_create', 200, { token, json: { key: 'oa-docs', description: 'Docs \u{1F600}' } });
    await check('POST', '/v1/ns_create', 200, { token, json: {} });
    await check('POST', '/v1/ns_create', 200, { token, json: { key: null, description: null } });
    await check('POST', '/v1/ns_create', 400, { token, json: { key: 'no' } });
    await check('POST', '/v1/ns_create', 400, { token, json: { key: 'oa-x', description: '' } });
    await check('POST', '/v1/ns_create', 400, { token, json: { key: 'oa-x', colour: 'red' } });
    await check('POST', '/v1/ns_create', 400, { token, json: ['oa-x'] });
    await check('POST', '/v1/ns_create', 400, { token, payload: '{"key":', headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/ns_create', 400, { token, payload: '{"__proto__":{}}', headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/ns_create', 401, { json: { key: 'oa-x' } });
    await check('POST', '/v1/ns_create', 409, { token, json: { key: 'oa-docs' } });
    await check('POST', '/v1/ns_create', 413, { token, payload: big({ key: 'oa-big' }), headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/ns_create', 415, { token, ...text });
  });

  it('ns_update: 200, 400, 401, 404 (also for another organization), 413, 415', async () => {
    await check('POST', '/v1/ns_create', 200, { token, json: { key: 'oa-upd' } });
    await check('POST', '/v1/ns_update', 200, { token, json: { namespace: 'oa-upd', data: { description: 'New' } } });
    await check('POST', '/v1/ns_update', 200, { token, json: { namespace: 'oa-upd', data: { description: null } } });
    await check('POST', '/v1/ns_update', 400, { token, json: { namespace: 'oa-upd' } });
    await check('POST', '/v1/ns_update', 400, { token, json: { namespace: 'oa-upd', data: { key: 'x' } } });
    await check('POST', '/v1/ns_update', 401, { json: { namespace: 'oa-upd', data: {} } });
    await check('POST', '/v1/ns_update', 404, { token, json: { namespace: 'oa-missing', data: {} } });
    await check('POST', '/v1/ns_update', 404, { token: other, json: { namespace: 'oa-upd', data: {} } });
    await check('POST', '/v1/ns_update', 413, { token, payload: big({ namespace: 'oa-upd' }), headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/ns_update', 415, { token, ...text });
  });

  it('base_create, base_update, base_list, base_delete: every status', async () => {
    await check('POST', '/v1/base_create', 200, { token, json: { namespace: 'oa-bases', key: 'faq', description: 'FAQ' } });
    await check('POST', '/v1/base_create', 200, { token, json: { namespace: 'oa-bases' } });
    await check('POST', '/v1/base_create', 400, { token, json: { namespace: 'oa-bases', key: 'a b c' } });
    await check('POST', '/v1/base_create', 400, { token, json: { key: 'abc' } });
    await check('POST', '/v1/base_create', 401, { json: { namespace: 'oa-bases' } });
    await check('POST', '/v1/base_create', 409, { token, json: { namespace: 'oa-bases', key: 'faq' } });
    await check('POST', '/v1/base_create', 413, { token, payload: big({ namespace: 'oa-bases' }), headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/base_create', 415, { token, ...text });

    await check('POST', '/v1/base_update', 200, { token, json: { namespace: 'oa-bases', base: 'faq', data: { description: 'Questions' } } });
    await check('POST', '/v1/base_update', 200, { token, json: { namespace: 'oa-bases', base: 'faq', data: {} } });
    await check('POST', '/v1/base_update', 400, { token, json: { namespace: 'oa-bases', base: 'faq', data: { description: 7 } } });
    await check('POST', '/v1/base_update', 401, { json: { namespace: 'oa-bases', base: 'faq', data: {} } });
    await check('POST', '/v1/base_update', 404, { token, json: { namespace: 'oa-bases', base: 'nope', data: {} } });
    await check('POST', '/v1/base_update', 413, { token, payload: big({ namespace: 'oa-bases', base: 'faq' }), headers: { 'content-type': 'application/json' } });
    await check('POST', '/v1/base_update', 415, { token, ...text });

    const listed = await check('GET', '/v1/base_list?namespace=oa-bases', 200, { token });
    expect((listed.body as { data: unknown[] }).data).toHaveLength(2);
    await check('GET', '/v1/base_list', 400, { token });
    await check('GET', '/v1/base_list?namespace=a', 400, { token });
    await check('GET', '/v1/base_list?namespace=oa-bases', 401);
    await check('GET', '/v1/base_list?namespace=oa-missing', 404, { token });
    await check('GET', '/v1/base_list?namespace=oa-bases', 404, { token: other });
    const all = await check('GET', '/v1/base_list_all', 200, { token });
    expect((all.body as { data: unknown[] }).data).toHaveLength(2);
    await check('GET', '/v1/base_list_all?namespace=oa-bases', 400, { token });
    await check('GET', '/v1/base_list_all', 401);

    await check('DELETE', '/v1/base_delete', 200, { token, json: { namespace: 'oa-bases', base: 'faq' } });
    await check('DELETE', '/v1/base_delete', 400, { token });
    await check('DELETE', '/v1/base_delete', 400, { token, json: { namespace: 'oa-bases' } });
    await check('DELETE', '/v1/base_delete', 401, { json: { namespace: 'oa-bases', base: 'faq' } });
    await check('DELETE', '/v1/base_delete', 404, { token, json: { namespace: 'oa-bases', base: 'faq' } });
    await check('DELETE', '/v1/base_delete', 413, { token, payload: big({ namespace: 'oa-bases', base: 'faq' }), headers: { 'content-type': 'application/json' } });
    await check('DELETE', '/v1/base_delete', 415, { token, ...text });
  });

  it('ns_delete (an extension): 200, 400, 401, 404, 409, 413, 415', async () => {
    await check('POST', '/v1/base_create', 200, { token, json: { namespace: 'oa-del', key: 'faq' } });
    await check('DELETE', '/v1/ns_delete', 409, { token, json: { namespace: 'oa-del' } });
    await check('DELETE', '/v1/ns_delete', 200, { token, json: { namespace: 'oa-del', cascade: true } });
    await check('DELETE', '/v1/ns_delete', 400, { token });
    await check('DELETE', '/v1/ns_delete', 400, { token, json: { namespace: 'oa-del', cascade: 'yes' } });
    await check('DELETE', '/v1/ns_delete', 401, { json: { namespace: 'oa-del' } });
    await check('DELETE', '/v1/ns_delete', 404, { token, json: { namespace: 'oa-del' } });
    await check('DELETE', '/v1/ns_delete', 413, { token, payload: big({ namespace: 'oa-del' }), headers: { 'content-type': 'application/json' } });
    await check('DELETE', '/v1/ns_delete', 415, { token, ...text });
  });

  it('an unknown route (404) and a known route with the wrong method (405, with Allow)', async () => {
    await check('GET', '/v1/nope', 404, { token });
    await check('GET', '/nope', 404);
    const reply = await check('PUT', '/v1/ns_list', 405, { token });
    expect(reply.headers.allow).toBe('GET, HEAD');
    await check('GET', '/v1/ns_create', 405, { token });
  });

  it('watch (an event stream): 200 with its content type, 400, 401, 410', async () => {
    await check('GET', '/v1/watch?since=abc', 400, { token });
    await check('GET', '/v1/watch?namespace=a', 400, { token });
    await check('GET', '/v1/watch', 401);
    await check('GET', '/v1/watch?since=999999', 410, { token });
    // A stream does not end by itself: its 200 is read over a port of its own server, up to its headers.
    const live = await startTestServer({ org: 'openapi-watch' });
    try {
      const stream = await openWatch(live.url, live.token);
      stream.close();
      expect(stream.status).toBe(200);
      const documented = Object.keys(((DOC.paths['/watch'] as { get: { responses: { '200': { content: object } } } }).get.responses['200'].content));
      expect(documented).toEqual([stream.headers.get('content-type')?.split(';')[0]]);
      seen.set('GET /v1/watch', (seen.get('GET /v1/watch') ?? new Set()).add(200));
    } finally {
      await live.close();
    }
  });

  it('500 when storage fails, for reads and writes alike', async () => {
    await check('GET', '/v1/ns_list', 500, { token }, failing);
    await check('GET', '/v1/base_list?namespace=oa-bases', 500, { token }, failing);
    await check('GET', '/v1/base_list_all', 500, { token }, failing);
    await check('POST', '/v1/ns_create', 500, { token, json: { key: 'oa-fire' } }, failing);
    await check('DELETE', '/v1/base_delete', 500, { token, json: { namespace: 'oa-bases', base: 'faq' } }, failing);
  });

  it('whatever the protections answer (rate limit, Idempotency-Key) is documented too', async () => {
    // Not asserting the statuses here (routes.test.ts owns that): only that each reply is one the document lists.
    for (let i = 0; i < 25; i++) {
      const reply = await call(server.app, 'GET', '/v1/ns_list', { token: 'kbt_wrong', remoteAddress: '10.9.9.9' });
      expect(conformance('GET', '/v1/ns_list', reply), reply.text).toEqual([]);
    }
    const headers = { 'idempotency-key': 'oa-idem-1' };
    for (const json of [{ key: 'oa-idem' }, { key: 'oa-idem' }, { key: 'oa-idem-other' }]) {
      const reply = await call(server.app, 'POST', '/v1/ns_create', { token, json, headers });
      expect(conformance('POST', '/v1/ns_create', reply), reply.text).toEqual([]);
    }
  });

  it('covered every operation with its success and every failure status of docs/contract.md, Status codes', () => {
    for (const [path, item] of Object.entries(DOC.paths)) {
      for (const method of Object.keys(item)) {
        expect(seen.get(`${method.toUpperCase()} ${API_PREFIX}${path}`)?.has(200), `${method} ${path}`).toBe(true);
      }
    }
    const statuses = new Set([...seen.values()].flatMap((set) => [...set]));
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 401, 404, 405, 409, 413, 415, 500]));
  });
});
