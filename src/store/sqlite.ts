import { accessSync, chmodSync, closeSync, constants, existsSync, fsyncSync, linkSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { KbApiError } from '../api/errors.js';
import type { Base, Namespace } from '../api/schemas.js';
import { makeDirectories, syncDirectory } from '../os/files.js';
import { processRuns } from '../os/processes.js';
import { failures } from './failures.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
import {
  type CommitObserver,
  type DescriptionPatch,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencyCapture,
  type IdempotencyRecord,
  type KeyedResult,
  type Principal,
  type Store,
  StoreOpenError,
  type TokenInfo,
  type Write,
  type WriteOutcome,
} from './store.js';

export const DATABASE_FILE = 'kb.db';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface NamespaceRow { id: number; key: string; description: string | null }
interface BaseRow { key: string; description: string | null }
interface TokenRow { id: string; org: string; created_at: string; revoked_at: string | null }

interface Pending {
  op: () => unknown;
  /** Present on a keyed write: it then resolves with a KeyedResult, and rejects only with the commit's failure. */
  capture: IdempotencyCapture | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function sqliteCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function describeOpenError(path: string, error: unknown): string {
  const code = sqliteCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'EROFS' || code?.startsWith('SQLITE_READONLY')) {
    return `cannot open ${path} for writing: ${reason}. kb serve needs to write its data dir: pick one on a writable filesystem.`;
  }
  if (code === 'EACCES' || code === 'EPERM' || code?.startsWith('SQLITE_CANTOPEN')) {
    return `cannot open ${path}: ${reason}. Check that the data dir exists and that you may read and write it.`;
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return `${path} is corrupt (${reason}). ${RESTORE}`;
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return `${path} is locked by another process (${reason}).`;
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return `cannot open ${path}: the disk is full (${reason}). Free space in the data dir and start again.`;
  }
  return `cannot open ${path}: ${reason}`;
}

/** What to do with a database that cannot be used: said by every refusal of a damaged file. */
const RESTORE = 'Restore it from a backup (`kb serve backup` makes one), or move it aside to start empty.';

/**
 * Checks the file's header and size before SQLite touches it, so an empty, truncated or foreign file is refused
 * without a single byte written (opening it read-write would start a WAL and could rewrite the header).
 */
function inspectFile(path: string): void {
  const size = statSync(path).size;
  if (size === 0) {
    throw new StoreOpenError(`${path} is empty, so it is not a kb database. Move it aside (or remove it) to start empty.`);
  }
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 100 || !header.subarray(0, 16).equals(SQLITE_HEADER)) {
    throw new StoreOpenError(`${path} is not a kb database (no SQLite header). Move it aside to start empty.`);
  }
  // A write-ahead log with frames holds pages newer than the file, and SQLite replays it on open: a checkpoint cut
  // short (a full disk, a crash) can leave the header's page count ahead of the file, with every page still in the
  // log. Only a file with no log to recover from is judged by its size.
  if (walFrames(path)) return;
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pageCount = header.readUInt32BE(28);
  const changeCounter = header.readUInt32BE(24);
  const validFor = header.readUInt32BE(92);
  if (pageCount > 0 && changeCounter === validFor && size < pageCount * pageSize) {
    throw new StoreOpenError(`${path} is truncated (${size} bytes, its header says ${pageCount * pageSize}). ${RESTORE}`);
  }
}

/** Whether the database's -wal file holds frames (a WAL header is 32 bytes; each frame follows it). */
function walFrames(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 32;
  } catch {
    return false;
  }
}

/**
 * Refuses, before SQLite opens anything, a database file or data dir that kb could read but not write: a read-only
 * filesystem, no write permission for us, or, since root may write anything, no write bit for the owner (someone
 * made it read-only on purpose).
 */
function refuseUnwritable(path: string, target: string, what: 'data dir' | 'database file'): void {
  let reason: string | undefined;
  try {
    accessSync(target, constants.W_OK);
    if ((statSync(target).mode & 0o200) === 0) reason = 'it is read-only';
  } catch (error) {
    const code = sqliteCode(error);
    reason = code === 'EROFS' ? 'it is on a read-only filesystem' : code === 'EACCES' || code === 'EPERM' ? 'you may not write it' : (error as Error).message;
  }
  if (reason === undefined) return;
  throw new StoreOpenError(
    `cannot use ${path}: its ${what}${what === 'data dir' ? ` ${target}` : ''} cannot be written (${reason}). ` +
      'kb serve writes its database: make it writable (chmod u+w), or copy it to a writable data dir.',
  );
}

/** A database kb makes is readable and writable by its owner alone (as its data dir is 0700). */
const DATABASE_MODE = 0o600;

/**
 * Makes a new database in the data dir, so that the file and its schema appear together or not at all: it is built
 * under a temporary name beside kb.db and then linked into place. link() never replaces a file, so of several
 * processes creating the same data dir at once exactly one database is kept; the others open it.
 */
function createDatabase(dataDir: string, path: string): void {
  removeAbandonedBuilds(dataDir);
  const building = join(dataDir, `.${DATABASE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.new`);
  try {
    const db = new Database(building);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrate(db);
    } finally {
      db.close();
    }
    // The owner's alone, whatever the umask or the data dir's own mode: SQLite gives its -wal and -shm files the
    // database's mode.
    chmodSync(building, DATABASE_MODE);
    try {
      linkSync(building, path);
    } catch (error) {
      if (sqliteCode(error) !== 'EEXIST') throw error;
    }
    syncDirectory(dataDir);
  } catch (error) {
    throw new StoreOpenError(`cannot create the database ${path}: ${(error as Error).message}`);
  } finally {
    for (const file of [building, `${building}-wal`, `${building}-shm`]) rmSync(file, { force: true });
  }
}

/** Databases a killed process was building (its pid is in the name, and gone): never linked, so never used. */
function removeAbandonedBuilds(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    const pid = /^\.kb\.db\.(\d+)\.[0-9a-f]+\.new(-wal|-shm)?$/.exec(name)?.[1];
    if (pid === undefined || processRuns(Number(pid))) continue;
    rmSync(join(dataDir, name), { force: true });
  }
}

/**
 * Brings the schema to this kb's version. The version is read inside the write transaction (BEGIN IMMEDIATE holds
 * the write lock), so of several processes opening one database at once only the first applies the migrations.
 */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new StoreOpenError(`schema version ${version} is newer than this kb supports (${SCHEMA_VERSION}).`);
    }
    if (version === SCHEMA_VERSION) return;
    for (let next = version; next < SCHEMA_VERSION; next++) db.exec(MIGRATIONS[next] as string);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

function now(): string {
  return new Date().toISOString();
}

export interface SqliteStoreOptions {
  /** Milliseconds to wait for another process's write lock (e.g. `kb serve token create` beside a server). */
  busyTimeoutMs?: number;
  /** Told after each group commit (metrics). */
  onCommit?: CommitObserver | undefined;
}

/**
 * The SQLite engine: WAL with synchronous=FULL, so a commit is on disk before it returns. Writes from one
 * turn of the event loop are grouped into one transaction (one fsync), each in its own savepoint so that
 * one failing write does not undo the others, and every promise resolves only after the commit.
 */
export class SqliteStore implements Store {
  private queue: Pending[] = [];
  private closed = false;
  /** Transactions this connection has committed (or tried to): PRAGMA data_version counts only the others'. */
  private commits = 0;
  /** PRAGMA data_version as read in this turn of the event loop: it changes when another connection commits. */
  private othersVersion: number | undefined;
  private readonly db: Database.Database;
  private readonly stmt;
  /** The database file as it was opened: its device and inode. */
  private readonly file: { dev: number; ino: number };
  private onCommit: CommitObserver | undefined;
  /**
   * Writes of this connection that have settled, by organization (the API's writes), and those of no organization
   * (tokens): dataVersion(). Counted before the write's promise settles for its caller, so before its reply.
   */
  private readonly orgWrites = new Map<number, number>();
  private sharedWrites = 0;

  private constructor(db: Database.Database) {
    this.db = db;
    const { dev, ino } = statSync(db.name);
    this.file = { dev, ino };
    this.stmt = {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      authenticate: db.prepare<[Buffer], { org_id: number; org: string; id: string }>(
        `SELECT t.id, t.org_id, o.name AS org FROM tokens t JOIN orgs o ON o.id = t.org_id
         WHERE t.hash = ? AND t.revoked_at IS NULL`,
      ),
      orgInsert: db.prepare<[string, string]>('INSERT INTO orgs (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING'),
      orgId: db.prepare<[string], { id: number }>('SELECT id FROM orgs WHERE name = ?'),
      tokenInsert: db.prepare<[string, number, Buffer, string]>(
        'INSERT INTO tokens (id, org_id, hash, created_at) VALUES (?, ?, ?, ?)',
      ),
      tokenAny: db.prepare<[], { id: string }>('SELECT id FROM tokens LIMIT 1'),
      tokenList: db.prepare<[], TokenRow>(
        `SELECT t.id, o.name AS org, t.created_at, t.revoked_at FROM tokens t JOIN orgs o ON o.id = t.org_id
         ORDER BY t.created_at, t.id`,
      ),
      tokenGet: db.prepare<[string], TokenRow>(
        `SELECT t.id, o.name AS org, t.created_at, t.revoked_at FROM tokens t JOIN orgs o ON o.id = t.org_id
         WHERE t.id = ?`,
      ),
      tokenRevoke: db.prepare<[string, string]>('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      nsList: db.prepare<[number], NamespaceRow>(
        'SELECT id, key, description FROM namespaces WHERE org_id = ? ORDER BY key',
      ),
      nsGet: db.prepare<[number, string], NamespaceRow>(
        'SELECT id, key, description FROM namespaces WHERE org_id = ? AND key = ?',
      ),
      nsInsert: db.prepare<[number, string, string | null, string, string]>(
        'INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      ),
      nsEnsure: db.prepare<[number, string, string, string]>(
        `INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)
         ON CONFLICT (org_id, key) DO NOTHING`,
      ),
      nsSetDescription: db.prepare<[string | null, string, number]>(
        'UPDATE namespaces SET description = ?, updated_at = ? WHERE id = ?',
      ),
      baseList: db.prepare<[number], BaseRow>('SELECT key, description FROM bases WHERE namespace_id = ? ORDER BY key'),
      baseGet: db.prepare<[number, string], BaseRow & { id: number }>(
        'SELECT id, key, description FROM bases WHERE namespace_id = ? AND key = ?',
      ),
      baseInsert: db.prepare<[number, string, string | null, string, string]>(
        'INSERT INTO bases (namespace_id, key, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      ),
      baseSetDescription: db.prepare<[string | null, string, number]>(
        'UPDATE bases SET description = ?, updated_at = ? WHERE id = ?',
      ),
      baseDelete: db.prepare<[number]>('DELETE FROM bases WHERE id = ?'),
      idempotencyGet: db.prepare<[number, string, string], { fingerprint: string; status: number; body: string; created_at: string }>(
        'SELECT fingerprint, status, body, created_at FROM idempotency WHERE org_id = ? AND key = ? AND created_at >= ?',
      ),
      idempotencyPut: db.prepare<[number, string, string, number, string, string]>(
        `INSERT INTO idempotency (org_id, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (org_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
           body = excluded.body, created_at = excluded.created_at`,
      ),
      idempotencyPurge: db.prepare<[string]>('DELETE FROM idempotency WHERE created_at < ?'),
    };
  }

  /**
   * Opens the database in dataDir, creating it (and the dir) when absent, or throws StoreOpenError leaving every
   * file untouched. An existing file is never initialised over: one that is empty, foreign, damaged, newer or
   * read-only is refused.
   */
  static open(dataDir: string, options: SqliteStoreOptions = {}): SqliteStore {
    try {
      makeDirectories(dataDir, 0o700);
    } catch (error) {
      throw new StoreOpenError(`cannot create data dir ${dataDir}: ${(error as Error).message}`);
    }
    const path = join(dataDir, DATABASE_FILE);
    // One look: a second (existsSync) could see the file another process has just linked into place, and call it
    // "not a file".
    let found: 'file' | 'other' | 'none' = 'none';
    try {
      found = statSync(path).isFile() ? 'file' : 'other';
    } catch (error) {
      if (sqliteCode(error) !== 'ENOENT') throw new StoreOpenError(describeOpenError(path, error));
    }
    if (found === 'other') throw new StoreOpenError(`${path} is not a file. Move it aside, or pick another --data-dir.`);
    if (found === 'none') {
      refuseUnwritable(path, dataDir, 'data dir');
      createDatabase(dataDir, path);
    }
    const busyTimeout = options.busyTimeoutMs ?? 5000;
    try {
      inspectFile(path);
      refuseUnwritable(path, dataDir, 'data dir');
      refuseUnwritable(path, path, 'database file');
    } catch (error) {
      if (error instanceof StoreOpenError) throw error;
      throw new StoreOpenError(describeOpenError(path, error));
    }
    SqliteStore.checkReadOnly(path, busyTimeout);
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { timeout: busyTimeout, fileMustExist: true });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      migrate(db);
      const store = new SqliteStore(db);
      store.onCommit = options.onCommit;
      return store;
    } catch (error) {
      db?.close();
      if (error instanceof StoreOpenError) throw error;
      throw new StoreOpenError(describeOpenError(path, error));
    }
  }

  /**
   * Reads the whole file once, read-only, before anything may write to it. Even a read-only connection to a
   * WAL-mode file creates its -wal and -shm files; when the file is refused, those it created are removed again.
   */
  private static checkReadOnly(path: string, busyTimeout: number): void {
    const created = [`${path}-wal`, `${path}-shm`].filter((file) => !existsSync(file));
    let db: Database.Database | undefined;
    let refused = true;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeout });
      const appId = db.pragma('application_id', { simple: true }) as number;
      const version = db.pragma('user_version', { simple: true }) as number;
      const tables = db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number };
      if (appId !== APPLICATION_ID && !(appId === 0 && tables.n === 0)) {
        throw new StoreOpenError(`${path} is an SQLite database, but not a kb one. Move it aside or pick another --data-dir.`);
      }
      if (version > SCHEMA_VERSION) {
        throw new StoreOpenError(
          `${path} has schema version ${version}, newer than this kb supports (${SCHEMA_VERSION}). Upgrade kb to open it.`,
        );
      }
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new StoreOpenError(`${path} is corrupt (${String(check)}). ${RESTORE}`);
      refused = false;
    } catch (error) {
      if (error instanceof StoreOpenError) throw error;
      throw new StoreOpenError(describeOpenError(path, error));
    } finally {
      db?.close();
      if (refused) for (const file of created) rmSync(file, { force: true });
    }
  }

  /** Queues a write for the next group commit; resolves with its result once the commit is on disk. */
  private write<T>(op: () => T): Promise<T> {
    return this.counted(this.enqueue(op, undefined), undefined) as Promise<T>;
  }

  /** The write's promise, settling only once the write is counted for its organization's version (dataVersion). */
  private counted(written: Promise<unknown>, orgId: number | undefined): Promise<unknown> {
    const count = () => {
      if (orgId === undefined) this.sharedWrites++;
      else this.orgWrites.set(orgId, (this.orgWrites.get(orgId) ?? 0) + 1);
    };
    return written.then(
      (value) => {
        count();
        return value;
      },
      (error: unknown) => {
        count();
        throw error;
      },
    );
  }

  private enqueue(op: () => unknown, capture: IdempotencyCapture | undefined): Promise<unknown> {
    if (this.closed) return Promise.reject(failures.shuttingDown());
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ op, capture, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  perform(write: Write): Promise<unknown> {
    return this.counted(this.enqueue(this.operation(write), undefined), write.orgId);
  }

  performKeyed(write: Write, capture: IdempotencyCapture): Promise<KeyedResult> {
    return this.counted(this.enqueue(this.operation(write), capture), write.orgId) as Promise<KeyedResult>;
  }

  /** The statements of one write, run inside the group commit's transaction. */
  private operation(write: Write): () => unknown {
    switch (write.op) {
      case 'nsCreate':
        return () => this.nsCreateNow(write.orgId, write.ns);
      case 'nsUpdate':
        return () => this.nsUpdateNow(write.orgId, write.key, write.patch);
      case 'baseCreate':
        return () => this.baseCreateNow(write.orgId, write.base);
      case 'baseUpdate':
        return () => this.baseUpdateNow(write.orgId, write.namespace, write.key, write.patch);
      case 'baseDelete':
        return () => this.baseDeleteNow(write.orgId, write.namespace, write.key);
    }
  }

  /**
   * Whether the database file is still the one this store opened. One that was deleted (a temp cleaner, an `rm -rf`
   * of the data dir) or replaced (a restore moved into place) would still take writes, into a file no one will ever
   * open again: each would be answered 200 and lost with the next start.
   */
  private fileStillInPlace(): boolean {
    const now = statSync(this.db.name, { throwIfNoEntry: false });
    return now !== undefined && now.dev === this.file.dev && now.ino === this.file.ino;
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (!this.fileStillInPlace()) {
      const gone = failures.databaseGone();
      for (const item of batch) item.reject(gone);
      return;
    }
    const results: Array<WriteOutcome | KeyedResult> = [];
    const started = performance.now();
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const item of batch) {
        // A kept reply is looked for inside the transaction, after the writes before it in this batch: a second copy
        // of a key replays the first's reply.
        const kept = item.capture && this.keptReply(item.capture.orgId, item.capture.key);
        if (kept) {
          results.push({ kind: 'replayed', record: kept });
          continue;
        }
        this.db.exec('SAVEPOINT op');
        let outcome: WriteOutcome;
        try {
          outcome = { ok: true, value: item.op() };
        } catch (error) {
          // SQLite ends the whole transaction itself on some errors (a full disk, I/O): then the batch fails.
          if (!this.db.inTransaction) throw error;
          this.db.exec('ROLLBACK TO op');
          outcome = { ok: false, error: storageFailure(error) };
        }
        // The reply is kept in the same transaction as the write: both are committed, or neither.
        const reply = item.capture?.reply(outcome);
        if (item.capture && reply) {
          const { orgId, key, fingerprint } = item.capture;
          this.stmt.idempotencyPut.run(orgId, key, fingerprint, reply.status, reply.body, now());
        }
        this.db.exec('RELEASE op');
        results.push(item.capture ? { kind: 'ran', outcome, reply } : outcome);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.commits++;
      const failure = storageFailure(error);
      for (const item of batch) item.reject(failure);
      return;
    }
    this.commits++;
    this.onCommit?.(batch.length, (performance.now() - started) / 1000);
    batch.forEach((item, index) => {
      const result = results[index];
      if (result === undefined) item.reject(new Error('lost write result'));
      else if ('kind' in result) item.resolve(result);
      else if (result.ok) item.resolve(result.value);
      else item.reject(result.error);
    });
  }

  /** Not ready once closed, or when the database file is no longer the one opened (writes would be lost). */
  async unready(): Promise<string | undefined> {
    if (this.closed) return 'the store is closed';
    if (!this.fileStillInPlace()) return `the database file ${this.db.name} was deleted or replaced`;
    return undefined;
  }

  readVersion(): string {
    this.ensureOpen();
    return `${this.commits}.${this.others()}`;
  }

  /**
   * The organization's writes and those of no organization, with other connections' commits (which may be anyone's:
   * `kb serve token create`, an administrator's sqlite3): another organization's writes leave it as it is.
   */
  dataVersion(orgId: number): string {
    this.ensureOpen();
    return `${this.orgWrites.get(orgId) ?? 0}.${this.sharedWrites}.${this.others()}`;
  }

  /**
   * PRAGMA data_version: it changes when another connection commits. Reading it costs a read transaction (a lock on
   * the WAL index), so it is read once per turn of the event loop, which is enough: a request read from a socket in
   * this turn was sent before the read below, so any commit it could have seen acknowledged is counted; bytes that
   * arrive later are read in a later turn, after setImmediate has dropped the value. This connection's own commits
   * are counted exactly, always.
   */
  private others(): number {
    if (this.othersVersion === undefined) {
      this.othersVersion = this.stmt.dataVersion.get() as number;
      setImmediate(() => (this.othersVersion = undefined));
    }
    return this.othersVersion;
  }

  async authenticate(tokenHash: Buffer): Promise<Principal | null> {
    this.ensureOpen();
    const row = this.stmt.authenticate.get(tokenHash);
    return row ? { orgId: row.org_id, org: row.org, tokenId: row.id } : null;
  }

  createToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo> {
    return this.write(() => this.insertToken(org, id, tokenHash));
  }

  createFirstToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo | null> {
    // The write transaction is BEGIN IMMEDIATE, so another process cannot add a token between the check and the insert.
    return this.write(() => (this.stmt.tokenAny.get() ? null : this.insertToken(org, id, tokenHash)));
  }

  private insertToken(org: string, id: string, tokenHash: Buffer): TokenInfo {
    const createdAt = now();
    this.stmt.orgInsert.run(org, createdAt);
    const orgRow = this.stmt.orgId.get(org) as { id: number };
    this.stmt.tokenInsert.run(id, orgRow.id, tokenHash, createdAt);
    return { id, org, createdAt, revokedAt: null };
  }

  async listTokens(): Promise<TokenInfo[]> {
    this.ensureOpen();
    return this.stmt.tokenList.all().map(tokenInfo);
  }

  revokeToken(id: string): Promise<TokenInfo | null> {
    return this.write(() => {
      this.stmt.tokenRevoke.run(now(), id);
      const row = this.stmt.tokenGet.get(id);
      return row ? tokenInfo(row) : null;
    });
  }

  async nsList(orgId: number): Promise<Namespace[]> {
    this.ensureOpen();
    return this.stmt.nsList.all(orgId).map(({ key, description }) => ({ key, description }));
  }

  nsCreate(orgId: number, ns: Namespace): Promise<Namespace> {
    return this.write(() => this.nsCreateNow(orgId, ns));
  }

  private nsCreateNow(orgId: number, ns: Namespace): Namespace {
    const at = now();
    try {
      this.stmt.nsInsert.run(orgId, ns.key, ns.description, at, at);
    } catch (error) {
      if (isUniqueViolation(error)) throw failures.namespaceExists(ns.key);
      throw error;
    }
    return { key: ns.key, description: ns.description };
  }

  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace> {
    return this.write(() => this.nsUpdateNow(orgId, key, patch));
  }

  private nsUpdateNow(orgId: number, key: string, patch: DescriptionPatch): Namespace {
    const row = this.namespace(orgId, key);
    if (patch.description !== undefined) {
      this.stmt.nsSetDescription.run(patch.description, now(), row.id);
      row.description = patch.description;
    }
    return { key: row.key, description: row.description };
  }

  async baseList(orgId: number, namespace: string): Promise<Base[]> {
    this.ensureOpen();
    const ns = this.namespace(orgId, namespace);
    return this.stmt.baseList.all(ns.id).map(({ key, description }) => ({ namespace: ns.key, key, description }));
  }

  baseCreate(orgId: number, base: Base): Promise<Base> {
    return this.write(() => this.baseCreateNow(orgId, base));
  }

  private baseCreateNow(orgId: number, base: Base): Base {
    const at = now();
    this.stmt.nsEnsure.run(orgId, base.namespace, at, at);
    const ns = this.namespace(orgId, base.namespace);
    try {
      this.stmt.baseInsert.run(ns.id, base.key, base.description, at, at);
    } catch (error) {
      if (isUniqueViolation(error)) throw failures.baseExists(base.namespace, base.key);
      throw error;
    }
    return { namespace: base.namespace, key: base.key, description: base.description };
  }

  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base> {
    return this.write(() => this.baseUpdateNow(orgId, namespace, key, patch));
  }

  private baseUpdateNow(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Base {
    const row = this.base(orgId, namespace, key);
    if (patch.description !== undefined) {
      this.stmt.baseSetDescription.run(patch.description, now(), row.id);
      row.description = patch.description;
    }
    return { namespace, key: row.key, description: row.description };
  }

  baseDelete(orgId: number, namespace: string, key: string): Promise<Base> {
    return this.write(() => this.baseDeleteNow(orgId, namespace, key));
  }

  private baseDeleteNow(orgId: number, namespace: string, key: string): Base {
    const row = this.base(orgId, namespace, key);
    this.stmt.baseDelete.run(row.id);
    return { namespace, key: row.key, description: row.description };
  }

  async idempotencyGet(orgId: number, key: string): Promise<IdempotencyRecord | null> {
    this.ensureOpen();
    return this.keptReply(orgId, key);
  }

  private keptReply(orgId: number, key: string): IdempotencyRecord | null {
    const row = this.stmt.idempotencyGet.get(orgId, key, new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString());
    return row ? { fingerprint: row.fingerprint, status: row.status, body: row.body, createdAt: row.created_at } : null;
  }

  idempotencyPurge(): Promise<number> {
    const before = new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString();
    return this.write(() => this.stmt.idempotencyPurge.run(before).changes);
  }

  /**
   * Copies the database as of one moment into a new data dir with SQLite's online backup (writers, of this process
   * or another, go on meanwhile), so that `kb serve --data-dir DEST` serves the copy. The copy is checked, then
   * linked into place: it appears whole or not at all, and an existing database is never replaced.
   */
  async backup(destDir: string): Promise<{ path: string; bytes: number }> {
    this.ensureOpen();
    const target = join(destDir, DATABASE_FILE);
    try {
      makeDirectories(destDir, 0o700);
    } catch (error) {
      throw new StoreOpenError(`cannot create ${destDir}: ${(error as Error).message}`);
    }
    if (existsSync(target)) {
      throw new StoreOpenError(`${target} exists already: a backup never replaces a database.`, 'Name a new or empty directory.');
    }
    const building = join(destDir, `.${DATABASE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.new`);
    try {
      // After the first step, copy all that is left in one step: a step reads one snapshot, so another process's
      // commits cannot make it start over again and again.
      await this.db.backup(building, { progress: ({ remainingPages }) => Math.max(remainingPages, 100) });
      const copy = new Database(building, { fileMustExist: true });
      try {
        copy.pragma('journal_mode = WAL');
        const check = copy.pragma('quick_check', { simple: true });
        if (check !== 'ok') throw new Error(`the copy does not check out (${String(check)})`);
        if (copy.pragma('application_id', { simple: true }) !== APPLICATION_ID) throw new Error('the copy is not a kb database');
      } finally {
        copy.close();
      }
      chmodSync(building, DATABASE_MODE);
      const fd = openSync(building, 'r+');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      linkSync(building, target);
      syncDirectory(destDir);
      return { path: target, bytes: statSync(target).size };
    } catch (error) {
      if (error instanceof StoreOpenError) throw error;
      const code = sqliteCode(error);
      if (code === 'EEXIST') throw new StoreOpenError(`${target} exists already: a backup never replaces a database.`, 'Name a new or empty directory.');
      throw new StoreOpenError(`cannot back up to ${target}: ${(error as Error).message}`);
    } finally {
      for (const file of [building, `${building}-wal`, `${building}-shm`]) rmSync(file, { force: true });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    this.db.close();
  }

  /** Reads after close() fail as writes do (503), not with better-sqlite3's "connection is not open" (500). */
  private ensureOpen(): void {
    if (this.closed) throw failures.shuttingDown();
  }

  private namespace(orgId: number, key: string): NamespaceRow {
    const row = this.stmt.nsGet.get(orgId, key);
    if (!row) throw failures.namespaceNotFound(key);
    return row;
  }

  private base(orgId: number, namespace: string, key: string): BaseRow & { id: number } {
    const ns = this.namespace(orgId, namespace);
    const row = this.stmt.baseGet.get(ns.id, key);
    if (!row) throw failures.baseNotFound(namespace, key);
    return row;
  }
}

function tokenInfo(row: TokenRow): TokenInfo {
  return { id: row.id, org: row.org, createdAt: row.created_at, revokedAt: row.revoked_at };
}

function isUniqueViolation(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Maps what SQLite throws to the API's error catalog; KbApiErrors pass through unchanged. */
function storageFailure(error: unknown): unknown {
  if (error instanceof KbApiError) return error;
  const code = sqliteCode(error);
  if (code === 'SQLITE_FULL') {
    return new KbApiError('insufficient_storage', 'The server is out of disk space; nothing was written', 'Free space in the data dir and retry.');
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return failures.busy();
  }
  return error;
}
