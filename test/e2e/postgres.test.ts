import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, ROOT, runKb, runProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/temp.js';
import { MIGRATION_LOCK } from '../../src/store/postgres-sql.js';
import pg from 'pg';

const UNREACHABLE = 'postgres://u:secret@127.0.0.1:1/x';
const SHOWN = 'postgres://u:***@127.0.0.1:1/x';

const databases = droppedAfterAll();
async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase('postgres');
  databases.push(database);
  return database;
}
const urlOf = (database: TestDatabase) => (database.storage as { url: string }).url;

async function timedKb(args: string[], env: NodeJS.ProcessEnv) {
  const started = performance.now();
  const result = await runKb(args, { env });
  return { ...result, ms: performance.now() - started };
}

describe('kb serve and kb serve token with a database that does not answer', () => {
  it('kb serve waits --database-wait, then exits 6 naming the URL with its password masked, and never shows the password', async () => {
    const result = await timedKb(['serve', '--port', '0', '--database', UNREACHABLE, '--database-wait', '1s'], isolatedEnv());
    expect(result.code, result.stderr).toBe(6);
    expect(result.ms).toBeGreaterThanOrEqual(1000);
    expect(result.ms).toBeLessThan(15_000);
    expect(result.stderr).toContain(`"msg":"cannot reach the database at ${SHOWN} yet (connect ECONNREFUSED 127.0.0.1:1)`);
    expect(result.stderr).toContain(`Error: cannot reach the database at ${SHOWN} (waited 1 s): connect ECONNREFUSED 127.0.0.1:1`);
    expect(result.stderr).toMatch(/--database-wait/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout + result.stderr).not.toContain('secret');
    // The password was in argv, where any user can read it: said once, before anything else.
    expect(JSON.parse(result.stderr.split('\n')[0] as string)).toEqual({
      level: 'warn',
      time: expect.any(Number),
      msg: 'the --database URL holds a password, which other users of this machine can read in the command line (ps). Set KB_DATABASE_URL instead.',
    });
  });

  it('a SIGHUP while it waits for the database (a `systemctl reload` during the start) is logged and ignored: it goes on waiting', async () => {
    const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', '0', '--log-level', 'info', '--database-wait', '3s'], { env: isolatedEnv({ KB_DATABASE_URL: UNREACHABLE }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    await expect.poll(() => stderr).toContain('cannot reach the database');
    child.kill('SIGHUP');
    await expect.poll(() => stderr).toContain('"msg":"SIGHUP while starting: nothing to reload yet');
    expect(await exited, stderr).toEqual({ code: 6, signal: null });
    expect(stderr).toContain(`Error: cannot reach the database at ${SHOWN} (waited 3 s)`);
  });

  it('does the same with the URL in KB_DATABASE_URL, with traces on (KB_DEBUG=1), for serve and for every token command', async () => {
    const env = isolatedEnv({ KB_DATABASE_URL: UNREACHABLE, KB_DEBUG: '1' });
    const runs = await Promise.all([
      timedKb(['serve', '--port', '0', '--database-wait', '500ms'], env),
      timedKb(['serve', 'token', 'create', '--org', 'acme', '--database-wait', '500ms'], env),
      timedKb(['serve', 'token', 'list', '--database-wait', '500ms', '--json'], env),
      timedKb(['serve', 'token', 'revoke', 'tok_000000000000', '--database-wait', '500ms'], env),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(6);
      expect(run.stderr).toContain(SHOWN);
      expect(run.stdout + run.stderr).not.toContain('secret');
      // From the environment, the password is out of argv: nothing to warn of.
      expect(run.stderr).not.toMatch(/Warning|holds a password/);
    }
  });

  it('waits 10 s by default, and says so on stderr at once', async () => {
    const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', '0', '--database', UNREACHABLE], { env: isolatedEnv() });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await expect.poll(() => output, { timeout: 20_000 }).toContain(`cannot reach the database at ${SHOWN} yet`);
      expect(output).toContain('trying again for up to 10 s');
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(output).not.toContain('secret');
  });
});

describe('kb serve --admin-port while it starts', () => {
  it('answers /live 200 and /ready 503 while the start waits on a database lock, before the API listens; /ready 200 once it does', async () => {
    const url = urlOf(await freshDatabase());
    // Another process holding the lock a start migrates under: kb serve's start waits for it.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const [port, adminPort] = [await freePort(), await freePort()];
    const admin = `http://127.0.0.1:${adminPort}`;
    const serving = startServe(['--database', url, '--port', String(port), '--admin-port', String(adminPort)], isolatedEnv());
    try {
      try {
        await expect.poll(() => fetch(`${admin}/live`).then((reply) => reply.status, () => 0), { timeout: 15_000 }).toBe(200);
        const ready = await fetch(`${admin}/ready`);
        expect(ready.status).toBe(503);
        expect(await ready.text()).toMatch(/^not ready: starting/);
        // The start is still held: the API does not listen yet.
        await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow();
      } finally {
        await holder.query('COMMIT');
        await holder.end();
      }
      await serving;
      await expect.poll(() => fetch(`${admin}/ready`).then((reply) => reply.status)).toBe(200);
    } finally {
      await serving.then(
        (server) => {
          server.child.kill('SIGKILL');
          return server.exited;
        },
        () => undefined,
      );
    }
  });
});

describe('kb serve with a database it must not use', () => {
  it('refuses a database of another application: exit 1, a clear message, nothing created in it', async () => {
    const database = await freshDatabase();
    await database.sql('CREATE TABLE invoices (id integer PRIMARY KEY)');
    const result = await runKb(['serve', '--port', '0'], { env: isolatedEnv(database.env) });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/is not a kb database/);
    expect(result.stderr).toContain('postgres://kb:***@127.0.0.1:');
    expect(result.stdout + result.stderr).not.toContain(new URL(urlOf(database)).password);
    expect(await database.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ tablename: 'invoices' }]);
  });

  it('refuses a database written by a newer kb with exit 1, and a wrong password with exit 1, neither shown', async () => {
    const database = await freshDatabase();
    const env = isolatedEnv(database.env);
    expect((await runKb(['serve', 'token', 'create', '--org', 'acme'], { env })).code).toBe(0);
    await database.sql('UPDATE kb_schema SET version = version + 1');
    const newer = await runKb(['serve', '--port', '0'], { env });
    expect(newer.code, newer.stderr).toBe(1);
    expect(newer.stderr).toMatch(/newer than this kb supports/);

    const wrong = new URL(urlOf(database));
    wrong.password = 'hunter2-wrong';
    const refused = await timedKb(['serve', '--port', '0', '--database', wrong.href], isolatedEnv());
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.ms).toBeLessThan(8000);
    expect(refused.stderr).toMatch(/password authentication failed/);
    expect(refused.stdout + refused.stderr).not.toContain('hunter2-wrong');
  });

  it('refuses a malformed --database, and --database with --data-dir, as usage errors that do not echo the URL', async () => {
    const malformed = await runKb(['serve', '--database', 'mysql://u:secret@db/kb'], { env: isolatedEnv() });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('postgres://USER:PASSWORD@HOST:PORT/DATABASE');
    const both = await runKb(['serve', 'token', 'list', '--database', 'postgres://u:secret@db/kb', '--data-dir', tempDir()], { env: isolatedEnv() });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--data-dir and --database/);
    for (const run of [malformed, both]) expect(run.stdout + run.stderr).not.toContain('secret');
  });
});

/** The ```sh block after the marker line in docs/scaling.md, and the first plain ``` block after that (its output). */
function docSample(marker: string): { script: string; output: string } {
  const lines = readFileSync(join(ROOT, 'docs/scaling.md'), 'utf8').split('\n');
  const at = lines.findIndex((line) => line.trim() === marker);
  expect(at, `docs/scaling.md has no line ${marker}`).toBeGreaterThan(-1);
  const block = (from: number, fence: string) => {
    const open = lines.findIndex((line, i) => i > from && line.trim() === fence);
    const close = lines.findIndex((line, i) => i > open && line.trim() === '```');
    expect(open).toBeGreaterThan(-1);
    expect(close).toBeGreaterThan(open);
    return { text: `${lines.slice(open + 1, close).join('\n')}\n`, end: close };
  };
  const script = block(at, '```sh');
  return { script: script.text, output: block(script.end, '```').text };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("docs/scaling.md's session with two replicas", () => {
  it('is docs/replicas.sh verbatim, and runs against a real PostgreSQL, printing what docs/scaling.md shows', async () => {
    const file = readFileSync(join(ROOT, 'docs/replicas.sh'), 'utf8');
    const sample = docSample('<!-- replicas-example: docs/replicas.sh -->');
    expect(sample.script).toBe(file);

    const database = await freshDatabase();
    const binDir = join(tempDir('kb-replicas-'), 'bin');
    mkdirSync(binDir);
    writeFileSync(join(binDir, 'kb'), `#!/bin/sh\nexec '${process.execPath}' '${KB_BIN}' "$@"\n`);
    chmodSync(join(binDir, 'kb'), 0o755);
    const env = isolatedEnv({
      ...database.env,
      PORT_A: String(await freePort()),
      PORT_B: String(await freePort()),
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
    });
    const run = await runProcess('sh', [join(ROOT, 'docs/replicas.sh')], { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(sample.output);
    expect(run.stderr.match(/"msg":"listening on /g)).toHaveLength(2);
    expect(run.stderr).toContain('(database: postgres://kb:***@127.0.0.1:');
    expect(run.stdout + run.stderr).not.toContain(new URL(urlOf(database)).password);
    expect(await database.sql('SELECT key FROM namespaces')).toEqual([{ key: 'docs' }]);
  }, 90_000);
});

describe('kb serve --pool-size', () => {
  it('caps the connections of a replica, as its alias --database-pool does, and kb serve --help documents the default', async () => {
    const help = await runKb(['serve', '--help'], { env: isolatedEnv() });
    expect(help.stdout).toMatch(/--pool-size=<value>\s+\[default: 8\]/);
    const database = await freshDatabase();
    const env = isolatedEnv();
    const created = await runKb(['serve', 'token', 'create', '--org', 'pool', '--database', urlOf(database)], { env });
    const token = created.stdout.trim();
    const name = new URL(urlOf(database)).pathname.slice(1);
    for (const flag of ['--pool-size', '--database-pool']) {
      const server = await startServe(['--database', urlOf(database), flag, '2'], env);
      try {
        const replies = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            fetch(`${server.url}/v1/base_list?namespace=pool-${i}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status),
          ),
        );
        // Answered from the database (404: no such namespace), or refused at once past the connections' queue.
        expect(replies.filter((status) => status !== 404 && status !== 503)).toEqual([]);
        expect(replies.filter((status) => status === 404).length).toBeGreaterThanOrEqual(16);
        // The pool keeps what it opened (idle) for a while: what it holds now is the most it had.
        const [row] = (await database.sql(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ? AND application_name = 'kb serve'",
          [name],
        )) as Array<{ n: number }>;
        expect(row?.n, flag).toBeGreaterThan(0);
        expect(row?.n, flag).toBeLessThanOrEqual(2);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    }
  });
});
