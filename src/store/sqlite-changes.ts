import type Database from 'better-sqlite3';
import type { Base, Namespace } from '../api/schemas.js';
import { isoFormatter } from './clock.js';
import { type Change, CHANGES_KEPT, CHANGES_RETENTION_MS, changeOf, type ChangeLog, type ChangeRead, CommitListeners, type Snapshot } from './changes.js';

const keptSince = isoFormatter();

/** A change as a row of the log holds it, in its JSON array: [type, kind, namespace, key, description]. */
type Entry = [type: string, kind: string, namespace: string, key: string, description: string | null];

/** A row of the log as read: the cursor of its last change, how many it holds, and them (JSON, Entry[]). */
interface LogRow {
  last: number;
  count: number;
  changes: string;
}

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
 * commit fails, logs nothing. A commit writes one row of `change_log` for each organization it changed (a JSON array
 * of its changes) and moves its head once: a row a change, in a table keyed by organization and cursor, cost a write
 * about twice as many pages (docs/performance.md, Durable writes). A row's id is the organization's id times 2^40 plus
 * the cursor of its last change, so an organization's rows are one range of ids, appended in cursor order; ids are
 * worked out in SQL only (past 2^53 for an organization id of 8192 or more). Every read is one read transaction, so a
 * purge or another process's commit cannot fall between its statements. `write` runs statements in the store's next
 * group commit (the purge is a write like any other); it forgets whole rows.
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
      const changes: Change[] = [];
      if (limit <= 0) return { gone: false, changes };
      // Rows from the one holding the change after `after`; leaving the loop ends the statement.
      for (const row of this.stmt.after.iterate({ org: orgId, after })) {
        let seq = row.last - row.count;
        for (const [type, kind, namespace, key, description] of JSON.parse(row.changes) as Entry[]) {
          if (++seq <= after) continue;
          changes.push(changeOf({ seq, type, kind, namespace, key, description }));
          if (changes.length === limit) return { gone: false, changes };
        }
      }
      return { gone: false, changes };
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
      // A commit's changes are most often of one organization: each run of one is a row (a commit may have two of it).
      const { orgId } = changes[from] as RecordedChange;
      const entries: Entry[] = [];
      let to = from;
      for (; to < changes.length && (changes[to] as RecordedChange).orgId === orgId; to++) {
        const { type, kind, namespace, key, description } = changes[to] as RecordedChange;
        entries.push([type, kind, namespace, key, description]);
      }
      const last = this.stmt.headAdd.get(orgId, entries.length) as number;
      this.stmt.insert.run(orgId, last, entries.length, at, JSON.stringify(entries));
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
    insert: db.prepare<[number, number, number, string, string]>(
      'INSERT INTO change_log (id, count, at, changes) VALUES (? * 1099511627776 + ?, ?, ?, ?)',
    ),
    after: db.prepare<[{ org: number; after: number }], LogRow>(
      `SELECT id - @org * 1099511627776 AS last, count, changes FROM change_log
       WHERE id > @org * 1099511627776 + @after AND id < (@org + 1) * 1099511627776 ORDER BY id`,
    ),
    namespaces: db.prepare<[number], Namespace>('SELECT key, description FROM namespaces WHERE org_id = ? ORDER BY key'),
    bases: db.prepare<[number], Base>(
      `SELECT n.key AS namespace, b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
       WHERE n.org_id = ? ORDER BY n.key, b.key`,
    ),
    // The last change of each organization that may go, with its row: a row whose changes are all past its
    // CHANGES_KEPT last, and older than the retention.
    purgeMark: db.prepare<[number, string]>(
      `UPDATE change_heads SET purged = cut.seq FROM (
         SELECT h.org_id, max(c.id) - h.org_id * 1099511627776 AS seq FROM change_heads h JOIN change_log c
           ON c.id > h.org_id * 1099511627776 AND c.id <= h.org_id * 1099511627776 + h.seq - ?
         WHERE c.at < ? GROUP BY h.org_id
       ) cut WHERE change_heads.org_id = cut.org_id AND cut.seq > change_heads.purged`,
    ),
    purgeDelete: db.prepare(
      `DELETE FROM change_log WHERE id IN (
         SELECT c.id FROM change_heads h JOIN change_log c
           ON c.id > h.org_id * 1099511627776 AND c.id <= h.org_id * 1099511627776 + h.purged
       )`,
    ),
  };
}
