import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { KbApiError } from '../api/errors.js';
import type { Base, Namespace } from '../api/schemas.js';
import { failures } from './failures.js';
import { type Answer, failAll, planNow, type QueuedWrite, type Settled, settle, type Step, WriteQueue } from './group-commit.js';
import { isoFormatter, isoNow } from './clock.js';
import { backupDatabase } from './sqlite-backup.js';
import { SqliteChangeLog } from './sqlite-changes.js';
import { GENERATION_BUMP, type OpenOptions, openDatabase, sqliteCode } from './sqlite-open.js';
import {
  type CommitObserver,
  type DescriptionPatch,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencyCapture,
  type IdempotencyRecord,
  type KeyedResult,
  type Principal,
  type Store,
  type TokenInfo,
  type Write,
  type WriteOutcome,
} from './store.js';

export { DATABASE_FILE } from './sqlite-open.js';

interface NamespaceRow { id: number; key: string; description: string | null }
interface BaseRow { key: string; description: string | null }
interface TokenRow { id: string; org: string; created_at: string; revoked_at: string | null }

interface Pending extends QueuedWrite {
  op: () => unknown;
}

/** The oldest time of a reply kept for a repeat of its key. */
const keptSince = isoFormatter();

export type SqliteStoreOptions = OpenOptions & {
  /** Told after each group commit (metrics). */
  onCommit?: CommitObserver | undefined;
};

/** Organizations whose dataVersion() text is kept, at most (then it starts again). */
const VERSION_TEXTS_KEPT = 1024;

/** A version's text and the counts it was made of (b is -1 for a version of two counts). */
interface VersionText {
  a: number;
  b: number;
  c: number;
  text: string;
}

/** The kept text while its counts are unchanged (most requests ask at the version of the one before), else a new one. */
function versionText(kept: VersionText | undefined, a: number, b: number, c: number): VersionText {
  if (kept !== undefined && kept.a === a && kept.b === b && kept.c === c) return kept;
  return { a, b, c, text: b === -1 ? `${a}.${c}` : `${a}.${b}.${c}` };
}

/**
 * The SQLite engine: WAL with synchronous=FULL, so a commit is on disk before it returns. Writes from one
 * turn of the event loop are grouped into one transaction (one fsync), each in its own savepoint so that
 * one failing write does not undo the others, and every promise resolves only after the commit.
 */
export class SqliteStore implements Store {
  /** One batch per turn of the event loop, committed synchronously: the connection is never left inside a transaction. */
  private readonly queue = new WriteQueue<Pending>((batch) => this.flush(batch), { maxBatch: Number.POSITIVE_INFINITY, concurrent: 1 });
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
  /** The last text of each version and the counts it was made of (readVersion, tokensVersion, dataVersion by organization). */
  private readonly versionTexts: { read?: VersionText; tokens?: VersionText; data: Map<number, VersionText> } = { data: new Map() };
  /** The change log of GET /v1/watch, which the schema's triggers write (sqlite-changes.ts). */
  readonly changeLog: SqliteChangeLog;

  private constructor(db: Database.Database) {
    this.db = db;
    const { dev, ino } = statSync(db.name);
    this.file = { dev, ino };
    this.changeLog = new SqliteChangeLog(db, (op) => this.write(op));
    this.stmt = {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      /** Run first in every write transaction (docs/contract.md, Files and start-up: whose -wal is it?). */
      generationBump: db.prepare(GENERATION_BUMP),
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
      baseListAll: db.prepare<[number], Base>(
        `SELECT n.key AS namespace, b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
         WHERE n.org_id = ? ORDER BY n.key, b.key`,
      ),
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
   * read-only is refused, and so is a sidecar file (-wal, -shm, -journal) that is not its own.
   */
  static open(dataDir: string, options: SqliteStoreOptions = {}): SqliteStore {
    const store = new SqliteStore(openDatabase(dataDir, options));
    store.onCommit = options.onCommit;
    return store;
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

  private flush(batch: Pending[]): void {
    if (batch.length === 0) return;
    if (!this.fileStillInPlace()) return failAll(batch, failures.databaseGone());
    let results: Settled[];
    const started = performance.now();
    try {
      this.db.exec('BEGIN IMMEDIATE');
      // Every commit moves the database's generation on, so that a -wal can be told from an older one (sqlite-open.ts).
      this.stmt.generationBump.run();
      results = planNow(batch, (step) => this.answer(batch[step.index] as Pending, step));
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.commits++;
      return failAll(batch, storageFailure(error));
    }
    this.commits++;
    this.onCommit?.(batch.length, (performance.now() - started) / 1000);
    this.changeLog.committed();
    settle(batch, results);
  }

  /** One step of the group commit's plan (group-commit.ts), inside the batch's transaction. */
  private answer(item: Pending, step: Step): Answer {
    const capture = item.capture as IdempotencyCapture;
    switch (step.ask) {
      case 'kept':
        // Looked for inside this transaction: a key kept by an earlier commit (of this process or another) replays.
        return this.keptReply(capture.orgId, capture.key);
      case 'run': {
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
        this.db.exec('RELEASE op');
        return outcome;
      }
      case 'keep':
        // The reply is kept in the same transaction as the write: both are committed, or neither.
        this.stmt.idempotencyPut.run(capture.orgId, capture.key, capture.fingerprint, step.reply.status, step.reply.body, isoNow());
        return undefined;
    }
  }

  /** Not ready once closed, or when the database file is no longer the one opened (writes would be lost). */
  async unready(): Promise<string | undefined> {
    if (this.closed) return 'the store is closed';
    if (!this.fileStillInPlace()) return `the database file ${this.db.name} was deleted or replaced`;
    return undefined;
  }

  readVersion(): string {
    this.ensureOpen();
    return (this.versionTexts.read = versionText(this.versionTexts.read, this.commits, -1, this.others())).text;
  }

  /**
   * The organization's writes and those of no organization, with other connections' commits (which may be anyone's:
   * `kb serve token create`, an administrator's sqlite3): another organization's writes leave it as it is.
   */
  dataVersion(orgId: number): string {
    this.ensureOpen();
    const kept = this.versionTexts.data.get(orgId);
    const version = versionText(kept, this.orgWrites.get(orgId) ?? 0, this.sharedWrites, this.others());
    if (version !== kept) {
      if (this.versionTexts.data.size >= VERSION_TEXTS_KEPT) this.versionTexts.data.clear();
      this.versionTexts.data.set(orgId, version);
    }
    return version.text;
  }

  /**
   * The writes of no organization (tokens, and the store's own methods), with other connections' commits (a `kb serve
   * token revoke` beside the server): the API's writes leave it as it is.
   */
  tokensVersion(): string {
    this.ensureOpen();
    return (this.versionTexts.tokens = versionText(this.versionTexts.tokens, this.sharedWrites, -1, this.others())).text;
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
    const createdAt = isoNow();
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
      this.stmt.tokenRevoke.run(isoNow(), id);
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
    const at = isoNow();
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
      this.stmt.nsSetDescription.run(patch.description, isoNow(), row.id);
      row.description = patch.description;
    }
    return { key: row.key, description: row.description };
  }

  async baseList(orgId: number, namespace: string): Promise<Base[]> {
    this.ensureOpen();
    const ns = this.namespace(orgId, namespace);
    return this.stmt.baseList.all(ns.id).map(({ key, description }) => ({ namespace: ns.key, key, description }));
  }

  async baseListAll(orgId: number): Promise<Base[]> {
    this.ensureOpen();
    return this.stmt.baseListAll.all(orgId);
  }

  baseCreate(orgId: number, base: Base): Promise<Base> {
    return this.write(() => this.baseCreateNow(orgId, base));
  }

  private baseCreateNow(orgId: number, base: Base): Base {
    const at = isoNow();
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
      this.stmt.baseSetDescription.run(patch.description, isoNow(), row.id);
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
    const row = this.stmt.idempotencyGet.get(orgId, key, keptSince(Date.now() - IDEMPOTENCY_RETENTION_MS));
    return row ? { fingerprint: row.fingerprint, status: row.status, body: row.body, createdAt: row.created_at } : null;
  }

  idempotencyPurge(): Promise<number> {
    const before = keptSince(Date.now() - IDEMPOTENCY_RETENTION_MS);
    return this.write(() => this.stmt.idempotencyPurge.run(before).changes);
  }

  /**
   * Copies the database as of one moment into a new data dir with SQLite's online backup (writers, of this process
   * or another, go on meanwhile), so that `kb serve --data-dir DEST` serves the copy: see sqlite-backup.ts.
   */
  async backup(destDir: string): Promise<{ path: string; bytes: number }> {
    this.ensureOpen();
    return backupDatabase(this.db, destDir);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush(this.queue.takeAll());
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
