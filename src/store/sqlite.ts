import type Database from 'better-sqlite3';
import { KbApiError } from '../api/errors.js';
import type { Base, Namespace } from '../api/schemas.js';
import { failures } from './failures.js';
import { type Answer, failAll, planNow, type QueuedWrite, type Settled, settle, type Step, WriteQueue } from './group-commit.js';
import { isoFormatter, isoNow } from './clock.js';
import { backupDatabase } from './sqlite-backup.js';
import { closeMarkingClean, type DatabaseFiles, moved } from './sqlite-files.js';
import { type OpenDatabase, type OpenOptions, openDatabase, sqliteCode } from './sqlite-open.js';
import { type RecordedChange, SqliteChangeLog } from './sqlite-changes.js';
import { type BaseRow, type NamespaceRow, statements, type TokenRow } from './sqlite-statements.js';
import { recoverFiles } from './sqlite-recover.js';
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
  type TokenOptions,
  type Write,
} from './store.js';

export { DATABASE_FILE } from './sqlite-open.js';

interface Pending extends QueuedWrite {
  op: () => unknown;
}

/** The oldest time of a reply kept for a repeat of its key. */
const keptSince = isoFormatter();

export type SqliteStoreOptions = OpenOptions & {
  /** Told after each group commit (metrics). */
  onCommit?: CommitObserver | undefined;
  /** Told what became of a file deleted or replaced while the store ran, and what was done (a warning for the log). */
  log?: ((message: string) => void) | undefined;
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
  private db!: Database.Database;
  private stmt!: ReturnType<typeof statements>;
  /** The kb.db, -wal and -shm this connection holds (sqlite-files.ts). */
  private held!: DatabaseFiles;
  /** Why writes cannot be kept any more (kb.db replaced while running: sqlite-recover.ts), or undefined. */
  private lost: string | undefined;
  /** When a look at the write lock first found another process holding it (unready). */
  private lockedSince: number | undefined;
  private readonly watching: NodeJS.Timeout;
  private onCommit: CommitObserver | undefined;
  /**
   * Writes of this connection that have settled, by organization (the API's writes), and those of no organization
   * (tokens): dataVersion(). Counted before the write's promise settles for its caller, so before its reply.
   */
  private readonly orgWrites = new Map<number, number>();
  private sharedWrites = 0;
  /** The last text of each version and the counts it was made of (readVersion, tokensVersion, dataVersion by organization). */
  private readonly versionTexts: { read?: VersionText; tokens?: VersionText; data: Map<number, VersionText> } = { data: new Map() };
  /** The change log of GET /v1/watch (sqlite-changes.ts), written with each commit from `recorded`. */
  changeLog!: SqliteChangeLog;
  /** The changes of the writes the batch being committed has run so far, in order: logged just before its COMMIT. */
  private recorded: RecordedChange[] = [];
  /** Commits a batch in one transaction (BEGIN IMMEDIATE), each write's outcome by index. */
  private commitBatch!: (batch: Pending[]) => Settled[];

  private constructor(
    private readonly dataDir: string,
    private readonly options: SqliteStoreOptions,
    private readonly log: (message: string) => void,
  ) {
    this.connect(openDatabase(dataDir, options));
    // Files deleted or replaced while the store is idle are seen within a second, not at the next write (/ready).
    this.watching = setInterval(() => this.keepFiles(), 1000).unref();
  }

  private connect({ db, held }: OpenDatabase): void {
    this.db = db;
    this.held = held;
    this.stmt = statements(db);
    // better-sqlite3 rolls the transaction back when this throws (unless SQLite already has: a full disk, I/O).
    this.commitBatch = db.transaction((batch: Pending[]): Settled[] => {
      // Every commit adds a link to the chain of commit ids, so that a -wal can be told to continue kb.db (sqlite-wal.ts).
      this.stmt.commitBump.run();
      const results = planNow(batch, (step) => this.answer(batch[step.index] as Pending, step));
      if (this.recorded.length > 0) this.changeLog.record(this.recorded, isoNow());
      return results;
    }).immediate;
    if (this.changeLog === undefined) this.changeLog = new SqliteChangeLog(db, (op) => this.write(op), (read) => this.reading(read));
    else this.changeLog.connect(db);
    // Another connection's data_version starts anew: every kept answer is dropped.
    this.commits++;
    this.othersVersion = undefined;
  }

  /**
   * Opens the database in dataDir, creating it (and the dir) when absent, or throws StoreOpenError leaving every
   * file untouched. An existing file is never initialised over: one that is empty, foreign, damaged, newer or
   * read-only is refused, and so is a sidecar file (-wal, -shm, -journal) that is not its own.
   */
  static open(dataDir: string, options: SqliteStoreOptions = {}): SqliteStore {
    const store = new SqliteStore(dataDir, options, options.log ?? (() => undefined));
    store.onCommit = options.onCommit;
    return store;
  }

  /** Queues a write for the next group commit; resolves with its result once the commit is on disk. */
  private write<T>(op: () => T): Promise<T> {
    return this.counted(this.enqueue(() => this.atomically(op), undefined), undefined) as Promise<T>;
  }

  /**
   * Runs a write of more than one statement in a savepoint (better-sqlite3's transaction, nested in the group commit's),
   * so that it is undone whole when it fails. A write of one statement needs none: SQLite undoes a failed statement
   * itself (the default conflict resolution, ABORT).
   */
  private atomically<T>(op: () => T): T {
    return this.db.transaction(op)();
  }

  /** Records a change for the change log, written with the commit (undone with its write when that fails). */
  private changed(change: RecordedChange): void {
    this.recorded.push(change);
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

  /**
   * The statements of one write, run inside the group commit's transaction. Each runs one writing statement, or runs
   * them `atomically`, and records its changes (`changed`) only once they are written.
   */
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
      case 'nsDelete':
        return () => {
          const ns = this.namespace(write.orgId, write.key);
          const bases = this.stmt.baseList.all(ns.id);
          if (bases.length > 0 && !write.cascade) throw failures.namespaceNotEmpty(ns.key, bases.length);
          return this.atomically(() => {
            for (const { key } of bases) this.baseDeleteNow(write.orgId, ns.key, key);
            this.stmt.nsDelete.run(ns.id);
            const deleted = { key: ns.key, description: ns.description };
            this.changed({ orgId: write.orgId, type: 'deleted', kind: 'namespace', namespace: ns.key, ...deleted });
            return deleted;
          });
        };
    }
  }

  /**
   * Keeps the store's files the ones at its names (docs/contract.md, Files and start-up): when kb.db, its -wal or -shm was
   * deleted or replaced, everything this connection committed is saved into a kb.db at its name and the store reopens
   * (sqlite-recover.ts); where it cannot be, writes fail from then on. Returns why writes cannot commit now, or
   * undefined. A few stat() calls when nothing moved.
   */
  private keepFiles(): string | undefined {
    if (this.lost !== undefined || this.closed) return this.lost;
    const gone = moved(this.db.name, this.held);
    if (gone === undefined) return undefined;
    const outcome = recoverFiles(this.db, this.dataDir, gone, this.held);
    this.log(outcome.said);
    if (outcome.kind === 'lost') {
      this.lost = outcome.said;
      return this.lost;
    }
    if (outcome.kind === 'later') return outcome.said;
    try {
      this.connect(openDatabase(this.dataDir, { ...this.options, reopening: true }));
    } catch (error) {
      this.lost = `the database could not be opened again after ${gone.what}: ${(error as Error).message}`;
      this.log(this.lost);
      return this.lost;
    }
    return undefined;
  }

  private flush(batch: Pending[]): void {
    if (batch.length === 0) return;
    if (this.keepFiles() !== undefined) return failAll(batch, failures.databaseGone());
    let results: Settled[];
    const started = performance.now();
    try {
      results = this.commitBatch(batch);
    } catch (error) {
      this.commits++;
      return failAll(batch, this.failure(error));
    } finally {
      this.recorded = [];
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
        // Undone alone when it fails (operation): its statement by SQLite, its savepoint by `atomically`.
        const recorded = this.recorded.length;
        try {
          return { ok: true, value: item.op() };
        } catch (error) {
          // SQLite ends the whole transaction itself on some errors (a full disk, I/O): then the batch fails.
          if (!this.db.inTransaction) throw error;
          this.recorded.length = recorded;
          return { ok: false, error: this.failure(error) };
        }
      }
      case 'keep':
        // The reply is kept in the same transaction as the write: both are committed, or neither.
        this.stmt.idempotencyPut.run(capture.orgId, capture.key, capture.fingerprint, step.reply.status, step.reply.body, isoNow());
        return undefined;
    }
  }

  /**
   * Not ready once closed, while the store's files cannot be kept (keepFiles), or while writes cannot commit: another
   * process has held SQLite's write lock for longer than a write waits for it (the busy timeout).
   */
  async unready(): Promise<string | undefined> {
    if (this.closed) return 'the store is closed';
    const files = this.keepFiles();
    if (files !== undefined) return files;
    if (this.writeLockFree()) {
      this.lockedSince = undefined;
      return undefined;
    }
    const now = Date.now();
    this.lockedSince ??= now;
    const waited = now - this.lockedSince;
    return waited >= this.busyTimeoutMs() ? `another process has held the database's write lock for ${Math.round(waited / 1000)} s` : undefined;
  }

  private busyTimeoutMs(): number {
    return this.options.busyTimeoutMs ?? 5000;
  }

  /** Whether a write could take SQLite's write lock right now, without waiting (a write of this process never waits: they run one at a time). */
  private writeLockFree(): boolean {
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      this.db.exec('ROLLBACK');
      return true;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      if (sqliteCode(error) === 'SQLITE_BUSY') return false;
      throw error;
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs()}`);
    }
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
      this.othersVersion = this.reading(() => this.stmt.dataVersion.get() as number);
      setImmediate(() => (this.othersVersion = undefined));
    }
    return this.othersVersion;
  }

  async authenticate(tokenHash: Buffer): Promise<Principal | null> {
    const row = this.reading(() => this.stmt.authenticate.get(tokenHash));
    return row
      ? { orgId: row.org_id, org: row.org, tokenId: row.id, scope: row.scope, expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at) }
      : null;
  }

  createToken(org: string, id: string, tokenHash: Buffer, options: TokenOptions = {}): Promise<TokenInfo> {
    return this.write(() => {
      try {
        return this.insertToken(org, id, tokenHash, options);
      } catch (error) {
        throw isUniqueViolation(error) && options.name !== undefined ? failures.tokenNameTaken(options.name) : error;
      }
    });
  }

  createFirstToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo | null> {
    // The write transaction is BEGIN IMMEDIATE, so another process cannot add a token between the check and the insert.
    return this.write(() => (this.stmt.tokenAny.get() ? null : this.insertToken(org, id, tokenHash)));
  }

  private insertToken(org: string, id: string, tokenHash: Buffer, options: TokenOptions = {}): TokenInfo {
    const createdAt = isoNow();
    this.stmt.orgInsert.run(org, createdAt);
    const orgRow = this.stmt.orgId.get(org) as { id: number };
    const { name = null, scope = 'full', expiresAt = null } = options;
    this.stmt.tokenInsert.run(id, orgRow.id, tokenHash, createdAt, name, scope, expiresAt);
    return { id, name, org, scope, createdAt, expiresAt, lastUsedAt: null, revokedAt: null };
  }

  async listTokens(): Promise<TokenInfo[]> {
    return this.reading(() => this.stmt.tokenList.all()).map(tokenInfo);
  }

  revokeToken(id: string): Promise<TokenInfo | null> {
    return this.write(() => {
      this.stmt.tokenRevoke.run(isoNow(), id);
      const row = this.stmt.tokenGet.get(id);
      return row ? tokenInfo(row) : null;
    });
  }

  /** Not counted as a write of tokens (no version moves): the caches of who a token is stay. */
  async markTokensUsed(ids: readonly string[], minute: string): Promise<void> {
    await this.enqueue(
      () =>
        this.atomically(() => {
          for (const id of ids) this.stmt.tokenUsed.run(minute, id, minute);
        }),
      undefined,
    );
  }

  async nsList(orgId: number): Promise<Namespace[]> {
    return this.reading(() => this.stmt.nsList.all(orgId)).map(({ key, description }) => ({ key, description }));
  }

  nsCreate(orgId: number, ns: Namespace): Promise<Namespace> {
    return this.perform({ op: 'nsCreate', orgId, ns }) as Promise<Namespace>;
  }

  private nsCreateNow(orgId: number, ns: Namespace): Namespace {
    const at = isoNow();
    try {
      this.stmt.nsInsert.run(orgId, ns.key, ns.description, at, at);
    } catch (error) {
      if (isUniqueViolation(error)) throw failures.namespaceExists(ns.key);
      throw error;
    }
    this.changed({ orgId, type: 'created', kind: 'namespace', namespace: ns.key, key: ns.key, description: ns.description });
    return { key: ns.key, description: ns.description };
  }

  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace> {
    return this.perform({ op: 'nsUpdate', orgId, key, patch }) as Promise<Namespace>;
  }

  private nsUpdateNow(orgId: number, key: string, patch: DescriptionPatch): Namespace {
    const row = this.namespace(orgId, key);
    if (patch.description !== undefined) {
      this.stmt.nsSetDescription.run(patch.description, isoNow(), row.id);
      row.description = patch.description;
      this.changed({ orgId, type: 'updated', kind: 'namespace', namespace: row.key, key: row.key, description: row.description });
    }
    return { key: row.key, description: row.description };
  }

  async baseList(orgId: number, namespace: string): Promise<Base[]> {
    return this.reading(() => {
      const ns = this.namespace(orgId, namespace);
      return this.stmt.baseList.all(ns.id).map(({ key, description }) => ({ namespace: ns.key, key, description }));
    });
  }

  async baseListAll(orgId: number): Promise<Base[]> {
    return this.reading(() => this.stmt.baseListAll.all(orgId));
  }

  baseCreate(orgId: number, base: Base): Promise<Base> {
    return this.perform({ op: 'baseCreate', orgId, base }) as Promise<Base>;
  }

  /** Creates the base's namespace first when there is none (docs/contract.md): two statements, then, in one savepoint. */
  private baseCreateNow(orgId: number, base: Base): Base {
    const at = isoNow();
    const ns = this.stmt.nsGet.get(orgId, base.namespace);
    if (ns !== undefined) return this.baseInsertNow(orgId, ns.id, base, at);
    return this.atomically(() => {
      // None can have been created since the look above: the transaction holds the write lock.
      const { lastInsertRowid } = this.stmt.nsInsert.run(orgId, base.namespace, null, at, at);
      this.changed({ orgId, type: 'created', kind: 'namespace', namespace: base.namespace, key: base.namespace, description: null });
      return this.baseInsertNow(orgId, Number(lastInsertRowid), base, at);
    });
  }

  private baseInsertNow(orgId: number, namespaceId: number, base: Base, at: string): Base {
    try {
      this.stmt.baseInsert.run(namespaceId, base.key, base.description, at, at);
    } catch (error) {
      if (isUniqueViolation(error)) throw failures.baseExists(base.namespace, base.key);
      throw error;
    }
    this.changed({ orgId, type: 'created', kind: 'base', ...base });
    return { namespace: base.namespace, key: base.key, description: base.description };
  }

  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base> {
    return this.perform({ op: 'baseUpdate', orgId, namespace, key, patch }) as Promise<Base>;
  }

  private baseUpdateNow(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Base {
    const row = this.base(orgId, namespace, key);
    if (patch.description !== undefined) {
      this.stmt.baseSetDescription.run(patch.description, isoNow(), row.id);
      row.description = patch.description;
      this.changed({ orgId, type: 'updated', kind: 'base', namespace, key: row.key, description: row.description });
    }
    return { namespace, key: row.key, description: row.description };
  }

  baseDelete(orgId: number, namespace: string, key: string): Promise<Base> {
    return this.perform({ op: 'baseDelete', orgId, namespace, key }) as Promise<Base>;
  }

  private baseDeleteNow(orgId: number, namespace: string, key: string): Base {
    const row = this.base(orgId, namespace, key);
    this.stmt.baseDelete.run(row.id);
    this.changed({ orgId, type: 'deleted', kind: 'base', namespace, key: row.key, description: row.description });
    return { namespace, key: row.key, description: row.description };
  }

  async idempotencyGet(orgId: number, key: string): Promise<IdempotencyRecord | null> {
    return this.reading(() => this.keptReply(orgId, key));
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
    // Files deleted or replaced since the last write or look (keepFiles) are put right first: closing a kb.db no longer
    // at its name would take its last writes with it.
    this.keepFiles();
    this.flush(this.queue.takeAll());
    this.closed = true;
    clearInterval(this.watching);
    closeMarkingClean(this.db);
  }

  /** Reads after close() fail as writes do (503), not with better-sqlite3's "connection is not open" (500). */
  private ensureOpen(): void {
    if (this.closed) throw failures.shuttingDown();
    // Its files could not be reopened after an accident (keepFiles): 503 until a restart, as writes are.
    if (!this.db.open) throw failures.databaseGone();
  }

  /** A read on the connection: a storage fault answers 503, as a write's does, and the log says what failed. */
  private reading<T>(read: () => T): T {
    this.ensureOpen();
    try {
      return read();
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** storageFailure, logging the cause of a storage fault (the reply does not carry it). */
  private failure(error: unknown): unknown {
    const failure = storageFailure(error);
    if (failure !== error && isFault(sqliteCode(error))) this.log(`the database failed: ${(error as Error).message} (${sqliteCode(error)})`);
    return failure;
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
  return {
    id: row.id,
    name: row.name,
    org: row.org,
    scope: row.scope,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
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
  return isFault(code) ? failures.storageFault() : error;
}

/** SQLite's codes of a storage fault: an I/O error, a damaged or foreign file (a -shm written over: the accident model). */
function isFault(code: string | undefined): boolean {
  return code !== undefined && /^SQLITE_(IOERR|CORRUPT|NOTADB|CANTOPEN|PROTOCOL|READONLY)/.test(code);
}

