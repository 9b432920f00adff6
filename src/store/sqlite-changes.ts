import type Database from 'better-sqlite3';
import type { Base, Namespace } from '../api/schemas.js';
import { isoFormatter } from './clock.js';
import { type Change, CHANGES_KEPT, CHANGES_RETENTION_MS, changeOf, type ChangeLog, type ChangeRead, type ChangeRow, CommitListeners, type Snapshot } from './changes.js';

const keptSince = isoFormatter();

/** A change a write of the store made, for the log: the object as it is now, or as it was (deleted). */
export interface RecordedChange {
  orgId: number;
  type: Change['type'];
  kind: Change['kind'];
  namespace: string;
  key: string;
  description: string | null;
}

/**
 * The SQLite engine's change log (changes.ts). The store records the changes of a group commit's writes as they run,
 * and `record` writes them in that commit's transaction, just before its COMMIT: a write undone, or a batch whose
 * commit fails, logs nothing. Each organization's head moves once a commit, not once a change, which is most of what
 * the log costs a write (docs/performance.md, Durable writes). Every read is one read transaction, so a purge or
 * another process's commit cannot fall between its statements. `write` runs statements in the store's next group
 * commit (the purge is a write like any other).
 */
export class SqliteChangeLog implements ChangeLog {
  private readonly listeners = new CommitListeners();
  private stmt!: ReturnType<typeof statements>;
  private readTx!: (orgId: number, after: number, limit: number) => ChangeRead;
  private snapshotTx!: (orgId: number) => Snapshot;

  constructor(
    db: Database.Database,
    private readonly write: <T>(op: () => T) => Promise<T>,
    /** Runs a read as the store does its own: a storage fault is the API's 503, logged. */
    private readonly reading: <T>(read: () => T) => T,
  ) {
    this.connect(db);
  }

  /** Reads through `db` from now on: the store's connection, opened again after its files moved (sqlite-recover.ts). */
  connect(db: Database.Database): void {
    this.stmt = statements(db);
    const read = db.transaction((orgId: number, after: number, limit: number): ChangeRead => {
      const head = this.stmt.head.get(orgId) ?? { seq: 0, purged: 0 };
      if (after < head.purged || after > head.seq) return { gone: true };
      return { gone: false, changes: this.stmt.after.all(orgId, after, limit).map(changeOf) };
    });
    const snapshot = db.transaction((orgId: number): Snapshot => ({
      seq: this.stmt.head.get(orgId)?.seq ?? 0,
      namespaces: this.stmt.namespaces.all(orgId),
      bases: this.stmt.bases.all(orgId),
    }));
    this.readTx = (orgId, after, limit) => read.deferred(orgId, after, limit);
    this.snapshotTx = (orgId) => snapshot.deferred(orgId);
  }


  /**
   * Writes `changes` (in the order their writes ran) inside the store's write transaction, numbered after each
   * organization's head, `at` the commit's time.
   */
  record(changes: readonly RecordedChange[], at: string): void {
    let from = 0;
    while (from < changes.length) {
      // A commit's changes are most often of one organization: each run of one is numbered at once.
      const { orgId } = changes[from] as RecordedChange;
      let to = from + 1;
      while (to < changes.length && (changes[to] as RecordedChange).orgId === orgId) to++;
      let seq = (this.stmt.headAdd.get(orgId, to - from) as number) - (to - from);
      for (let i = from; i < to; i++) {
        const { type, kind, namespace, key, description } = changes[i] as RecordedChange;
        this.stmt.insert.run(orgId, ++seq, type, kind, namespace, key, description, at);
      }
      from = to;
    }
  }

  /** Told by the store after each commit of its own (this engine learns of no other process's commits). */
  committed(): void {
    this.listeners.tell(undefined);
  }

  async head(orgId: number): Promise<number> {
    return this.reading(() => this.stmt.head.get(orgId)?.seq ?? 0);
  }

  async read(orgId: number, after: number, limit: number): Promise<ChangeRead> {
    return this.reading(() => this.readTx(orgId, after, limit));
  }

  async snapshot(orgId: number): Promise<Snapshot> {
    return this.reading(() => this.snapshotTx(orgId));
  }

  subscribe(listener: (orgId: number | undefined) => void): () => void {
    return this.listeners.add(listener);
  }

  purge(): Promise<number> {
    const before = keptSince(Date.now() - CHANGES_RETENTION_MS);
    return this.write(() => {
      this.stmt.purgeMark.run(CHANGES_KEPT, before);
      return this.stmt.purgeDelete.run().changes;
    });
  }
}

/** The statements of one connection. */
function statements(db: Database.Database) {
  return {
    head: db.prepare<[number], { seq: number; purged: number }>('SELECT seq, purged FROM change_heads WHERE org_id = ?'),
    /** Moves the organization's head by n changes; returns the new head. */
    headAdd: db
      .prepare<[number, number], number>(
        'INSERT INTO change_heads (org_id, seq) VALUES (?, ?) ON CONFLICT (org_id) DO UPDATE SET seq = seq + excluded.seq RETURNING seq',
      )
      .pluck(),
    insert: db.prepare<[number, number, string, string, string, string, string | null, string]>(
      'INSERT INTO changes (org_id, seq, type, kind, namespace, key, description, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    after: db.prepare<[number, number, number], ChangeRow>(
      'SELECT seq, type, kind, namespace, key, description FROM changes WHERE org_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    namespaces: db.prepare<[number], Namespace>('SELECT key, description FROM namespaces WHERE org_id = ? ORDER BY key'),
    bases: db.prepare<[number], Base>(
      `SELECT n.key AS namespace, b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
       WHERE n.org_id = ? ORDER BY n.key, b.key`,
    ),
    // The last change of each organization that may go: past its CHANGES_KEPT last and older than the retention.
    purgeMark: db.prepare<[number, string]>(
      `UPDATE change_heads SET purged = cut.seq FROM (
         SELECT c.org_id, max(c.seq) AS seq FROM changes c JOIN change_heads h ON h.org_id = c.org_id
         WHERE c.seq <= h.seq - ? AND c.at < ? GROUP BY c.org_id
       ) cut WHERE change_heads.org_id = cut.org_id AND cut.seq > change_heads.purged`,
    ),
    purgeDelete: db.prepare(
      'DELETE FROM changes WHERE seq <= (SELECT h.purged FROM change_heads h WHERE h.org_id = changes.org_id)',
    ),
  };
}
