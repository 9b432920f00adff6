import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, logLines, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE } from '../helpers/database.js';

const running = killedAfterEach();

const databases = droppedAfterAll();

/** An environment of its own, pointing kb serve at a fresh database of the engine under test (KB_DATA_DIR or KB_DATABASE_URL). */
async function storageEnv(): Promise<NodeJS.ProcessEnv> {
  const database = await createTestDatabase();
  databases.push(database);
  return isolatedEnv(database.env);
}

/** kb serve as users start it: with its warm-up. */
async function serve(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(['--warm-up', ...args], env);
  running.push(server);
  return server;
}

async function call(url: string, path: string, init: { method?: string; token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/v1${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function newToken(env: NodeJS.ProcessEnv, org: string): Promise<string> {
  const result = await runKb(['serve', 'token', 'create', '--org', org], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').at(-1) as string;
}

describe(`kb serve, as a process on a real port (${ENGINE})`, () => {
  it('creates, prints once and saves a token for organization local on its first start', async () => {
    const env = await storageEnv();
    const first = await serve(env);
    await expect.poll(() => first.stdout()).toMatch(/kbt_[A-Za-z0-9_-]{43}/);
    const token = /(kbt_[A-Za-z0-9_-]{43})/.exec(first.stdout())?.[1] as string;
    expect(first.stdout()).toContain(first.url);
    expect((await call(first.url, '/auth', { token })).body).toEqual({ success: true, data: 'local' });

    const config = JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8'));
    expect(config.defaultProfile).toBe('local');
    expect(config.profiles.local).toEqual({ url: first.url, token });

    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    const second = await serve(env);
    expect(second.stdout()).not.toContain('kbt_');
  });

  it('answers every route of the API and keeps what it answered across a restart', async () => {
    const env = await storageEnv();
    const server = await serve(env);
    const token = await newToken(env, 'acme');
    expect(await call(server.url, '/health')).toMatchObject({ status: 200, body: { success: true, data: 'alive' } });
    expect((await call(server.url, '/auth', { token })).body.data).toBe('acme');
    expect((await call(server.url, '/ns_create', { token, body: { key: 'docs', description: 'Docs' } })).status).toBe(200);
    expect((await call(server.url, '/ns_update', { token, body: { namespace: 'docs', data: { description: 'All docs' } } })).body.data)
      .toEqual({ key: 'docs', description: 'All docs' });
    expect((await call(server.url, '/base_create', { token, body: { namespace: 'auto', key: 'faq' } })).body.data)
      .toEqual({ namespace: 'auto', key: 'faq', description: null });
    expect((await call(server.url, '/base_update', { token, body: { namespace: 'auto', base: 'faq', data: { description: 'FAQ' } } })).body.data)
      .toEqual({ namespace: 'auto', key: 'faq', description: 'FAQ' });
    expect((await call(server.url, '/base_create', { token, body: { namespace: 'auto', key: 'gone' } })).status).toBe(200);
    expect((await call(server.url, '/base_delete', { token, method: 'DELETE', body: { namespace: 'auto', base: 'gone' } })).status).toBe(200);

    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const again = await serve(env);
    expect((await call(again.url, '/ns_list', { token })).body.data).toEqual([
      { key: 'auto', description: null },
      { key: 'docs', description: 'All docs' },
    ]);
    expect((await call(again.url, '/base_list?namespace=auto', { token })).body.data).toEqual([
      { namespace: 'auto', key: 'faq', description: 'FAQ' },
    ]);
  });

  it('answers each row of the status table with the failure envelope', async () => {
    const env = await storageEnv();
    const server = await serve(env);
    const token = await newToken(env, 'acme');
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`${server.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': type }, body });
    const cases: Array<[string, Promise<Response>, number]> = [
      ['malformed JSON', post('/ns_create', '{"key":'), 400],
      ['unknown field', post('/ns_create', '{"key":"abc","owner":"x"}'), 400],
      ['no token', fetch(`${server.url}/v1/ns_list`), 401],
      ['unknown namespace', post('/ns_update', '{"namespace":"nope","data":{}}'), 404],
      ['unknown route', fetch(`${server.url}/v1/nothing`), 404],
      ['body over 64 KiB', post('/ns_create', JSON.stringify({ key: 'big', description: 'x'.repeat(65 * 1024) })), 413],
      ['text body', post('/ns_create', 'key=abc', 'text/plain'), 415],
    ];
    for (const [what, pending, status] of cases) {
      const response = await pending;
      const body = (await response.json()) as Record<string, unknown>;
      expect({ what, status: response.status }).toEqual({ what, status });
      expect(body.success).toBe(false);
      expect(typeof body.message).toBe('string');
    }
    await post('/ns_create', '{"key":"dup"}');
    expect((await post('/ns_create', '{"key":"dup"}')).status).toBe(409);
  });

  it('keeps organizations apart: each sees the other\'s namespace and base as not found', async () => {
    const env = await storageEnv();
    const server = await serve(env);
    const a = await newToken(env, 'org-a');
    const b = await newToken(env, 'org-b');
    await call(server.url, '/base_create', { token: a, body: { namespace: 'shared-name', key: 'only-a' } });
    await call(server.url, '/base_create', { token: b, body: { namespace: 'b-space', key: 'only-b' } });
    expect((await call(server.url, '/ns_list', { token: a })).body.data).toEqual([{ key: 'shared-name', description: null }]);
    expect((await call(server.url, '/ns_list', { token: b })).body.data).toEqual([{ key: 'b-space', description: null }]);
    expect((await call(server.url, '/base_list?namespace=shared-name', { token: b })).status).toBe(404);
    expect((await call(server.url, '/base_list?namespace=b-space', { token: a })).status).toBe(404);
    expect((await call(server.url, '/base_delete', { token: b, method: 'DELETE', body: { namespace: 'shared-name', base: 'only-a' } })).status).toBe(404);
    expect((await call(server.url, '/base_list?namespace=shared-name', { token: a })).body.data).toHaveLength(1);
  });

  it('serve token create, list and revoke manage tokens beside a running server', async () => {
    const env = await storageEnv();
    const server = await serve(env);
    const created = await runKb(['serve', 'token', 'create', '--org', 'acme', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    const json = JSON.parse(created.stdout) as { org: string; token: string };
    expect(Object.keys(json).sort()).toEqual(['org', 'token']);
    expect(json.org).toBe('acme');
    expect((await call(server.url, '/auth', { token: json.token })).status).toBe(200);

    const list = await runKb(['serve', 'token', 'list', '--json'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(json.token);
    const tokens = JSON.parse(list.stdout) as Array<{ id: string; org: string; revokedAt: string | null }>;
    const mine = tokens.find((token) => token.org === 'acme');
    expect(mine?.revokedAt).toBeNull();

    const human = await runKb(['serve', 'token', 'list'], { env });
    expect(human.stdout).toMatch(/^ID\s+NAME\s+ORGANIZATION\s+SCOPE\s+CREATED\s+EXPIRES\s+LAST USED\s+STATUS\n/);
    expect(human.stdout).not.toContain('kbt_');

    const revoked = await runKb(['serve', 'token', 'revoke', mine?.id as string], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await call(server.url, '/auth', { token: json.token });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toBe('Bearer');

    expect((await runKb(['serve', 'token', 'revoke', 'tok_000000000000'], { env })).code).toBe(3);
    const bad = await runKb(['serve', 'token', 'create', '--org', 'a b'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('3 to 63');
  });

  it('prints only the token on stdout, so T=$(kb serve token create --org acme) works', async () => {
    const env = await storageEnv();
    const result = await runKb(['serve', 'token', 'create', '--org', 'acme'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^kbt_[A-Za-z0-9_-]{43}\n$/);
  });

  // Each engine's database that is not kb's own, intact: a SQLite file whose pages are garbage, a PostgreSQL database
  // holding another application's tables (test/e2e/postgres.test.ts has PostgreSQL's other refusals).
  it(`refuses a database it cannot trust with a clear message, exit 1, and leaves it as it was (${ENGINE})`, async () => {
    if (ENGINE === 'sqlite') {
      const env = isolatedEnv();
      const file = join(env.KB_DATA_DIR as string, 'kb.db');
      writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4000, 7)]));
      const before = createHash('sha256').update(readFileSync(file)).digest('hex');
      const result = await runKb(['serve', '--port', '0'], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(file);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(before);
      expect(existsSync(`${file}-wal`)).toBe(false);
      return;
    }
    const database = await createTestDatabase();
    databases.push(database);
    await database.sql('CREATE TABLE invoices (id integer PRIMARY KEY)');
    const result = await runKb(['serve', '--port', '0'], { env: isolatedEnv(database.env) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the database at postgres:\/\/kb:\*\*\*@\S+ is not a kb database/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await database.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ tablename: 'invoices' }]);
  });

  it('warns, once it listens, when its address can be reached from other machines: kb serve speaks plain HTTP', async () => {
    const [everywhere, loopback] = await Promise.all([serve(await storageEnv(), ['--host', '0.0.0.0']), serve(await storageEnv(), ['--host', 'localhost'])]);
    const warning = '0.0.0.0 can be reached from other machines, and kb serve speaks plain HTTP: tokens and data would cross the network unencrypted. Serve TLS with --tls-cert and --tls-key, or put a TLS-terminating proxy in front of it.';
    await expect.poll(() => logLines(everywhere.stderr())).toContainEqual({ level: 'warn', time: expect.any(Number), msg: warning });
    await expect.poll(() => logLines(loopback.stderr()).length).toBeGreaterThan(0);
    expect(logLines(loopback.stderr()).filter((line) => line.level === 'warn')).toEqual([]);
  });

  it('says the port is in use instead of crashing', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runKb(['serve', '--port', String(port)], { env: await storageEnv() });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('in use');
    } finally {
      blocker.close();
    }
  });
});

describe(`kb serve under concurrent creates (${ENGINE})`, () => {
  it('gives exactly one 200 and 39 409s to 40 simultaneous creates of one key', async () => {
    const env = await storageEnv();
    const server = await serve(env);
    const token = await newToken(env, 'race');
    const attempt = (path: string, body: unknown) =>
      fetch(`${server.url}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.status);
    const bases = await Promise.all(Array.from({ length: 40 }, () => attempt('/base_create', { namespace: 'race', key: 'one' })));
    expect(bases.filter((status) => status === 200)).toHaveLength(1);
    expect(bases.filter((status) => status === 409)).toHaveLength(39);
    const namespaces = await Promise.all(Array.from({ length: 40 }, () => attempt('/ns_create', { key: 'only-once' })));
    expect(namespaces.filter((status) => status === 200)).toHaveLength(1);
    expect(namespaces.filter((status) => status === 409)).toHaveLength(39);
  });
});
