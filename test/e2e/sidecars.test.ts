import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { generateToken, hashToken as hashOf } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { isolatedEnv, KB_BIN, runKb, type RunResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * SQLite's sidecar files belong to the database that wrote them (docs/contract.md, Files and start-up, and Backup). For every
 * combination of kb.db, kb.db-wal and kb.db-shm, each absent, the database's own or another's, in a data dir and in a
 * backup's DEST, each of `kb serve`, `kb serve backup` and `kb serve token create` (the built bin/run.js) either
 * refuses by name, leaving every file as it was, or serves exactly the data those files acknowledged: never older
 * data, never an old token.
 */

const TEST_TIMEOUT_MS = 300_000;

/** kb processes of this file alive at once: each start costs a few hundred ms of CPU on a shared machine. */
let slots = 4;
const waiting: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (slots > 0) slots--;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else slots++;
  }
}

const kb = (args: string[], input?: string): Promise<RunResult> =>
  slot(() => runKb(args, { env: isolatedEnv(), ...(input === undefined ? {} : { input }), timeoutMs: 60_000 }));

/** The template files each case copies, made once. */
interface Templates {
  /** Database A's kb.db as a crash left it: namespaces a0, a1, a1b checkpointed into it, a2 only in ownWal. */
  ownDb: string;
  ownWal: string;
  ownShm: string;
  /** A's log from an older state (a1 only), since checkpointed and followed by a1b: older than ownDb. */
  staleWal: string;
  /** A backup of A (every namespace, a lineage of its own), as a restore puts it beside A's leftover sidecars. */
  backupDb: string;
  /** Database X, another kb database: its log holds its token and namespace x1. */
  otherDb: string;
  otherWal: string;
  otherShm: string;
  tokenA: string;
  tokenX: string;
}

let t: Templates;

const A_FILE = ['a0', 'a1', 'a1b'];
const A_ALL = ['a0', 'a1', 'a1b', 'a2'];

/** Copies a database's files as they are at this moment, while its store is open (as `kill -9` would leave them). */
function snapshot(dir: string, into: string, files: string[]): void {
  for (const file of files) copyFileSync(join(dir, file), join(into, file));
}

async function makeTemplates(): Promise<Templates> {
  const keep = tempDir('kb-sidecar-templates-');
  const dirA = tempDir('kb-sidecar-a-');
  const a = SqliteStore.open(dirA);
  const tokenA = generateToken();
  await a.createToken('acme', tokenA.id, tokenA.hash);
  const org = (await a.authenticate(tokenA.hash))?.orgId as number;
  const checkpoint = () => {
    const db = new Database(join(dirA, 'kb.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  };
  await a.nsCreate(org, { key: 'a0', description: null });
  checkpoint();
  await a.nsCreate(org, { key: 'a1', description: null });
  copyFileSync(join(dirA, 'kb.db-wal'), join(keep, 'stale-wal'));
  await a.nsCreate(org, { key: 'a1b', description: null });
  checkpoint();
  await a.nsCreate(org, { key: 'a2', description: null });
  const own = join(keep, 'own');
  mkdirSync(own);
  snapshot(dirA, own, ['kb.db', 'kb.db-wal', 'kb.db-shm']);
  const backup = await a.backup!(join(keep, 'backup'));
  await a.close();

  const dirX = tempDir('kb-sidecar-x-');
  const x = SqliteStore.open(dirX);
  const tokenX = generateToken();
  await x.createToken('acme', tokenX.id, tokenX.hash);
  await x.nsCreate((await x.authenticate(tokenX.hash))?.orgId as number, { key: 'x1', description: null });
  const other = join(keep, 'other');
  mkdirSync(other);
  snapshot(dirX, other, ['kb.db', 'kb.db-wal', 'kb.db-shm']);
  await x.close();

  return {
    ownDb: join(own, 'kb.db'),
    ownWal: join(own, 'kb.db-wal'),
    ownShm: join(own, 'kb.db-shm'),
    staleWal: join(keep, 'stale-wal'),
    backupDb: backup.path,
    otherDb: join(other, 'kb.db'),
    otherWal: join(other, 'kb.db-wal'),
    otherShm: join(other, 'kb.db-shm'),
    tokenA: tokenA.token,
    tokenX: tokenX.token,
  };
}

beforeAll(async () => {
  t = await makeTemplates();
}, 60_000);

type DbState = 'absent' | 'own' | 'restored backup';
type WalState = 'absent' | 'own' | 'another database\'s' | 'stale';
type ShmState = 'absent' | 'own' | 'another database\'s';

interface DataDirCase {
  db: DbState;
  wal: WalState;
  shm: ShmState;
}

const DB_STATES: DbState[] = ['absent', 'own', 'restored backup'];
const WAL_STATES: WalState[] = ['absent', 'own', 'another database\'s', 'stale'];
const SHM_STATES: ShmState[] = ['absent', 'own', 'another database\'s'];

const CASES: DataDirCase[] = DB_STATES.flatMap((db) => WAL_STATES.flatMap((wal) => SHM_STATES.map((shm) => ({ db, wal, shm }))));
const describeCase = (c: DataDirCase) => `kb.db ${c.db}, -wal ${c.wal}, -shm ${c.shm}`;

function makeDataDir(c: DataDirCase): string {
  const dir = tempDir('kb-sidecar-case-');
  if (c.db !== 'absent') copyFileSync(c.db === 'own' ? t.ownDb : t.backupDb, join(dir, 'kb.db'));
  const wal = { absent: undefined, own: t.ownWal, 'another database\'s': t.otherWal, stale: t.staleWal }[c.wal];
  if (wal) copyFileSync(wal, join(dir, 'kb.db-wal'));
  const shm = { absent: undefined, own: t.ownShm, 'another database\'s': t.otherShm }[c.shm];
  if (shm) copyFileSync(shm, join(dir, 'kb.db-shm'));
  return dir;
}

/** What the files may give: a refusal naming these files, a new empty database, or exactly these namespaces of A. */
type Expected = { refuse: string[] } | { fresh: true } | { namespaces: string[] };

function expected(c: DataDirCase, dir: string, writes = true): Expected {
  const sidecars = [c.wal !== 'absent' && 'kb.db-wal', c.shm !== 'absent' && 'kb.db-shm'].filter((name): name is string => name !== false);
  if (c.db === 'absent') return sidecars.length > 0 ? { refuse: sidecars.map((name) => join(dir, name)) } : { fresh: true };
  // A restored backup has a lineage of its own: no -wal of A replays onto it. A's own kb.db takes only its own log.
  if (c.wal !== 'absent' && !(c.db === 'own' && c.wal === 'own')) return { refuse: [join(dir, 'kb.db-wal')] };
  // A's own kb.db was left by a crash, its last writes in its log: alone, it is refused by what opens it to write (a
  // backup only reads, and copies what it holds: the refusal's own way to serve it knowingly).
  if (c.db === 'own' && c.wal === 'absent' && writes) return { refuse: [join(dir, 'kb.db')] };
  if (c.db === 'own') return { namespaces: c.wal === 'own' ? A_ALL : A_FILE };
  return { namespaces: A_ALL };
}

/** Every file of a directory and its bytes, to show that a refusal changed nothing. */
function contents(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name)).toString('base64')]));
}

function describeRun(result: RunResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

function expectRefusal(expect: ExpectStatic, result: RunResult, files: string[], dir: string, before: Record<string, string>): void {
  expect(result.code, describeRun(result)).toBe(1);
  for (const file of files) expect(result.stderr, describeRun(result)).toContain(file);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(contents(dir)).toEqual(before);
}

/** What a database file holds, read as SQLite reads it: its namespaces, and which of the old tokens it knows. */
function holdings(file: string): { namespaces: string[]; tokens: number; tokenA: boolean; tokenX: boolean } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const namespaces = db.prepare<[], { key: string }>('SELECT key FROM namespaces ORDER BY key').all().map((row) => row.key);
    const has = (token: string) => db.prepare('SELECT 1 FROM tokens WHERE hash = ?').get(hashOf(token)) !== undefined;
    const tokens = (db.prepare('SELECT count(*) AS n FROM tokens').get() as { n: number }).n;
    return { namespaces, tokens, tokenA: has(t.tokenA), tokenX: has(t.tokenX) };
  } finally {
    db.close();
  }
}

/** Starts `kb serve` on a data dir: resolves with its URL once it listens, or with how it ended when it did not. */
function serve(dir: string): Promise<{ url: string; child: ChildProcessWithoutNullStreams; stdout: () => string } | { ended: RunResult }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', '0', '--log-level', 'warn', '--data-dir', dir], {
      env: isolatedEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let listening = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url && !listening) {
        listening = true;
        clearTimeout(timer);
        resolve({ url, child, stdout: () => stdout });
      }
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!listening) resolve({ ended: { code, signal, stdout, stderr } });
    });
    child.stdin.end();
  });
}

async function namespacesAs(url: string, token: string): Promise<{ status: number; keys?: string[] }> {
  const response = await fetch(`${url}/v1/ns_list`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) return { status: response.status };
  const body = (await response.json()) as { data: Array<{ key: string }> };
  return { status: 200, keys: body.data.map((ns) => ns.key) };
}

const TOKEN = /kbt_[A-Za-z0-9_-]{43}/;

describe.concurrent('a data dir with kb.db, -wal and -shm each absent, its own or another\'s', { timeout: TEST_TIMEOUT_MS }, () => {
  it.for(CASES.map((c): [string, DataDirCase] => [describeCase(c), c]))('kb serve, %s: refuses by name or serves exactly what was acknowledged', async ([, c], { expect }) => {
    const dir = makeDataDir(c);
    const want = expected(c, dir);
    const before = contents(dir);
    const started = await slot(() => serve(dir).then(async (outcome) => {
      if ('ended' in outcome) return outcome;
      try {
        const asA = await namespacesAs(outcome.url, t.tokenA);
        const asX = await namespacesAs(outcome.url, t.tokenX);
        const first = TOKEN.exec(outcome.stdout())?.[0];
        const asFirst = first === undefined ? undefined : await namespacesAs(outcome.url, first);
        return { asA, asX, asFirst };
      } finally {
        outcome.child.kill('SIGTERM');
        await new Promise((resolve) => outcome.child.on('close', resolve));
      }
    }));
    if ('refuse' in want) {
      expect('ended' in started, JSON.stringify(started)).toBe(true);
      expectRefusal(expect, (started as { ended: RunResult }).ended, want.refuse, dir, before);
      return;
    }
    expect('ended' in started ? describeRun(started.ended) : 'listening').toBe('listening');
    const seen = started as { asA: { status: number; keys?: string[] }; asX: { status: number }; asFirst?: { status: number; keys?: string[] } };
    expect(seen.asX.status).toBe(401);
    if ('fresh' in want) {
      expect(seen.asA.status).toBe(401);
      expect(seen.asFirst).toEqual({ status: 200, keys: [] });
    } else {
      expect(seen.asA).toEqual({ status: 200, keys: want.namespaces });
      expect(seen.asFirst).toBeUndefined();
    }
  });

  it.for(CASES.map((c): [string, DataDirCase] => [describeCase(c), c]))('kb serve token create, %s: refuses by name or adds a token to exactly what was acknowledged', async ([, c], { expect }) => {
    const dir = makeDataDir(c);
    const want = expected(c, dir);
    const before = contents(dir);
    const result = await kb(['serve', 'token', 'create', '--org', 'acme', '--data-dir', dir, '--json']);
    if ('refuse' in want) {
      expectRefusal(expect, result, want.refuse, dir, before);
      return;
    }
    expect(result.code, describeRun(result)).toBe(0);
    const now = holdings(join(dir, 'kb.db'));
    expect(now.tokenX).toBe(false);
    if ('fresh' in want) expect(now).toEqual({ namespaces: [], tokens: 1, tokenA: false, tokenX: false });
    else expect(now).toEqual({ namespaces: want.namespaces, tokens: 2, tokenA: true, tokenX: false });
  });

  it.for(CASES.map((c): [string, DataDirCase] => [describeCase(c), c]))('kb serve backup, %s: refuses by name, or copies exactly what was acknowledged and only reads', async ([, c], { expect }) => {
    const dir = makeDataDir(c);
    const want = expected(c, dir, false);
    const before = contents(dir);
    const dest = join(tempDir('kb-sidecar-dest-'), 'copy');
    const result = await kb(['serve', 'backup', dest, '--data-dir', dir]);
    if ('fresh' in want) {
      // No database: an error that creates nothing, neither in the data dir nor DEST.
      expect(result.code, describeRun(result)).toBe(1);
      expect(result.stderr).toContain(join(dir, 'kb.db'));
      expect(contents(dir)).toEqual(before);
      expect(existsSync(dest)).toBe(false);
      return;
    }
    if ('refuse' in want) {
      expectRefusal(expect, result, want.refuse, dir, before);
      expect(existsSync(dest)).toBe(false);
      return;
    }
    expect(result.code, describeRun(result)).toBe(0);
    expect(holdings(join(dest, 'kb.db'))).toEqual({ namespaces: want.namespaces, tokens: 1, tokenA: true, tokenX: false });
    // The source is only read: kb.db and its log as they were. A data dir with no sidecar keeps none; beside a -wal
    // or -shm left by a crash, a reader adds at most SQLite's index (-shm) and an empty -wal.
    const after = contents(dir);
    for (const name of ['kb.db', 'kb.db-wal']) if (before[name] !== undefined) expect(after[name], name).toBe(before[name]);
    if (c.wal === 'absent' && c.shm === 'absent') expect(Object.keys(after)).toEqual(['kb.db']);
    else if (after['kb.db-wal'] !== undefined && before['kb.db-wal'] === undefined) expect(statSync(join(dir, 'kb.db-wal')).size).toBe(0);
  });
});

type DestState = 'absent' | 'a kb database\'s' | 'another database\'s';
interface DestCase {
  db: DestState;
  wal: DestState;
  shm: DestState;
}
const DEST_STATES: DestState[] = ['absent', 'a kb database\'s', 'another database\'s'];
const DEST_CASES: DestCase[] = DEST_STATES.flatMap((db) => DEST_STATES.flatMap((wal) => DEST_STATES.map((shm) => ({ db, wal, shm }))));

describe.concurrent('a backup DEST with kb.db, -wal and -shm each absent, a kb database\'s or another\'s', { timeout: TEST_TIMEOUT_MS }, () => {
  it.for(DEST_CASES.map((c): [string, DestCase] => [`kb.db ${c.db}, -wal ${c.wal}, -shm ${c.shm}`, c]))('kb serve backup into DEST with %s: refuses naming every kb.db* file, or makes a copy that serves exactly the source', async ([, c], { expect }) => {
    const source = makeDataDir({ db: 'own', wal: 'own', shm: 'own' });
    const dest = tempDir('kb-sidecar-dest-');
    const pick = (state: DestState, own: string, other: string) => (state === 'absent' ? undefined : state === 'a kb database\'s' ? own : other);
    const files: Array<[string, string | undefined]> = [
      ['kb.db', pick(c.db, t.backupDb, t.otherDb)],
      ['kb.db-wal', pick(c.wal, t.ownWal, t.otherWal)],
      ['kb.db-shm', pick(c.shm, t.ownShm, t.otherShm)],
    ];
    for (const [name, from] of files) if (from) copyFileSync(from, join(dest, name));
    const before = contents(dest);
    const present = files.filter(([, from]) => from !== undefined).map(([name]) => join(dest, name));
    const result = await kb(['serve', 'backup', dest, '--data-dir', source]);
    if (present.length > 0) {
      expectRefusal(expect, result, present, dest, before);
      return;
    }
    expect(result.code, describeRun(result)).toBe(0);
    expect(holdings(join(dest, 'kb.db'))).toEqual({ namespaces: A_ALL, tokens: 1, tokenA: true, tokenX: false });
  });
});

describe('the other commands on a data dir', { timeout: TEST_TIMEOUT_MS }, () => {
  it('kb serve token list and revoke refuse a -wal whose kb.db is gone, naming it and the steps that work', async ({ expect }) => {
    const dir = makeDataDir({ db: 'absent', wal: 'own', shm: 'absent' });
    const before = contents(dir);
    for (const args of [['serve', 'token', 'list'], ['serve', 'token', 'revoke', 'tok_0123456789ab']]) {
      const result = await kb([...args, '--data-dir', dir]);
      expectRefusal(expect, result, [join(dir, 'kb.db-wal')], dir, before);
      expect(result.stderr).toContain(`mkdir ${dir}.old && mv ${dir}/kb.db* ${dir}.old/`);
    }
  });
});

describe('kb serve backup: the source is only read, DEST is named in words', { timeout: TEST_TIMEOUT_MS }, () => {
  /** Runs kb as a user who may read the data dir but not write it: "nobody" when the tests run as root. */
  function asReader(args: string[]): Promise<RunResult> {
    const asRoot = process.getuid?.() === 0;
    return slot(
      () =>
        new Promise((resolve) => {
          const child = spawn(process.execPath, [KB_BIN, ...args], {
            env: { ...isolatedEnv(), HOME: '/tmp', KB_CONFIG_DIR: '/tmp/kb-sidecar-nobody-config' },
            ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
        }),
    );
  }

  it.for([
    ['at rest', { db: 'own', wal: 'absent', shm: 'absent' }, A_FILE],
    ['left by a crash, with its -wal and -shm', { db: 'own', wal: 'own', shm: 'own' }, A_ALL],
  ] as Array<[string, DataDirCase, string[]]>)('backs up a read-only data dir holding a database %s, changing nothing in it', async ([, c, namespaces], { expect }) => {
    const root = mkdtempSync(join(tmpdir(), 'kb-sidecar-ro-'));
    try {
      const dir = join(root, 'data');
      mkdirSync(dir);
      for (const name of readdirSync(makeDataDirIn(c, dir))) chmodSync(join(dir, name), 0o444);
      chmodSync(dir, 0o555);
      const out = join(root, 'out');
      mkdirSync(out);
      chmodSync(root, 0o755);
      if (process.getuid?.() === 0) chownSync(out, 65534, 65534);
      const before = contents(dir);
      const dest = join(out, 'copy');
      const result = await asReader(['serve', 'backup', dest, '--data-dir', dir]);
      expect(result.code, describeRun(result)).toBe(0);
      expect(holdings(join(dest, 'kb.db'))).toEqual({ namespaces, tokens: 1, tokenA: true, tokenX: false });
      expect(contents(dir)).toEqual(before);
    } finally {
      chmodSync(join(root, 'data'), 0o700);
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('--data-dir beats KB_DATABASE_URL, for backup and the token commands', async ({ expect }) => {
    const dir = makeDataDir({ db: 'own', wal: 'own', shm: 'absent' });
    const env = isolatedEnv({ KB_DATABASE_URL: 'postgres://kb:secret@127.0.0.1:1/kb' });
    const dest = join(tempDir('kb-sidecar-dest-'), 'copy');
    const backup = await slot(() => runKb(['serve', 'backup', dest, '--data-dir', dir], { env }));
    expect(backup.code, describeRun(backup)).toBe(0);
    expect(holdings(join(dest, 'kb.db')).namespaces).toEqual(A_ALL);
    const list = await slot(() => runKb(['serve', 'token', 'list', '--json', '--data-dir', dir], { env }));
    expect(list.code, describeRun(list)).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ org: string }>).map((token) => token.org)).toEqual(['acme']);
  });

  it('says what is wrong with DEST in words, and quotes the path of the command that serves the copy', async ({ expect }) => {
    const dir = makeDataDir({ db: 'own', wal: 'absent', shm: 'absent' });
    const parent = tempDir('kb-sidecar-dest-');
    const file = join(parent, 'a file');
    writeFileSync(file, 'precious');
    for (const [dest, words] of [[file, 'it is not a directory'], [join(file, 'copy'), 'a part of the path is not a directory']]) {
      const result = await kb(['serve', 'backup', dest as string, '--data-dir', dir]);
      expect(result.code, describeRun(result)).toBe(1);
      expect(result.stderr).toContain(`cannot back up to ${dest}: ${words}`);
      expect(result.stderr).not.toMatch(/E[A-Z]+: |, (stat|mkdir) '/);
    }
    expect(readFileSync(file, 'utf8')).toBe('precious');
    const spaced = join(parent, "it's a copy");
    const result = await kb(['serve', 'backup', spaced, '--data-dir', dir]);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain(`Serve it with \`kb serve --data-dir '${parent}/it'\\''s a copy'\`.`);
  });
});

/** makeDataDir, into a directory of the test's choosing. */
function makeDataDirIn(c: DataDirCase, dir: string): string {
  const made = makeDataDir(c);
  for (const name of readdirSync(made)) copyFileSync(join(made, name), join(dir, name));
  return dir;
}
