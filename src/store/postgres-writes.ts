import type { Base, Namespace } from '../api/schemas.js';
import { failures } from './failures.js';
import type { BaseRow } from './postgres-batch.js';
import type { KbApiError } from '../api/errors.js';
import { decode, encode, isUniqueViolation, type Queryable, sql, type WriteStep } from './postgres-sql.js';
import type { DescriptionPatch, Write } from './store.js';

/** A namespace or base as a statement returns it. */
export interface DescribedRow {
  key: string;
  description: Buffer | null;
}

// The PostgreSQL engine's writes: the statements of each, run inside the group commit's transaction, on the step of
// the batch that it is (postgres-batch.ts). SQLite's are in sqlite.ts, `operation()`.

/** A write's statements, and for a base create the row its batch may insert with the others in one statement. */
export function operationOf(write: Write): { op: (client: WriteStep) => Promise<unknown>; row?: BaseRow } {
  switch (write.op) {
    case 'nsCreate':
      return { op: (client) => nsCreate(client, write.orgId, write.ns) };
    case 'nsUpdate':
      return { op: (client) => nsUpdate(client, write.orgId, write.key, write.patch) };
    case 'baseCreate':
      return { op: (client) => baseCreate(client, write.orgId, write.base), row: { orgId: write.orgId, base: write.base } };
    case 'baseUpdate':
      return { op: (client) => baseUpdate(client, write.orgId, write.namespace, write.key, write.patch) };
    case 'baseDelete':
      return { op: (client) => baseDelete(client, write.orgId, write.namespace, write.key) };
    case 'nsDelete':
      return { op: (client) => nsDelete(client, write.orgId, write.key, write.cascade) };
  }
}

async function nsCreate(client: WriteStep, orgId: number, ns: Namespace): Promise<Namespace> {
  try {
    await client.inline(
      `INSERT INTO namespaces (org_id, key, description, created_at, updated_at)
       VALUES (${sql.integer(orgId)}, ${sql.text(ns.key)}, ${sql.bytes(encode(ns.description))}, now(), now())`,
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw failures.namespaceExists(ns.key);
    throw error;
  }
  return { key: ns.key, description: ns.description };
}

async function nsUpdate(client: WriteStep, orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace> {
  const { rows } =
    patch.description === undefined
      ? await client.query<DescribedRow>('SELECT key, description FROM namespaces WHERE org_id = $1 AND key = $2', [orgId, key])
      : await client.query<DescribedRow>(
          'UPDATE namespaces SET description = $3, updated_at = now() WHERE org_id = $1 AND key = $2 RETURNING key, description',
          [orgId, key, encode(patch.description)],
        );
  const row = rows[0];
  if (!row) throw failures.namespaceNotFound(key);
  return { key: row.key, description: decode(row.description) };
}

async function nsDelete(client: WriteStep, orgId: number, key: string, cascade: boolean): Promise<Namespace> {
  // Locked, so that a base created meanwhile into it waits for this write (its foreign key check), and none is missed.
  const { rows } = await client.query<DescribedRow & { id: string }>(
    'SELECT id, key, description FROM namespaces WHERE org_id = $1 AND key = $2 FOR UPDATE',
    [orgId, key],
  );
  const row = rows[0];
  if (!row) throw failures.namespaceNotFound(key);
  if (cascade) await client.query('DELETE FROM bases WHERE namespace_id = $1', [row.id]);
  else {
    const held = await client.query<{ count: string }>('SELECT count(*) FROM bases WHERE namespace_id = $1', [row.id]);
    const bases = Number(held.rows[0]?.count ?? 0);
    if (bases > 0) throw failures.namespaceNotEmpty(row.key, bases);
  }
  await client.query('DELETE FROM namespaces WHERE id = $1', [row.id]);
  return { key: row.key, description: decode(row.description) };
}

async function baseCreate(client: WriteStep, orgId: number, base: Base): Promise<Base> {
  const insert = () =>
    client.inline(
      `INSERT INTO bases (namespace_id, key, description, created_at, updated_at)
       SELECT id, ${sql.text(base.key)}, ${sql.bytes(encode(base.description))}, now(), now()
       FROM namespaces WHERE org_id = ${sql.integer(orgId)} AND key = ${sql.text(base.namespace)}`,
    );
  try {
    // Most bases go into a namespace that exists: one statement. Otherwise the namespace is created first, and the
    // base inserted again by a statement of its own, which sees a namespace a concurrent creator committed while
    // the first waited.
    if ((await insert()).rowCount === 0) {
      await client.query({
        name: 'ns_ensure',
        text: `INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES ($1, $2, NULL, now(), now())
               ON CONFLICT (org_id, key) DO NOTHING`,
        values: [orgId, base.namespace],
      });
      await insert();
    }
  } catch (error) {
    if (isUniqueViolation(error)) throw failures.baseExists(base.namespace, base.key);
    throw error;
  }
  return { namespace: base.namespace, key: base.key, description: base.description };
}

async function baseUpdate(client: WriteStep, orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base> {
  const { rows } =
    patch.description === undefined
      ? await client.query<DescribedRow>(
          `SELECT b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
           WHERE n.org_id = $1 AND n.key = $2 AND b.key = $3`,
          [orgId, namespace, key],
        )
      : await client.query<DescribedRow>(
          `UPDATE bases b SET description = $4, updated_at = now() FROM namespaces n
           WHERE n.id = b.namespace_id AND n.org_id = $1 AND n.key = $2 AND b.key = $3 RETURNING b.key, b.description`,
          [orgId, namespace, key, encode(patch.description)],
        );
  const row = rows[0];
  if (!row) throw await baseNotFound(client, orgId, namespace, key);
  return { namespace, key: row.key, description: decode(row.description) };
}

async function baseDelete(client: WriteStep, orgId: number, namespace: string, key: string): Promise<Base> {
  const { rows } = await client.query<DescribedRow>(
    `DELETE FROM bases b USING namespaces n
     WHERE n.id = b.namespace_id AND n.org_id = $1 AND n.key = $2 AND b.key = $3 RETURNING b.key, b.description`,
    [orgId, namespace, key],
  );
  const row = rows[0];
  if (!row) throw await baseNotFound(client, orgId, namespace, key);
  return { namespace, key: row.key, description: decode(row.description) };
}

/** The not_found of a base write that matched no row: the namespace's when it is missing, else the base's. */
async function baseNotFound(client: Queryable, orgId: number, namespace: string, key: string): Promise<KbApiError> {
  const { rows } = await client.query('SELECT 1 FROM namespaces WHERE org_id = $1 AND key = $2', [orgId, namespace]);
  return rows.length === 0 ? failures.namespaceNotFound(namespace) : failures.baseNotFound(namespace, key);
}
