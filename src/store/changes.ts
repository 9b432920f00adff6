import type { Base, Namespace } from '../api/schemas.js';

// The change log behind GET /v1/watch (docs/contract.md, Live changes): every change of namespaces and bases, written
// in the write's own transaction, numbered 1, 2, 3… per organization in commit order. On PostgreSQL the schema's
// triggers write it (postgres-migrations.ts); the SQLite store records each write's changes itself and writes them with
// the commit (sqlite-changes.ts), which costs a write less: a new SQLite write op records its changes (`changed`).

/** One committed change: its number in the organization (the cursor), and the object as the API returns it. */
export type Change = { seq: number; type: 'created' | 'updated' | 'deleted' } & (
  | { kind: 'namespace'; object: Namespace }
  | { kind: 'base'; object: Base }
);

/** What a read of the log found: the changes after a cursor, or 'gone' when the cursor is not one the log still has. */
export type ChangeRead = { gone: false; changes: Change[] } | { gone: true };

/** The organization's objects and the cursor of the last change they include: one consistent view. */
export interface Snapshot {
  seq: number;
  namespaces: Namespace[];
  bases: Base[];
}

/**
 * Changes of the last 24 h, and the last 10,000 of each organization, whatever their age, are always kept
 * (docs/contract.md, Live changes); older ones are forgotten by purge().
 */
export const CHANGES_KEPT = 10_000;
export const CHANGES_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface ChangeLog {
  /** The cursor of the organization's last committed change (0 before any). */
  head(orgId: number): Promise<number>;
  /**
   * The organization's changes after cursor `after`, oldest first, at most `limit`; gone when `after` is older than
   * the oldest change kept, or later than the last one (a cursor of another database).
   */
  read(orgId: number, after: number, limit: number): Promise<ChangeRead>;
  /** The organization's namespaces and bases with the cursor they are current at (?initial=true). */
  snapshot(orgId: number): Promise<Snapshot>;
  /**
   * Calls `listener` after each commit that may have added changes, of this process or (PostgreSQL) another replica:
   * with the organization when it is known, undefined when it may be any. Returns the unsubscribe.
   */
  subscribe(listener: (orgId: number | undefined) => void): () => void;
  /** Forgets changes past the retention; resolves how many. */
  purge(): Promise<number>;
}

/** A change as both engines read it from their log (the description decoded): its cursor, and the object's fields. */
export interface ChangeRow {
  seq: number;
  type: string;
  kind: string;
  namespace: string;
  key: string;
  description: string | null;
}

export function changeOf(row: ChangeRow): Change {
  const type = row.type as Change['type'];
  return row.kind === 'namespace'
    ? { seq: row.seq, type, kind: 'namespace', object: { key: row.key, description: row.description } }
    : { seq: row.seq, type, kind: 'base', object: { namespace: row.namespace, key: row.key, description: row.description } };
}

/** Listeners of commits, told in turn; one that throws does not keep the others from hearing. */
export class CommitListeners {
  private readonly listeners = new Set<(orgId: number | undefined) => void>();

  add(listener: (orgId: number | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  tell(orgId: number | undefined): void {
    for (const listener of this.listeners) {
      try {
        listener(orgId);
      } catch {
        // A listener's failure is its own (the watch hub logs its own); the commit is done.
      }
    }
  }
}
