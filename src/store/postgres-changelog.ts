import type pg from 'pg';
import { CHANGES_KEPT, CHANGES_RETENTION_MS, changeOf, type ChangeLog, type ChangeRead, type ChangeRow, type CommitListeners, type Snapshot } from './changes.js';
import { type Client, decode } from './postgres-sql.js';

interface StoredChange extends Omit<ChangeRow, 'description'> {
  description: Buffer | null;
}

/** What the PostgreSQL change log uses of its store: a read on a pool connection, and a transaction. */
export interface ChangeLogAccess {
  read<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<R[]>;
  transaction<T>(fn: (client: Client) => Promise<T>): Promise<T>;
  /** Told of every commit that changed an organization's data, this replica's own and (LISTEN) every other's. */
  commits: CommitListeners;
}

/**
 * The PostgreSQL engine's change log (changes.ts): the triggers of postgres-migrations.ts write and number it as each
 * transaction commits; this reads it. A replica hears of other replicas' commits through LISTEN kb_changes
 * (postgres-changes.ts), and of its own as they settle.
 */
export class PostgresChangeLog implements ChangeLog {
  constructor(private readonly access: ChangeLogAccess) {}

  async head(orgId: number): Promise<number> {
    const rows = await this.access.read<{ seq: number }>({ name: 'change_head', text: 'SELECT seq FROM change_heads WHERE org_id = $1', values: [orgId] });
    return rows[0]?.seq ?? 0;
  }

  /** One statement, so one snapshot: the purge mark and the changes read agree. */
  async read(orgId: number, after: number, limit: number): Promise<ChangeRead> {
    const rows = await this.access.read<{ head: number | null; purged: number | null } & (StoredChange | { [K in keyof StoredChange]: null })>({
      name: 'changes_after',
      text: `SELECT h.seq AS head, h.purged, c.seq, c.type, c.kind, c.namespace, c.key, c.description
             FROM (SELECT $1::int8 AS org_id) o
             LEFT JOIN change_heads h ON h.org_id = o.org_id
             LEFT JOIN LATERAL (
               SELECT seq, type, kind, namespace, key, description FROM changes
               WHERE org_id = o.org_id AND seq > $2 ORDER BY seq LIMIT $3
             ) c ON true
             ORDER BY c.seq`,
      values: [orgId, after, limit],
    });
    const first = rows[0];
    const head = first?.head ?? 0;
    const purged = first?.purged ?? 0;
    if (after < purged || after > head) return { gone: true };
    const changes = [];
    for (const row of rows) {
      if (row.seq === null) continue;
      changes.push(changeOf({ ...row, description: decode(row.description) }));
    }
    return { gone: false, changes };
  }

  snapshot(orgId: number): Promise<Snapshot> {
    return this.access.transaction(async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const head = await client.query<{ seq: number }>('SELECT seq FROM change_heads WHERE org_id = $1', [orgId]);
      const namespaces = await client.query<{ key: string; description: Buffer | null }>(
        'SELECT key, description FROM namespaces WHERE org_id = $1 ORDER BY key',
        [orgId],
      );
      const bases = await client.query<{ namespace: string; key: string; description: Buffer | null }>(
        `SELECT n.key AS namespace, b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
         WHERE n.org_id = $1 ORDER BY n.key, b.key`,
        [orgId],
      );
      return {
        seq: head.rows[0]?.seq ?? 0,
        namespaces: namespaces.rows.map((row) => ({ key: row.key, description: decode(row.description) })),
        bases: bases.rows.map((row) => ({ namespace: row.namespace, key: row.key, description: decode(row.description) })),
      };
    });
  }

  subscribe(listener: (orgId: number | undefined) => void): () => void {
    return this.access.commits.add(listener);
  }

  /** Marks, per organization, the last change that may go (past its CHANGES_KEPT last and older than the retention), and deletes up to it. */
  async purge(): Promise<number> {
    const rows = await this.access.read<{ deleted: number }>({
      text: `WITH cut AS (
               SELECT c.org_id, max(c.seq) AS seq FROM changes c JOIN change_heads h ON h.org_id = c.org_id
               WHERE c.seq <= h.seq - $1 AND c.at < now() - $2::float8 * interval '1 millisecond' GROUP BY c.org_id
             ), marked AS (
               UPDATE change_heads h SET purged = cut.seq FROM cut WHERE h.org_id = cut.org_id AND cut.seq > h.purged
               RETURNING h.org_id, h.purged
             ), deleted AS (
               DELETE FROM changes c USING marked WHERE c.org_id = marked.org_id AND c.seq <= marked.purged RETURNING 1
             )
             SELECT count(*)::int8 AS deleted FROM deleted`,
      values: [CHANGES_KEPT, CHANGES_RETENTION_MS],
    });
    return rows[0]?.deleted ?? 0;
  }
}
