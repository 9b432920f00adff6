import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, exitCodeFor, KbClient } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rejection } from '../helpers/rejection.js';

let server: TestServer;
let client: KbClient;
const clients: KbClient[] = [];

function newClient(token: string | undefined, trace?: (line: string) => void): KbClient {
  const made = new KbClient({ url: server.url, token, retries: 0, trace });
  clients.push(made);
  return made;
}

let counter = 0;
const uniqueKey = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

beforeAll(async () => {
  server = await startTestServer({ org: 'acme' });
  client = newClient(server.token);
});

afterAll(async () => {
  await Promise.all(clients.map((made) => made.close()));
  await server.close();
});

describe('KbClient against a real kb server: results', () => {
  it('health resolves to "alive" without any token', async () => {
    expect(await newClient(undefined).health()).toBe('alive');
  });

  it('auth resolves to the name of the token\'s organization', async () => {
    expect(await client.auth()).toBe('acme');
    const other = await server.newToken('globex');
    expect(await newClient(other).auth()).toBe('globex');
  });

  it('nsCreate creates a namespace with the given key and description', async () => {
    const key = uniqueKey('ns');
    expect(await client.nsCreate({ key, description: 'Docs' })).toEqual({ key, description: 'Docs' });
  });

  it('nsCreate without a key gets a generated ns_<uuid> key and a null description', async () => {
    const created = await client.nsCreate({});
    expect(created.key).toMatch(/^ns_[0-9a-f-]{36}$/);
    expect(created.description).toBeNull();
  });

  it('nsList lists the organization\'s namespaces ordered by key', async () => {
    const keys = [uniqueKey('list-b'), uniqueKey('list-a')];
    for (const key of keys) await client.nsCreate({ key });
    const listed = (await client.nsList()).map((ns) => ns.key);
    expect(listed).toEqual(expect.arrayContaining(keys));
    expect(listed).toEqual([...listed].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)));
  });

  it('nsUpdate sets a description and null clears it', async () => {
    const key = uniqueKey('upd');
    await client.nsCreate({ key });
    expect(await client.nsUpdate({ namespace: key, data: { description: 'Set' } })).toEqual({ key, description: 'Set' });
    expect(await client.nsUpdate({ namespace: key, data: { description: null } })).toEqual({ key, description: null });
  });

  it('baseCreate creates a base, and its namespace when that does not exist', async () => {
    const namespace = uniqueKey('auto');
    expect(await client.baseCreate({ namespace, key: 'handbook', description: 'HR' })).toEqual({
      namespace, key: 'handbook', description: 'HR',
    });
    expect((await client.nsList()).map((ns) => ns.key)).toContain(namespace);
  });

  it('baseCreate without a key gets a generated kb_<uuid> key', async () => {
    const created = await client.baseCreate({ namespace: uniqueKey('gen') });
    expect(created.key).toMatch(/^kb_[0-9a-f-]{36}$/);
  });

  it('baseUpdate changes a base\'s description', async () => {
    const namespace = uniqueKey('bupd');
    await client.baseCreate({ namespace, key: 'faq' });
    expect(await client.baseUpdate({ namespace, base: 'faq', data: { description: 'Questions' } })).toEqual({
      namespace, key: 'faq', description: 'Questions',
    });
  });

  it('baseList lists a namespace\'s bases ordered by key', async () => {
    const namespace = uniqueKey('blist');
    for (const key of ['zeta', 'alpha', 'Mid']) await client.baseCreate({ namespace, key });
    expect(await client.baseList(namespace)).toEqual([
      { namespace, key: 'Mid', description: null },
      { namespace, key: 'alpha', description: null },
      { namespace, key: 'zeta', description: null },
    ]);
  });

  it('baseDelete sends DELETE with a JSON body and resolves to the deleted base', async () => {
    const namespace = uniqueKey('bdel');
    await client.baseCreate({ namespace, key: 'gone', description: 'bye' });
    expect(await client.baseDelete({ namespace, base: 'gone' })).toEqual({ namespace, key: 'gone', description: 'bye' });
    expect(await client.baseList(namespace)).toEqual([]);
  });

  it('keys such as constructor and __proto__ are ordinary keys', async () => {
    const namespace = uniqueKey('proto');
    await client.baseCreate({ namespace, key: 'constructor' });
    await client.baseCreate({ namespace, key: '__proto__' });
    expect((await client.baseList(namespace)).map((base) => base.key)).toEqual(['__proto__', 'constructor']);
  });

  it('request() resolves to the envelope\'s data for a GET path relative to /v1', async () => {
    expect(await client.request('get', '/auth')).toBe('acme');
    expect(await client.request('GET', 'health')).toBe('alive');
  });

  it('request() sends a JSON body, and takes a query string in the path', async () => {
    const namespace = uniqueKey('raw');
    expect(await client.request('POST', '/base_create', { namespace, key: 'one' })).toEqual({ namespace, key: 'one', description: null });
    expect(await client.request('GET', `/base_list?namespace=${namespace}`)).toEqual([{ namespace, key: 'one', description: null }]);
    expect(await client.request('DELETE', '/base_delete', { namespace, base: 'one' })).toEqual({ namespace, key: 'one', description: null });
  });
});

describe('KbClient against a real kb server: failures', () => {
  it('a wrong token gives ApiError 401 unauthorized with the server\'s message and help, exit code 4', async () => {
    const error = await rejection(newClient('kbt_not-a-real-token').nsList());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      name: 'ApiError', status: 401, code: 'unauthorized', method: 'GET', url: `${server.url}/v1/ns_list`, local: false,
    });
    expect((error as ApiError).message).toMatch(/Authentication required/);
    expect((error as ApiError).help).toMatch(/kb serve token create/);
    expect(exitCodeFor(error)).toBe(4);
  });

  it('no token at all gives 401 on an authenticated route', async () => {
    const error = await rejection(newClient(undefined).auth());
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(exitCodeFor(error)).toBe(4);
  });

  it('a namespace that does not exist gives ApiError 404 not_found, exit code 3', async () => {
    const error = await rejection(client.nsUpdate({ namespace: uniqueKey('missing'), data: { description: 'x' } }));
    expect(error).toMatchObject({ name: 'ApiError', status: 404, code: 'not_found', method: 'POST' });
    expect(exitCodeFor(error)).toBe(3);
  });

  it('baseList of a namespace that does not exist rethrows the 404 (the deployment does offer base_list)', async () => {
    const error = await rejection(client.baseList(uniqueKey('nowhere')));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
    expect(exitCodeFor(error)).toBe(3);
  });

  it('another organization\'s namespace is 404, not 403', async () => {
    const key = uniqueKey('private');
    await client.nsCreate({ key });
    const outsider = newClient(await server.newToken('initech'));
    expect(await rejection(outsider.baseList(key))).toMatchObject({ status: 404 });
  });

  it('a key already taken gives ApiError 409 conflict, exit code 5', async () => {
    const key = uniqueKey('dup');
    await client.nsCreate({ key });
    const error = await rejection(client.nsCreate({ key }));
    expect(error).toMatchObject({ name: 'ApiError', status: 409, code: 'conflict' });
    expect(exitCodeFor(error)).toBe(5);
  });

  it('input the server rejects gives ApiError 400 bad_request naming the rule, exit code 2', async () => {
    const error = await rejection(client.request('POST', '/ns_create', { key: 'x' }));
    expect(error).toMatchObject({ name: 'ApiError', status: 400, code: 'bad_request', local: false });
    expect((error as ApiError).message).toMatch(/key: a key is 3 to 63 characters/);
    expect(exitCodeFor(error)).toBe(2);
  });

  it('typed methods reject invalid input locally, saying that nothing was sent', async () => {
    const lines: string[] = [];
    const traced = newClient(server.token, (line) => lines.push(line));
    const error = await rejection(traced.nsCreate({ key: 'x' }));
    expect(error).toMatchObject({ name: 'ApiError', status: 400, code: 'bad_request', local: true, method: 'POST' });
    expect((error as ApiError).message).toBe(
      'invalid key "x": a key is 3 to 63 characters, each A-Z, a-z, 0-9, dash (-) or underscore (_): nothing was sent',
    );
    expect(exitCodeFor(error)).toBe(2);
    expect(await rejection(traced.baseList('no spaces'))).toMatchObject({ status: 400, local: true });
    expect(lines).toEqual([]);
  });

  it('an unknown path through request() gives ApiError 404', async () => {
    const error = await rejection(client.request('GET', '/no_such_route'));
    expect(error).toMatchObject({ status: 404, code: 'not_found', url: `${server.url}/v1/no_such_route` });
  });
});
