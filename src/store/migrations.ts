import type Database from 'better-sqlite3';
import { StoreOpenError } from './errors.js';

/**
 * The schema, one migration per version. PRAGMA user_version holds the number of migrations applied;
 * a database with a larger number was written by a newer kb and is refused.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orgs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    org_id INTEGER NOT NULL REFERENCES orgs(id),
    hash BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  ) STRICT;

  CREATE TABLE namespaces (
    id INTEGER PRIMARY KEY,
    org_id INTEGER NOT NULL REFERENCES orgs(id),
    key TEXT NOT NULL,
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, key)
  ) STRICT;

  CREATE TABLE bases (
    id INTEGER PRIMARY KEY,
    namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
    key TEXT NOT NULL,
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (namespace_id, key)
  ) STRICT;
  `,
  `
  CREATE TABLE idempotency (
    org_id INTEGER NOT NULL REFERENCES orgs(id),
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, key)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX idempotency_created_at ON idempotency (created_at);
  `,
  // Which database this is, and how many write transactions it has committed: every write transaction bumps the
  // generation, so each one written to the -wal carries this row's page. A -wal is replayed onto kb.db only when it
  // keeps kb.db's lineage and does not take its generation back (docs/contract.md, Files and start-up); a backup's copy gets a
  // lineage of its own.
  `
  CREATE TABLE meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    lineage BLOB NOT NULL,
    generation INTEGER NOT NULL
  ) STRICT;
  INSERT INTO meta (id, lineage, generation) VALUES (1, randomblob(16), 0);
  `,
  // The chain of commits (sqlite-wal.ts): every write transaction gives the row a new random commit_id and keeps the one
  // before as prev_id, so a -wal is replayed only onto the kb.db it continues. `clean` says kb.db holds everything (its
  // last connection closed it with the -wal checkpointed): a kb.db not clean whose -wal is gone is refused. `holder`
  // names the kb serve that has it open, and the -wal and -shm it holds (sqlite-files.ts).
  `
  ALTER TABLE meta ADD COLUMN commit_id BLOB;
  ALTER TABLE meta ADD COLUMN prev_id BLOB;
  ALTER TABLE meta ADD COLUMN clean INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE meta ADD COLUMN holder TEXT;
  UPDATE meta SET commit_id = randomblob(16) WHERE id = 1;
  `,
  // Tokens as docs/contract.md, Tokens, has them: a name (unique among the tokens not revoked, so that revoke can take
  // it), a scope, an expiry and the minute of last use. Tokens made before keep working: full scope, no expiry.
  `
  ALTER TABLE tokens ADD COLUMN name TEXT;
  ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read-only'));
  ALTER TABLE tokens ADD COLUMN expires_at TEXT;
  ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
  CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;
  `,
  // The change log of GET /v1/watch (docs/contract.md, Live changes): each organization's changes numbered 1, 2, 3…
  // (its cursors), written by triggers in the write's own transaction and savepoint, so that a write rolled back,
  // failed or replayed records nothing (the next migration drops the triggers: the store writes the log itself).
  // change_heads holds each organization's last number and the last one forgotten (purged: older cursors are 410).
  // IF NOT EXISTS: migrations may be reordered when branches merge, and a database from before one runs the later ones again.
  `
  CREATE TABLE IF NOT EXISTS change_heads (
    org_id INTEGER PRIMARY KEY REFERENCES orgs(id),
    seq INTEGER NOT NULL,
    purged INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE TABLE IF NOT EXISTS changes (
    org_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    description TEXT,
    at TEXT NOT NULL,
    PRIMARY KEY (org_id, seq)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER IF NOT EXISTS namespaces_inserted_logged AFTER INSERT ON namespaces BEGIN
    INSERT INTO change_heads (org_id, seq) VALUES (NEW.org_id, 1) ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT NEW.org_id, seq, 'created', 'namespace', NEW.key, NEW.key, NEW.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM change_heads WHERE org_id = NEW.org_id;
  END;
  CREATE TRIGGER IF NOT EXISTS namespaces_updated_logged AFTER UPDATE ON namespaces BEGIN
    INSERT INTO change_heads (org_id, seq) VALUES (NEW.org_id, 1) ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT NEW.org_id, seq, 'updated', 'namespace', NEW.key, NEW.key, NEW.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM change_heads WHERE org_id = NEW.org_id;
  END;
  CREATE TRIGGER IF NOT EXISTS namespaces_deleted_logged AFTER DELETE ON namespaces BEGIN
    INSERT INTO change_heads (org_id, seq) VALUES (OLD.org_id, 1) ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT OLD.org_id, seq, 'deleted', 'namespace', OLD.key, OLD.key, OLD.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM change_heads WHERE org_id = OLD.org_id;
  END;
  CREATE TRIGGER IF NOT EXISTS bases_inserted_logged AFTER INSERT ON bases BEGIN
    INSERT INTO change_heads (org_id, seq) SELECT org_id, 1 FROM namespaces WHERE id = NEW.namespace_id
      ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT n.org_id, h.seq, 'created', 'base', n.key, NEW.key, NEW.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM namespaces n JOIN change_heads h ON h.org_id = n.org_id WHERE n.id = NEW.namespace_id;
  END;
  CREATE TRIGGER IF NOT EXISTS bases_updated_logged AFTER UPDATE ON bases BEGIN
    INSERT INTO change_heads (org_id, seq) SELECT org_id, 1 FROM namespaces WHERE id = NEW.namespace_id
      ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT n.org_id, h.seq, 'updated', 'base', n.key, NEW.key, NEW.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM namespaces n JOIN change_heads h ON h.org_id = n.org_id WHERE n.id = NEW.namespace_id;
  END;
  CREATE TRIGGER IF NOT EXISTS bases_deleted_logged AFTER DELETE ON bases BEGIN
    INSERT INTO change_heads (org_id, seq) SELECT org_id, 1 FROM namespaces WHERE id = OLD.namespace_id
      ON CONFLICT (org_id) DO UPDATE SET seq = seq + 1;
    INSERT INTO changes SELECT n.org_id, h.seq, 'deleted', 'base', n.key, OLD.key, OLD.description,
      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM namespaces n JOIN change_heads h ON h.org_id = n.org_id WHERE n.id = OLD.namespace_id;
  END;
  `,
  // The store writes the change log itself, in each commit's transaction (sqlite-changes.ts, record): the triggers
  // moved the head and wrote a row in each write's savepoint, and cost a write about a tenth more.
  `
  DROP TRIGGER IF EXISTS namespaces_inserted_logged;
  DROP TRIGGER IF EXISTS namespaces_updated_logged;
  DROP TRIGGER IF EXISTS namespaces_deleted_logged;
  DROP TRIGGER IF EXISTS bases_inserted_logged;
  DROP TRIGGER IF EXISTS bases_updated_logged;
  DROP TRIGGER IF EXISTS bases_deleted_logged;
  `,
  // One row of the change log a commit and organization (sqlite-changes.ts): its id is the organization's id times
  // 2^40 plus the cursor of its last change, count how many changes it holds, changes their JSON array
  // ([type, kind, namespace, key, description] each). The rows of the table before are kept, one change each.
  `
  CREATE TABLE IF NOT EXISTS change_log (
    id INTEGER PRIMARY KEY,
    count INTEGER NOT NULL,
    at TEXT NOT NULL,
    changes TEXT NOT NULL
  ) STRICT;
  INSERT INTO change_log (id, count, at, changes)
    SELECT org_id * 1099511627776 + seq, 1, at, json_array(json_array(type, kind, namespace, key, description)) FROM changes;
  DROP TABLE changes;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** PRAGMA application_id of a kb database ("kb" and a format number), so a foreign SQLite file is refused. */
export const APPLICATION_ID = 0x6b620001;

/**
 * The statement every write transaction runs first: each commit written to the -wal carries the meta row's page with a
 * new random commit id and the one before, so that a -wal can be told to continue this very kb.db (sqlite-wal.ts).
 */
export const COMMIT_BUMP = 'UPDATE meta SET prev_id = commit_id, commit_id = randomblob(16), generation = generation + 1 WHERE id = 1';

/**
 * Brings the schema to this kb's version. The version is read inside the write transaction (BEGIN IMMEDIATE holds
 * the write lock), so of several processes opening one database at once only the first applies the migrations.
 */
export function migrate(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new StoreOpenError(`schema version ${version} is newer than this kb supports (${SCHEMA_VERSION}).`);
    }
    if (version === SCHEMA_VERSION) return;
    for (let next = version; next < SCHEMA_VERSION; next++) db.exec(MIGRATIONS[next] as string);
    db.exec(COMMIT_BUMP);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Gives a copy of a database a lineage and a commit id of its own, so that no -wal of the database it was copied from
 * replays onto it, and marks it closed cleanly: the copy's last connection puts everything in its kb.db.
 */
export function newLineage(db: Database.Database): void {
  db.prepare(
    `UPDATE meta SET lineage = randomblob(16), prev_id = commit_id, commit_id = randomblob(16), generation = generation + 1,
       clean = 1, holder = NULL WHERE id = 1`,
  ).run();
}
