import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, type ExpectStatic, it } from 'vitest';
import { API_PREFIX, ROUTE_TABLE } from '../../src/api/route-table.js';
import { CREATE_SCHEMA_TABLE, POSTGRES_MIGRATIONS, SCHEMA_TABLE } from '../../src/store/postgres-migrations.js';
import { APPLICATION_ID, MIGRATIONS } from '../../src/store/migrations.js';
import { MARK_CLEAN } from '../../src/store/sqlite-files.js';
import { COMMIT_BUMP } from '../../src/store/migrations.js';
import { isolatedEnv, KB_BIN, killedAfterEach, ROOT, runKb, runProcess, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE, pgQuery, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/temp.js';

const running = killedAfterEach();
const databases = droppedAfterAll();

async function database(): Promise<{ db: TestDatabase; env: NodeJS.ProcessEnv }> {
  const db = await createTestDatabase();
  databases.push(db);
  return { db, env: isolatedEnv(db.env) };
}

async function serve(env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const server = await startServe([], env);
  running.push(server);
  return server;
}

interface Reply {
  status: number;
  body: { success: boolean; data?: unknown; message?: string; help?: string };
}

async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${API_PREFIX}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

async function token(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const result = await runKb(['serve', 'token', 'create', ...args], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').at(-1) as string;
}

interface Listed {
  id: string;
  name: string | null;
  org: string;
  scope: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  status: string;
}

async function list(env: NodeJS.ProcessEnv): Promise<Listed[]> {
  const result = await runKb(['serve', 'token', 'list', '--json'], { env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Listed[];
}

/** Every write route of the API, with a body that a token of full scope may send. */
const WRITES: Record<string, unknown> = {
  ns_create: { key: 'fresh' },
  ns_update: { namespace: 'docs', data: { description: 'changed' } },
  base_create: { namespace: 'docs', key: 'other' },
  base_update: { namespace: 'docs', base: 'guide', data: { description: 'changed' } },
  base_delete: { namespace: 'docs', base: 'guide' },
  ns_delete: { namespace: 'docs', cascade: true },
};

// Each test starts servers and runs the CLI a dozen times: minutes on a loaded machine, not seconds.
describe(`named, expiring, read-only tokens through the built kb (${ENGINE})`, { timeout: 180_000 }, () => {
  it('a token made to expire in a second is answered 401 saying when it expired, on the API and in the CLI', async () => {
    const { env } = await database();
    const server = await serve(env);
    const doomed = await token(env, '--org', 'acme', '--name', 'doomed', '--expires', '1s');
    // Used while it may still work, so that the server has it known (its cache) when it expires.
    await call(server.url, doomed, 'GET', '/auth');
    const [listed] = (await list(env)).filter((info) => info.name === 'doomed');
    const expiresAt = listed?.expiresAt as string;
    expect(Date.parse(expiresAt) - Date.parse(listed?.createdAt as string)).toBeLessThanOrEqual(1000);
    await new Promise((done) => setTimeout(done, Math.max(0, Date.parse(expiresAt) - Date.now() + 20)));

    const reply = await call(server.url, doomed, 'GET', '/ns_list');
    expect(reply).toEqual({ status: 401, body: { success: false, message: `This token expired at ${expiresAt}`, help: expect.any(String) } });
    const cli = await runKb(['ns', 'list'], { env: { ...env, KB_URL: server.url, KB_TOKEN: doomed } });
    expect(cli.code).toBe(4);
    expect(cli.stderr).toContain(`This token expired at ${expiresAt}`);
    expect((await list(env)).find((info) => info.name === 'doomed')?.status).toBe('expired');

    const lasting = await token(env, '--org', 'acme', '--expires', '30d');
    expect(await call(server.url, lasting, 'GET', '/auth')).toEqual({ status: 200, body: { success: true, data: 'acme' } });
  });

  it('a read-only token reads, and every write route answers it 403 naming its scope, changing nothing', async ({ expect }) => {
    const { db, env } = await database();
    const server = await serve(env);
    const full = await token(env, '--org', 'acme');
    const reader = await token(env, '--org', 'acme', '--name', 'reader', '--read-only');
    expect((await call(server.url, full, 'POST', '/base_create', { namespace: 'docs', key: 'guide' })).status).toBe(200);
    const before = await db.dump();

    const writes = Object.values(ROUTE_TABLE).filter((route) => route.method !== 'GET');
    expect(writes.map((route) => route.name).sort()).toEqual(Object.keys(WRITES).sort());
    for (const route of writes) {
      const reply = await call(server.url, reader, route.method, route.path, WRITES[route.name]);
      expect(reply.status, route.name).toBe(403);
      expect(reply.body).toEqual({ success: false, message: expect.stringContaining('scope read-only'), help: expect.any(String) });
    }
    expect(await db.dump()).toBe(before);

    expect(await call(server.url, reader, 'GET', '/auth')).toEqual({ status: 200, body: { success: true, data: 'acme' } });
    expect((await call(server.url, reader, 'GET', '/ns_list')).body.data).toEqual([{ key: 'docs', description: null }]);
    expect((await call(server.url, reader, 'GET', '/base_list?namespace=docs')).status).toBe(200);
    const cli = await runKb(['ns', 'create', 'other'], { env: { ...env, KB_URL: server.url, KB_TOKEN: reader } });
    expect(cli.code).toBe(4);
    expect(cli.stderr).toContain('scope read-only');
    // The same writes with a token of full scope: the 403 was the scope's.
    for (const route of writes) expect((await call(server.url, full, route.method, route.path, WRITES[route.name])).status, route.name).toBe(200);
  });

  it('writes a token\'s last use at most once a minute under a load of requests, and token list shows it', async ({ expect }) => {
    const { db, env } = await database();
    const server = await serve(env);
    const busy = await token(env, '--org', 'acme', '--name', 'busy');
    // Every write of last_used_at, counted by the database itself: on PostgreSQL each UPDATE statement (one that changes
    // no row included), on SQLite each write transaction (each moves the generation of its meta row).
    if (ENGINE === 'postgres') {
      await db.sql('CREATE TABLE used_writes (at timestamptz)');
      await db.sql(`CREATE FUNCTION count_use() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO used_writes VALUES (now()); RETURN NULL; END $$;
        CREATE TRIGGER count_use AFTER UPDATE OF last_used_at ON tokens FOR EACH STATEMENT EXECUTE FUNCTION count_use()`);
    }
    const writesSoFar = async () =>
      Number(((await db.sql(ENGINE === 'postgres' ? 'SELECT count(*) AS n FROM used_writes' : 'SELECT generation AS n FROM meta')) as { n: number | string }[])[0]?.n);
    const before = await writesSoFar();
    const started = Date.now();
    const statuses: number[] = [];
    for (let wave = 0; wave < 20; wave++) {
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(server.url, busy, 'GET', i % 2 ? '/ns_list' : '/auth')));
      statuses.push(...replies.map((reply) => reply.status));
    }
    const ended = Date.now();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // The last write is not awaited by any request: wait for it to show.
    await expect.poll(async () => (await list(env)).find((info) => info.name === 'busy')?.lastUsedAt).not.toBeNull();

    const minutes = Math.floor(ended / 60_000) - Math.floor(started / 60_000) + 1;
    const writes = (await writesSoFar()) - before;
    expect(writes).toBeGreaterThanOrEqual(1);
    expect(writes).toBeLessThanOrEqual(minutes);
    const lastUsed = Date.parse((await list(env)).find((info) => info.name === 'busy')?.lastUsedAt as string);
    expect(lastUsed % 60_000).toBe(0);
    expect(lastUsed).toBeGreaterThanOrEqual(Math.floor(started / 60_000) * 60_000);
    expect(lastUsed).toBeLessThanOrEqual(ended);
  });

  it('revoke by name holds at once on a second server over the same storage, for reads and writes', async ({ expect }) => {
    const { env } = await database();
    const first = await serve(env);
    // A second server: a replica over the same PostgreSQL database, or a second process over the same SQLite file.
    const second = await serve(env);
    const doomed = await token(env, '--org', 'acme', '--name', 'doomed');
    for (const server of [first, second]) expect((await call(server.url, doomed, 'GET', '/auth')).status).toBe(200);

    const revoked = await runKb(['serve', 'token', 'revoke', 'doomed'], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const server of [first, second]) {
      expect((await call(server.url, doomed, 'GET', '/auth')).status).toBe(401);
      expect((await call(server.url, doomed, 'POST', '/ns_create', { key: 'late' })).status).toBe(401);
    }
    expect((await list(env)).map(({ name, status }) => ({ name, status }))).toContainEqual({ name: 'doomed', status: 'revoked' });
    // A revoked name is free again.
    await token(env, '--org', 'acme', '--name', 'doomed');
  });

  it('GET /v1/auth tells the scope and expiry in headers, data stays the organization; kb auth status shows them and warns within 7 days', async ({ expect }) => {
    const { env } = await database();
    const server = await serve(env);
    const soon = await token(env, '--org', 'acme', '--read-only', '--expires', '3d');
    const expiresAt = (await list(env)).find((info) => info.scope === 'read-only')?.expiresAt as string;
    const response = await fetch(`${server.url}/v1/auth`, { headers: { authorization: `Bearer ${soon}` } });
    expect(await response.json()).toEqual({ success: true, data: 'acme' });
    expect([response.headers.get('kb-token-scope'), response.headers.get('kb-token-expires')]).toEqual(['read-only', expiresAt]);

    const status = await runKb(['auth', 'status', '--json'], { env: { ...env, KB_URL: server.url, KB_TOKEN: soon } });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ organization: 'acme', scope: 'read-only', expiresAt });
    expect(status.stderr).toMatch(new RegExp(`^Warning: the token expires at ${expiresAt} \\(in 7[01] hours\\)`));
    const lasting = await token(env, '--org', 'acme', '--expires', '30d');
    const calm = await runKb(['auth', 'status'], { env: { ...env, KB_URL: server.url, KB_TOKEN: lasting } });
    expect(calm.code, calm.stderr).toBe(0);
    expect(calm.stdout).toMatch(/^scope: +full$/m);
    expect(calm.stderr).toBe('');
  });

  it('an expiry holds on a second server over the same storage, for a token both have seen while it worked', async ({ expect }) => {
    const { env } = await database();
    const first = await serve(env);
    const second = await serve(env);
    const brief = await token(env, '--org', 'acme', '--name', 'brief', '--expires', '5s');
    // Seen by both while it works: each has it in what it knows of tokens when it expires.
    for (const server of [first, second]) expect((await call(server.url, brief, 'GET', '/auth')).status).toBe(200);
    const expiresAt = (await list(env)).find((info) => info.name === 'brief')?.expiresAt as string;
    await new Promise((done) => setTimeout(done, Math.max(0, Date.parse(expiresAt) - Date.now() + 20)));

    for (const server of [first, second]) {
      expect(await call(server.url, brief, 'GET', '/ns_list')).toEqual({ status: 401, body: { success: false, message: `This token expired at ${expiresAt}`, help: expect.any(String) } });
      expect((await call(server.url, brief, 'POST', '/ns_create', { key: 'late' })).status).toBe(401);
    }
  });

  it('takes --expires as a date (its 00:00 UTC), shown by token list; an invalid or past --expires and an invalid --name exit 2 and create nothing', async ({ expect }) => {
    const { env } = await database();
    const year = new Date().getUTCFullYear() + 1;
    await token(env, '--org', 'acme', '--name', 'dated', '--expires', `${year}-01-31`);
    expect((await list(env)).map(({ name, expiresAt, status }) => ({ name, expiresAt, status }))).toEqual([
      { name: 'dated', expiresAt: `${year}-01-31T00:00:00.000Z`, status: 'active' },
    ]);
    const table = await runKb(['serve', 'token', 'list'], { env });
    expect(table.stdout).toMatch(new RegExp(`^tok_[0-9a-f]{12} +dated +acme +full +\\S+ \\S+ +${year}-01-31 00:00 +never +active$`, 'm'));

    const expected = 'expected a duration such as 30d, 12h or 90s, or a date such as 2027-01-31';
    const refusals: Array<[string[], string]> = [
      [['--expires', 'soon'], `Invalid --expires "soon": ${expected}`],
      [['--expires', '0d'], `Invalid --expires "0d": ${expected}`],
      // A day February does not have: not read as March 2nd.
      [['--expires', `${year}-02-30`], `Invalid --expires "${year}-02-30": ${expected}`],
      [['--expires', '2020-01-31'], 'Invalid --expires "2020-01-31": 2020-01-31T00:00:00.000Z is in the past'],
      ...['tok_0123456789ab', 'kbt_looks-like-a-token', '-', '.hidden', 'two words', 'x'.repeat(64)].map(
        (name): [string[], string] => [['--name', name], 'Invalid --name: a name is 1 to 63 characters'],
      ),
    ];
    for (const [args, message] of refusals) {
      const refused = await runKb(['serve', 'token', 'create', '--org', 'acme', ...args], { env });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain(message);
      expect(refused.stdout).toBe('');
    }
    expect(await list(env)).toHaveLength(1);
  });

  it('token list\'s table shows each token\'s name, scope, expiry, last use and status: active, expired, revoked', async ({ expect }) => {
    const { env } = await database();
    await token(env, '--org', 'acme');
    const reader = await token(env, '--org', 'acme', '--name', 'reader', '--read-only', '--expires', '30d');
    await token(env, '--org', 'acme', '--name', 'brief', '--expires', '1s');
    await token(env, '--org', 'acme', '--name', 'gone');
    expect((await runKb(['serve', 'token', 'revoke', 'gone'], { env })).code).toBe(0);
    // Started once tokens exist, so that its first start makes none of its own.
    const server = await serve(env);
    expect((await call(server.url, reader, 'GET', '/ns_list')).status).toBe(200);
    await expect.poll(async () => (await list(env)).find((info) => info.name === 'reader')?.lastUsedAt).not.toBeNull();
    await expect.poll(async () => (await list(env)).find((info) => info.name === 'brief')?.status).toBe('expired');
    const listed = await list(env);

    const table = await runKb(['serve', 'token', 'list'], { env });
    expect(table.code, table.stderr).toBe(0);
    const minute = (time: string | null, none: string) => (time === null ? none : `${time.slice(0, 10)} ${time.slice(11, 16)}`);
    const rows = table.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID +NAME +ORGANIZATION +SCOPE +CREATED +EXPIRES +LAST USED +STATUS$/);
    expect(rows.slice(1).map((row) => row.split(/ {2,}/))).toEqual(
      listed.map((info) => [info.id, info.name ?? '-', 'acme', info.scope, minute(info.createdAt, '-'), minute(info.expiresAt, 'never'), minute(info.lastUsedAt, 'never'), info.status]),
    );
    expect(listed.map(({ name, scope, status }) => [name, scope, status])).toEqual([
      [null, 'full', 'active'],
      ['reader', 'read-only', 'active'],
      ['brief', 'full', 'expired'],
      ['gone', 'full', 'revoked'],
    ]);
    expect(listed.find((info) => info.name === 'reader')?.lastUsedAt).toMatch(/:00\.000Z$/);
    expect(table.stdout).not.toContain(reader);
  });

  it('a second token of a name taken is refused with exit 5, and nothing is created', async ({ expect }) => {
    const { env } = await database();
    await token(env, '--org', 'acme', '--name', 'deploy');
    const again = await runKb(['serve', 'token', 'create', '--org', 'acme', '--name', 'deploy'], { env });
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('A token named deploy exists already');
    expect(again.stdout).toBe('');
    expect(await list(env)).toHaveLength(1);
  });

  it('concurrent creates of one name (replicas\' init steps at once) make one token; the others are refused as a second create is, exit 5', async ({ expect }) => {
    const { db, env } = await database();
    // The tables exist before the gate below holds one of them.
    await token(env, '--org', 'acme');
    // On PostgreSQL the creates meet where they race: each has checked the name and waits to insert; the gate opens
    // once two wait there. SQLite's write transaction takes its lock before the check: there is no race to set up.
    const gate = ENGINE === 'postgres' ? await holdTokenInserts((db.storage as { url: string }).url) : undefined;
    const creating = Array.from({ length: 3 }, () => runKb(['serve', 'token', 'create', '--org', 'acme', '--name', 'bootstrap'], { env }));
    if (gate) await gate.openOnceWaiting(expect, 2);
    const results = await Promise.all(creating);

    expect(results.map((result) => result.code).sort()).toEqual([0, 5, 5]);
    const made = results.find((result) => result.code === 0)?.stdout.trim().split('\n').at(-1) as string;
    for (const refused of results.filter((result) => result.code !== 0)) {
      expect(refused.stderr).toContain('A token named bootstrap exists already');
      expect(refused.stdout).toBe('');
      expect(refused.stderr).not.toContain(made);
    }
    expect((await list(env)).filter((info) => info.name === 'bootstrap')).toHaveLength(1);
  });

  it('docs/operating.md\'s init step, run by three replicas at once, succeeds in each; then no replica prints a first token', async ({ expect }) => {
    const { env } = await database();
    // The Kubernetes manifests' init commands, as written: SQLite's first, then PostgreSQL's.
    const steps = [...readFileSync(join(ROOT, 'docs/operating.md'), 'utf8').matchAll(/command: \[sh, -c, '(.*)'\]/g)].map((match) => match[1] as string);
    expect(steps).toHaveLength(2);
    const step = steps[ENGINE === 'postgres' ? 1 : 0] as string;
    // `kb` on the PATH, as in the image.
    const bin = tempDir('kb-bin-');
    writeFileSync(join(bin, 'kb'), `#!/bin/sh\nexec '${process.execPath}' '${KB_BIN}' "$@"\n`);
    chmodSync(join(bin, 'kb'), 0o755);
    const pods = ['kb-5d8f7c9b6-x2x7k', 'kb-5d8f7c9b6-9qrtp', 'kb-5d8f7c9b6-mz4hd'];
    const results = await Promise.all(
      pods.map((pod) => runProcess('sh', ['-c', step], { env: { ...env, HOSTNAME: pod, PATH: `${bin}:${env.PATH ?? ''}` }, timeoutMs: 60_000 })),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    for (const result of results) expect(result.stdout).toBe('');
    expect((await list(env)).length).toBeGreaterThanOrEqual(1);

    const server = await serve(env);
    expect(server.stdout()).toBe('');
  });

  it('tokens made before the migration keep working: active, full scope, no expiry', async ({ expect }) => {
    const { db, env } = await database();
    const mine = (ENGINE === 'postgres' ? POSTGRES_MIGRATIONS : MIGRATIONS).findIndex((migration) => migration.includes('ADD COLUMN expires_at'));
    expect(mine).toBeGreaterThan(0);
    const old = `kbt_${randomBytes(32).toString('base64url')}`;
    await previousSchema(db, mine, old);

    const server = await serve(env);
    expect(await call(server.url, old, 'GET', '/auth')).toEqual({ status: 200, body: { success: true, data: 'acme' } });
    expect((await call(server.url, old, 'POST', '/ns_create', { key: 'docs' })).status).toBe(200);
    const [listed] = await list(env);
    expect(listed).toMatchObject({ id: 'tok_0123456789ab', name: null, org: 'acme', scope: 'full', expiresAt: null, revokedAt: null, status: 'active' });
  });
});

/**
 * Holds inserts into PostgreSQL's tokens table (a SHARE lock, which reads pass) until `openOnceWaiting` sees `count`
 * of them wait for it, then lets them all go at once.
 */
async function holdTokenInserts(url: string): Promise<{ openOnceWaiting(expect: ExpectStatic, count: number): Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE tokens IN SHARE MODE');
  return {
    async openOnceWaiting(expect, count) {
      try {
        await expect
          .poll(async () => {
            const { rows } = await holder.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'tokens'::regclass AND mode = 'RowExclusiveLock' AND NOT granted",
            );
            return rows[0]?.n;
          })
          .toBeGreaterThanOrEqual(count);
      } finally {
        await holder.query('COMMIT');
        await holder.end();
      }
    },
  };
}

/** A database as the kb before the token migration made it (its first `version` migrations), holding one token. */
async function previousSchema(db: TestDatabase, version: number, token: string): Promise<void> {
  const hash = createHash('sha256').update(token).digest();
  if (db.engine === 'postgres') {
    const url = (db.storage as { url: string }).url;
    await pgQuery(url, CREATE_SCHEMA_TABLE);
    for (const migration of POSTGRES_MIGRATIONS.slice(0, version)) await pgQuery(url, migration);
    await pgQuery(url, `INSERT INTO ${SCHEMA_TABLE} (application, version) VALUES ('kb', $1)`, [version]);
    await pgQuery(url, "INSERT INTO orgs (name, created_at) VALUES ('acme', now())");
    await pgQuery(url, "INSERT INTO tokens (id, org_id, hash, created_at) SELECT 'tok_0123456789ab', id, $1, now() FROM orgs", [hash]);
    return;
  }
  const file = new Database(join((db.storage as { dataDir: string }).dataDir, 'kb.db'));
  try {
    file.pragma('journal_mode = WAL');
    for (const migration of MIGRATIONS.slice(0, version)) file.exec(migration);
    file.exec(COMMIT_BUMP);
    // Closed by its last connection, as kb closes a database: kb.db holds everything.
    file.exec(MARK_CLEAN);
    file.pragma(`application_id = ${APPLICATION_ID}`);
    file.pragma(`user_version = ${version}`);
    file.prepare("INSERT INTO orgs (name, created_at) VALUES ('acme', ?)").run(new Date().toISOString());
    file.prepare("INSERT INTO tokens (id, org_id, hash, created_at) VALUES ('tok_0123456789ab', 1, ?, ?)").run(hash, new Date().toISOString());
  } finally {
    file.close();
  }
}
