import type Database from 'better-sqlite3';
import type { Base } from '../api/schemas.js';
import { COMMIT_BUMP } from './migrations.js';
import type { TokenScope } from './store.js';

/** The SQLite engine's statements (sqlite.ts), prepared once for each connection it opens. */

export interface NamespaceRow { id: number; key: string; description: string | null }
export interface BaseRow { key: string; description: string | null }
export interface TokenRow {
  id: string;
  name: string | null;
  org: string;
  scope: TokenScope;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const TOKEN_COLUMNS = 't.id, t.name, o.name AS org, t.scope, t.created_at, t.expires_at, t.last_used_at, t.revoked_at';

/** The statements of one connection, prepared once. */
export function statements(db: Database.Database) {
  return {
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    /** Run first in every write transaction (docs/contract.md, Files and start-up: whose -wal is it?). */
    commitBump: db.prepare(COMMIT_BUMP),
    authenticate: db.prepare<[Buffer], { org_id: number; org: string; id: string; scope: TokenScope; expires_at: string | null }>(
      `SELECT t.id, t.org_id, o.name AS org, t.scope, t.expires_at FROM tokens t JOIN orgs o ON o.id = t.org_id
       WHERE t.hash = ? AND t.revoked_at IS NULL`,
    ),
    orgInsert: db.prepare<[string, string]>('INSERT INTO orgs (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING'),
    orgId: db.prepare<[string], { id: number }>('SELECT id FROM orgs WHERE name = ?'),
    tokenInsert: db.prepare<[string, number, Buffer, string, string | null, TokenScope, string | null]>(
      'INSERT INTO tokens (id, org_id, hash, created_at, name, scope, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    tokenAny: db.prepare<[], { id: string }>('SELECT id FROM tokens LIMIT 1'),
    tokenList: db.prepare<[], TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens t JOIN orgs o ON o.id = t.org_id ORDER BY t.created_at, t.id`),
    tokenGet: db.prepare<[string], TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens t JOIN orgs o ON o.id = t.org_id WHERE t.id = ?`),
    tokenRevoke: db.prepare<[string, string]>('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    tokenUsed: db.prepare<[string, string, string]>(
      'UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
    ),
    nsList: db.prepare<[number], NamespaceRow>(
      'SELECT id, key, description FROM namespaces WHERE org_id = ? ORDER BY key',
    ),
    nsGet: db.prepare<[number, string], NamespaceRow>(
      'SELECT id, key, description FROM namespaces WHERE org_id = ? AND key = ?',
    ),
    nsInsert: db.prepare<[number, string, string | null, string, string]>(
      'INSERT INTO namespaces (org_id, key, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
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
    nsDelete: db.prepare<[number]>('DELETE FROM namespaces WHERE id = ?'),
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
