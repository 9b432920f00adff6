import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Base, Namespace } from '../../src/api/schemas.js';
import { generateToken } from '../../src/server/tokens.js';
import { APPLICATION_ID, COMMIT_BUMP, MIGRATIONS, SCHEMA_VERSION } from '../../src/store/migrations.js';
import { DATABASE_FILE, SqliteStore } from '../../src/store/sqlite.js';
import { StoreOpenError } from '../../src/store/store.js';
import { tempDir } from '../helpers/server.js';
import { orgIdOf } from '../helpers/store.js';

const dirs: string[] = [];
function newDir(): string {
  const dir = tempDir('kb-store-');
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) {
    try {
      chmodSync(dir, 0o700);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

const orgId = orgIdOf;

const ns = (key: string, description: string | null = null): Namespace => ({ key, description });
const base = (namespace: string, key: string, description: string | null = null): Base => ({ namespace, key, description });

describe('SqliteStore: group commit and files on disk', () => {
  let dir: string;
  let store: SqliteStore;
  let acme: number;

  beforeEach(async () => {
    dir = newDir();
    store = SqliteStore.open(dir);
    acme = await orgId(store, 'acme');
  });

  afterEach(async () => {
    await store.close();
  });

  async function reopen(): Promise<void> {
    await store.close();
    store = SqliteStore.open(dir);
  }

  it('a data dir deleted under a running store: it puts back the database it holds and goes on, nothing acknowledged lost', async () => {
    await store.nsCreate(acme, ns('before'));
    rmSync(dir, { recursive: true });
    await store.nsCreate(acme, ns('after'));
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(true);
    await reopen();
    expect((await store.nsList(acme)).map((n) => n.key)).toEqual(['after', 'before']);
  });

  it('a database file replaced under a running store: writes fail with 503, its own database is saved, the next start refuses naming it', async () => {
    await store.nsCreate(acme, ns('before'));
    const path = join(dir, DATABASE_FILE);
    // A restore moved into place: a copy of the file, renamed over it.
    writeFileSync(`${path}.restored`, readFileSync(path));
    renameSync(`${path}.restored`, path);
    const refused = await store.nsCreate(acme, ns('after')).then(() => undefined, (error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'unavailable',
      message: 'The database file was removed or replaced while the server ran; nothing was written',
    });
    // Reads still answer, from what this store holds.
    expect((await store.nsList(acme)).map((n) => n.key)).toEqual(['before']);
    const saved = readdirSync(dir).filter((name) => name.startsWith('kb-saved-'));
    expect(saved).toHaveLength(1);
    await store.close();
    const files = readdirSync(dir).sort();
    expect(() => SqliteStore.open(dir)).toThrow(new RegExp(`saved the database it held as ${join(dir, saved[0] as string)}`));
    expect(readdirSync(dir).sort()).toEqual(files);
    const kept = new Database(join(dir, saved[0] as string), { readonly: true });
    expect(kept.prepare('SELECT key FROM namespaces').pluck().all()).toEqual(['before']);
    kept.close();
    store = SqliteStore.open(newDir());
  });

  it('a failing write in a batch does not undo its neighbours', async () => {
    await store.nsCreate(acme, ns('taken'));
    // All issued in one turn of the event loop, so they share one transaction.
    const results = await Promise.allSettled([
      store.nsCreate(acme, ns('first')),
      store.nsCreate(acme, ns('taken')),
      store.baseCreate(acme, base('docs', 'manual')),
      store.nsUpdate(acme, 'missing', { description: 'x' }),
      store.baseCreate(acme, { namespace: 'ghost', key: null } as unknown as Base),
      store.baseCreate(acme, base('docs', 'manual')),
      store.nsCreate(acme, ns('last', 'kept')),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled',
    ]);
    const reasons = results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok'));
    expect(reasons[1]).toBe('conflict');
    expect(reasons[3]).toBe('not_found');
    expect(reasons[5]).toBe('conflict');
    await reopen();
    expect(await store.nsList(acme)).toEqual([
      { key: 'docs', description: null },
      { key: 'first', description: null },
      { key: 'last', description: 'kept' },
      { key: 'taken', description: null },
    ]);
    expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual')]);
  });

  it('undoes a failing write of two statements whole, its changes with it; the batch logs its neighbours\' changes in commit order', async () => {
    await store.nsCreate(acme, ns('docs'));
    await store.baseCreate(acme, base('doomed', 'x'));
    // A second connection makes SQLite refuse a base named poison (also after its namespace was created, for a base of
    // a new namespace) and the delete of the namespace doomed (after its bases were deleted).
    const other = new Database(join(dir, DATABASE_FILE));
    other.exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON bases WHEN NEW.key = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END;
      CREATE TRIGGER refuse_doomed BEFORE DELETE ON namespaces WHEN OLD.key = 'doomed' BEGIN SELECT RAISE(ABORT, 'doomed'); END`);
    other.close();
    const results = await Promise.allSettled([
      store.baseCreate(acme, base('docs', 'a')),
      store.perform({ op: 'nsDelete', orgId: acme, key: 'doomed', cascade: true }),
      store.baseCreate(acme, base('fresh', 'poison')),
      store.baseCreate(acme, base('docs', 'poison')),
      store.baseCreate(acme, base('other', 'b', 'kept')),
      store.nsCreate(acme, ns('docs')),
      store.createToken('new-org', 'tok_0123456789ab', randomBytes(32), { name: 'ci' }),
      store.createToken('newer-org', 'tok_0123456789ac', randomBytes(32), { name: 'ci' }),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? 'ok' : ((r.reason as { code?: string }).code ?? (r.reason as Error).message)))).toEqual([
      'ok', 'SQLITE_CONSTRAINT_TRIGGER', 'SQLITE_CONSTRAINT_TRIGGER', 'SQLITE_CONSTRAINT_TRIGGER', 'ok', 'conflict', 'ok', 'conflict',
    ]);
    await reopen();
    expect((await store.nsList(acme)).map((row) => row.key)).toEqual(['docs', 'doomed', 'other']);
    expect(await store.baseListAll(acme)).toEqual([base('docs', 'a'), base('doomed', 'x'), base('other', 'b', 'kept')]);
    // The token refused for its taken name left no organization behind: its insert ran after the organization's.
    expect((await store.listTokens()).filter((token) => token.name === 'ci').map((token) => token.org)).toEqual(['new-org']);
    const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
    expect(db.prepare("SELECT name FROM orgs WHERE name LIKE 'new%' ORDER BY name").pluck().all()).toEqual(['new-org']);
    db.close();
    const read = await store.changeLog.read(acme, 0, 10);
    expect(read.gone ? [] : read.changes.map(({ seq, type, kind, object }) => [seq, type, kind, object])).toEqual([
      [1, 'created', 'namespace', ns('docs')],
      [2, 'created', 'namespace', ns('doomed')],
      [3, 'created', 'base', base('doomed', 'x')],
      [4, 'created', 'base', base('docs', 'a')],
      [5, 'created', 'namespace', ns('other')],
      [6, 'created', 'base', base('other', 'b', 'kept')],
    ]);
    expect(await store.changeLog.head(acme)).toBe(6);
  });

  it('never writes the raw token to disk, only its hash', async () => {
    const canary = generateToken();
    await store.createToken('canary-org', canary.id, canary.hash);
    await store.nsCreate(acme, ns('docs', 'x'.repeat(100)));
    const onDisk = () => Buffer.concat(readdirSync(dir).map((file) => readFileSync(join(dir, file))));
    const secret = canary.token.slice('kbt_'.length);
    const check = (bytes: Buffer) => {
      // The hash must be there (proves these bytes hold the write), the token in no encoding.
      expect(bytes.includes(canary.hash)).toBe(true);
      expect(bytes.includes(Buffer.from(canary.token, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(secret, 'base64url'))).toBe(false);
      expect(bytes.includes(Buffer.from(canary.token, 'utf16le'))).toBe(false);
    };
    // While open, the write sits in the -wal file; after close it is checkpointed into the database.
    expect(readdirSync(dir)).toContain(`${DATABASE_FILE}-wal`);
    check(onDisk());
    await store.close();
    check(onDisk());
    store = SqliteStore.open(dir);
  });
});

/**
 * A new database taken back to the schema as it was before the migration containing `text`: the migrations before
 * it, none after. Returns its dir and a connection to it, for the test to fill and close.
 */
async function schemaBefore(text: string): Promise<{ dir: string; old: Database.Database }> {
  const dir = newDir();
  await SqliteStore.open(dir).close();
  const before = MIGRATIONS.findIndex((migration) => migration.includes(text));
  const old = new Database(join(dir, DATABASE_FILE));
  const tables = old.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  old.exec('PRAGMA foreign_keys = OFF');
  for (const table of tables) old.exec(`DROP TABLE ${table}`);
  for (const migration of MIGRATIONS.slice(0, before)) old.exec(migration);
  old.pragma(`user_version = ${before}`);
  return { dir, old };
}

describe('SqliteStore.open', () => {
  it('a command beside the server marks kb.db in use before it writes: its log lost after a crash is refused, never forgotten', async () => {
    const dir = newDir();
    await SqliteStore.open(dir).close();
    // kb serve token create: a store that is not the server's, killed after its write (never closed).
    const command = SqliteStore.open(dir);
    await command.createToken('acme', 'tok_0123456789ab', createHash('sha256').update('secret').digest());
    const crashed = newDir();
    writeFileSync(join(crashed, DATABASE_FILE), readFileSync(join(dir, DATABASE_FILE)));
    expect(() => SqliteStore.open(crashed)).toThrow(/was not closed cleanly .* its write-ahead log .*kb\.db-wal is not beside it/);
    await command.close();
  });

  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const sidecars = (dir: string) => readdirSync(dir).filter((file) => file !== DATABASE_FILE);

  /** Opening must throw StoreOpenError matching `message`, and leave the file byte-identical with no -wal/-shm. */
  function expectRefusal(dir: string, message: RegExp, file = join(dir, DATABASE_FILE)): StoreOpenError {
    const before = sha256(file);
    const filesBefore = readdirSync(dir).sort();
    let thrown: unknown;
    try {
      SqliteStore.open(dir).close().catch(() => undefined);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoreOpenError);
    const error = thrown as StoreOpenError;
    expect(error.message).toMatch(message);
    expect(error.message).toContain(file);
    expect(sha256(file)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(filesBefore);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    return error;
  }

  /** A closed kb database with enough rows to span many pages. */
  async function populatedDatabase(): Promise<string> {
    const dir = newDir();
    const store = SqliteStore.open(dir);
    const org = await orgId(store, 'acme');
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.baseCreate(org, base(`ns-${i % 10}`, `base-${i}`, 'x'.repeat(400)))),
    );
    await store.close();
    expect(sidecars(dir)).toEqual([]);
    return dir;
  }

  it('creates a new database in a missing data dir, and reopens it', async () => {
    const dir = join(newDir(), 'nested', 'data');
    const store = SqliteStore.open(dir);
    await store.close();
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(true);
    const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
    expect(db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    await SqliteStore.open(dir).close();
  });

  it('makes its database, its -wal and -shm, and a backup the owner\'s alone (0600), whatever the umask', async () => {
    const dir = newDir();
    const previous = process.umask(0o022);
    try {
      const store = SqliteStore.open(dir);
      await store.nsCreate(await orgIdOf(store, 'acme'), { key: 'docs', description: null });
      for (const file of [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`]) {
        expect(statSync(join(dir, file)).mode & 0o777, file).toBe(0o600);
      }
      const copy = await store.backup!(join(dir, '..', `${Date.now()}-copy`));
      expect(statSync(copy.path).mode & 0o777).toBe(0o600);
      await store.close();
    } finally {
      process.umask(previous);
    }
  });

  it('refuses an empty database file instead of initialising over it', () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), '');
    expectRefusal(dir, /is empty/);
  });

  it('refuses a read-only database file, even as root, naming the fix', async () => {
    const dir = await populatedDatabase();
    chmodSync(join(dir, DATABASE_FILE), 0o444);
    const error = expectRefusal(dir, /cannot be written \(it is read-only\)/);
    expect(error.message).toMatch(/chmod u\+w/);
  });

  it('refuses a database in a read-only data dir, even as root', async () => {
    const dir = await populatedDatabase();
    chmodSync(dir, 0o555);
    try {
      expectRefusal(dir, new RegExp(`data dir ${dir} cannot be written`));
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  it('refuses to create a database in a read-only data dir, and creates nothing', () => {
    const dir = newDir();
    chmodSync(dir, 0o555);
    try {
      expect(() => SqliteStore.open(dir)).toThrow(/cannot be written/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  it('recovers, not refuses, a database whose checkpoint was cut short after writing page 1', async () => {
    // A crash state: every commit is in the -wal file, and a checkpoint had copied the newest page 1 (whose header
    // counts every page) into kb.db before the disk filled, so kb.db is shorter than its header says.
    const source = newDir();
    await SqliteStore.open(source).close();
    const writer = new Database(join(source, DATABASE_FILE));
    writer.pragma('wal_autocheckpoint = 0');
    const org = writer.prepare("INSERT INTO orgs (name, created_at) VALUES ('acme', 'now') RETURNING id").get() as { id: number };
    const insert = writer.prepare("INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES (?, ?, ?, 'now', 'now')");
    writer.transaction(() => {
      // As every commit of kb, a link of its chain (sqlite-wal.ts): a log of commits without one is no log of kb.db.
      writer.exec(COMMIT_BUMP);
      for (let i = 0; i < 300; i++) insert.run(org.id, `ns-${String(i).padStart(3, '0')}`, 'x'.repeat(500));
    })();
    const dir = newDir();
    const file = join(dir, DATABASE_FILE);
    const wal = readFileSync(join(source, `${DATABASE_FILE}-wal`));
    const db = readFileSync(join(source, DATABASE_FILE));
    writer.close();
    const pageSize = wal.readUInt32BE(8);
    let page1: Buffer | undefined;
    for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
      if (wal.readUInt32BE(at) === 1) page1 = wal.subarray(at + 24, at + 24 + pageSize);
    }
    expect(page1).toBeDefined();
    const cut = Buffer.from(db);
    (page1 as Buffer).copy(cut, 0);
    writeFileSync(file, cut);
    writeFileSync(`${file}-wal`, wal);
    expect(cut.length).toBeLessThan(cut.readUInt32BE(28) * pageSize);

    const store = SqliteStore.open(dir);
    try {
      const principalOrg = (await store.nsList(org.id)).map((namespace) => namespace.key);
      expect(principalOrg).toHaveLength(300);
      expect(principalOrg[299]).toBe('ns-299');
    } finally {
      await store.close();
    }
  });

  it('refuses a -wal of a later state of its own database replayed onto an earlier copy (a backup restored twice)', async () => {
    const source = newDir();
    const store = SqliteStore.open(source);
    const org = await orgId(store, 'acme');
    await store.nsCreate(org, ns('first'));
    const earlier = readFileSync(join(source, DATABASE_FILE));
    await store.nsCreate(org, ns('second'));
    const checkpoint = new Database(join(source, DATABASE_FILE));
    checkpoint.pragma('wal_checkpoint(TRUNCATE)');
    checkpoint.close();
    await store.nsCreate(org, ns('third'));
    const log = readFileSync(join(source, `${DATABASE_FILE}-wal`));
    await store.close();
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), earlier);
    writeFileSync(join(dir, `${DATABASE_FILE}-wal`), log);
    expect(() => SqliteStore.open(dir)).toThrow(/kb\.db-wal is not the write-ahead log of .*continues another copy of this database \(a later state of it, or a fork\)/);
    expect(readFileSync(join(dir, DATABASE_FILE)).equals(earlier)).toBe(true);
    expect(readFileSync(join(dir, `${DATABASE_FILE}-wal`)).equals(log)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([DATABASE_FILE, `${DATABASE_FILE}-wal`]);
  });

  it('refuses a rollback journal beside kb.db, which a kb database never writes, naming it', async () => {
    const dir = await populatedDatabase();
    writeFileSync(join(dir, `${DATABASE_FILE}-journal`), randomBytes(512));
    expect(() => SqliteStore.open(dir)).toThrow(new RegExp(`${join(dir, DATABASE_FILE)}-journal is not`));
  });

  it('gives a database from before commit chains one as it migrates, and links every commit to the one before', async () => {
    // The schema as it was just before the meta table.
    const { dir, old } = await schemaBefore('CREATE TABLE meta');
    old.close();
    const store = SqliteStore.open(dir);
    const meta = () => {
      const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
      try {
        return db.prepare('SELECT lineage, commit_id, prev_id, clean FROM meta').all() as Array<{ lineage: Buffer; commit_id: Buffer; prev_id: Buffer; clean: number }>;
      } finally {
        db.close();
      }
    };
    const acme = await orgId(store, 'acme');
    const [first] = meta();
    expect(first?.lineage).toHaveLength(16);
    expect(first?.commit_id).toHaveLength(16);
    expect(first?.clean).toBe(0);
    await store.nsCreate(acme, ns('docs'));
    const [second] = meta();
    expect(second?.lineage.equals(first?.lineage as Buffer)).toBe(true);
    expect(second?.prev_id.equals(first?.commit_id as Buffer)).toBe(true);
    expect(second?.commit_id.equals(first?.commit_id as Buffer)).toBe(false);
    await store.close();
    expect(meta()[0]?.clean).toBe(1);
  });

  it('keeps the change log the schema\'s triggers wrote as it migrates to the store writing it: cursors go on from the head', async () => {
    // The schema as it was with the triggers, a row a change: before the migration that drops them.
    const { dir, old } = await schemaBefore('DROP TRIGGER IF EXISTS namespaces_inserted_logged');
    old.exec("INSERT INTO orgs (name, created_at) VALUES ('acme', '2026-01-01T00:00:00.000Z')");
    old.exec("INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES (1, 'old', 'logged', '', '')");
    old.exec("UPDATE namespaces SET description = 'again' WHERE key = 'old'");
    // Closed cleanly, as a kb serve leaves it.
    old.exec('UPDATE meta SET clean = 1');
    old.close();
    const store = SqliteStore.open(dir);
    await store.nsCreate(1, ns('new'));
    await store.nsUpdate(1, 'old', { description: 'now' });
    const read = await store.changeLog.read(1, 0, 10);
    expect(read.gone ? [] : read.changes.map(({ seq, type, object }) => [seq, type, object])).toEqual([
      [1, 'created', ns('old', 'logged')],
      [2, 'updated', ns('old', 'again')],
      [3, 'created', ns('new')],
      [4, 'updated', ns('old', 'now')],
    ]);
    await store.close();
    const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").pluck().all()).toEqual([]);
    db.close();
  });

  it('refuses a file of random bytes', () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), randomBytes(8192));
    expectRefusal(dir, /not a kb database/);
  });

  it('refuses a file shorter than an SQLite header', () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), 'SQLite format 3\0');
    expectRefusal(dir, /not a kb database/);
  });

  it('refuses a kb database truncated to half its size', async () => {
    const source = await populatedDatabase();
    const full = readFileSync(join(source, DATABASE_FILE));
    expect(full.length).toBeGreaterThan(16 * 4096);
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), full.subarray(0, Math.floor(full.length / 2)));
    expectRefusal(dir, /truncated/);
  });

  it('refuses a kb database with a corrupted page', async () => {
    const dir = await populatedDatabase();
    const file = join(dir, DATABASE_FILE);
    const bytes = readFileSync(file);
    // Overwrite the middle pages (leaving page 1 and the header intact) with garbage.
    const pageSize = bytes.readUInt16BE(16);
    randomBytes(pageSize * 4).copy(bytes, pageSize * 4);
    writeFileSync(file, bytes);
    expectRefusal(dir, /corrupt/);
  });

  it('refuses a foreign SQLite database', () => {
    const dir = newDir();
    const db = new Database(join(dir, DATABASE_FILE));
    db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);");
    db.close();
    expectRefusal(dir, /SQLite database, but not a kb one/);
  });

  it('refuses a foreign SQLite database in WAL mode', () => {
    const dir = newDir();
    const db = new Database(join(dir, DATABASE_FILE));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    expect(sidecars(dir)).toEqual([]);
    expectRefusal(dir, /not a kb one/);
  });

  it('refuses a kb database whose schema version is newer than this kb', async () => {
    const dir = await populatedDatabase();
    const db = new Database(join(dir, DATABASE_FILE));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(sidecars(dir)).toEqual([]);
    const error = expectRefusal(dir, /newer than this kb supports/);
    expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
  });

  it('refuses a data dir path that is a regular file', () => {
    const dir = newDir();
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'precious');
    const before = sha256(file);
    expect(() => SqliteStore.open(file)).toThrow(StoreOpenError);
    expect(() => SqliteStore.open(file)).toThrow(/cannot create data dir/);
    expect(sha256(file)).toBe(before);
    expect(readdirSync(dir)).toEqual(['not-a-dir']);
  });

  it('refuses a data dir whose kb.db is a directory', () => {
    const dir = newDir();
    mkdirSync(join(dir, DATABASE_FILE));
    expect(() => SqliteStore.open(dir)).toThrow(StoreOpenError);
    expect(readdirSync(dir)).toEqual([DATABASE_FILE]);
  });
  // A data dir the user may not read is refused by test/e2e/serve-lifecycle.test.ts, run as an unprivileged user.
});
