/**
 * The PostgreSQL schema, one migration per version, with the discipline of the SQLite engine's migrations.ts: the one
 * row of kb_schema holds the number of migrations applied, and a database with a larger number was written by a newer
 * kb and is refused. kb_schema also marks the database as kb's, so that a foreign one is refused, not written to.
 *
 * Keys and names are COLLATE "C", so lists come in byte order whatever the database's locale. Descriptions are bytea
 * (their UTF-8), because PostgreSQL text cannot hold U+0000, which the API allows. Times are the database's clock, the
 * one clock that every replica shares.
 */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orgs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
  );

  CREATE TABLE tokens (
    id text COLLATE "C" PRIMARY KEY,
    org_id bigint NOT NULL REFERENCES orgs (id),
    hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  );

  CREATE TABLE namespaces (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id bigint NOT NULL REFERENCES orgs (id),
    key text COLLATE "C" NOT NULL,
    description bytea,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (org_id, key)
  );

  CREATE TABLE bases (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace_id bigint NOT NULL REFERENCES namespaces (id),
    key text COLLATE "C" NOT NULL,
    description bytea,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (namespace_id, key)
  );

  CREATE TABLE idempotency (
    org_id bigint NOT NULL REFERENCES orgs (id),
    key text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    status integer NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, key)
  );
  CREATE INDEX idempotency_created_at ON idempotency (created_at);

  CREATE TABLE auth_failures (
    address text NOT NULL,
    failed_at timestamptz NOT NULL
  );
  CREATE INDEX auth_failures_address ON auth_failures (address, failed_at);
  CREATE INDEX auth_failures_failed_at ON auth_failures (failed_at);
  `,
  // Every statement that changes what a read returns tells the replicas (LISTEN kb_changes), from the database itself:
  // a write of any replica, `kb serve token revoke`, or an administrator's SQL. A notification is delivered at commit,
  // and repeats within one transaction are folded into one, so a group commit costs one message per replica.
  `
  CREATE FUNCTION kb_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('kb_changes', TG_ARGV[0]);
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER orgs_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON orgs
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('tokens');
  CREATE TRIGGER tokens_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tokens
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('tokens');
  CREATE TRIGGER namespaces_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON namespaces
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('data');
  CREATE TRIGGER bases_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON bases
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('data');
  `,
  // Kept answers per organization (docs/contract.md, "Operating behind a load balancer"): a change of namespaces or
  // bases names its organization, data:ORG_ID, so that replicas keep every other organization's answers. One message
  // per organization and transaction still (repeats are folded); a TRUNCATE, of no one organization, says 'data'.
  // The bases a group commit inserts with one statement are told once for the statement (a transition table), not
  // once a row.
  `
  CREATE FUNCTION kb_namespace_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('kb_changes', 'data:' || (CASE WHEN TG_OP = 'DELETE' THEN OLD.org_id ELSE NEW.org_id END));
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION kb_bases_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('kb_changes', 'data:' || orgs.org_id)
      FROM (SELECT DISTINCT n.org_id FROM inserted b JOIN namespaces n ON n.id = b.namespace_id) orgs;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION kb_base_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    org bigint;
  BEGIN
    SELECT org_id INTO org FROM namespaces WHERE id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.namespace_id ELSE NEW.namespace_id END);
    PERFORM pg_notify('kb_changes', CASE WHEN org IS NULL THEN 'data' ELSE 'data:' || org END);
    IF TG_OP = 'UPDATE' AND NEW.namespace_id <> OLD.namespace_id THEN
      SELECT org_id INTO org FROM namespaces WHERE id = OLD.namespace_id;
      PERFORM pg_notify('kb_changes', CASE WHEN org IS NULL THEN 'data' ELSE 'data:' || org END);
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION kb_namespace_moved() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('kb_changes', 'data:' || OLD.org_id);
    RETURN NULL;
  END
  $$;
  DROP TRIGGER namespaces_changed ON namespaces;
  DROP TRIGGER bases_changed ON bases;
  CREATE TRIGGER namespaces_changed AFTER INSERT OR UPDATE OR DELETE ON namespaces
    FOR EACH ROW EXECUTE FUNCTION kb_namespace_changed();
  CREATE TRIGGER namespaces_moved AFTER UPDATE OF org_id ON namespaces
    FOR EACH ROW WHEN (OLD.org_id IS DISTINCT FROM NEW.org_id) EXECUTE FUNCTION kb_namespace_moved();
  CREATE TRIGGER namespaces_truncated AFTER TRUNCATE ON namespaces
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('data');
  CREATE TRIGGER bases_inserted AFTER INSERT ON bases REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION kb_bases_inserted();
  CREATE TRIGGER bases_changed AFTER UPDATE OR DELETE ON bases
    FOR EACH ROW EXECUTE FUNCTION kb_base_changed();
  CREATE TRIGGER bases_truncated AFTER TRUNCATE ON bases
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('data');
  `,
  // Tokens as docs/contract.md, Tokens, has them: a name (unique among the tokens not revoked, so that revoke can take
  // it), a scope, an expiry and the minute of last use. Tokens made before keep working: full scope, no expiry. Marking
  // a token used changes nothing of whom it stands for, so the change trigger leaves last_used_at out: replicas keep
  // what they know of tokens.
  `
  ALTER TABLE tokens
    ADD COLUMN name text COLLATE "C",
    ADD COLUMN scope text NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read-only')),
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN last_used_at timestamptz;
  CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;
  DROP TRIGGER tokens_changed ON tokens;
  CREATE TRIGGER tokens_changed AFTER INSERT OR DELETE OR TRUNCATE
    OR UPDATE OF id, org_id, hash, created_at, revoked_at, name, scope, expires_at ON tokens
    FOR EACH STATEMENT EXECUTE FUNCTION kb_changed('tokens');
  `,
  // The change log of GET /v1/watch (docs/contract.md, Live changes), as in migrations.ts: row triggers write each
  // change in the write's own transaction and savepoint. Commit order is not sequence order across connections, so a
  // change is numbered only as its transaction commits: a deferred trigger takes the organization's change_heads row
  // (organizations in id order, so that two transactions never wait for each other) and numbers the transaction's
  // changes after the last one; the row stays locked until the commit is done, so the next transaction of that
  // organization numbers after it, and every cursor becomes visible after all the lower ones, on every replica.
  `
  CREATE TABLE change_heads (
    org_id bigint PRIMARY KEY REFERENCES orgs (id),
    seq bigint NOT NULL DEFAULT 0,
    purged bigint NOT NULL DEFAULT 0
  );
  CREATE TABLE changes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id bigint NOT NULL,
    seq bigint,
    type text NOT NULL,
    kind text NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    description bytea,
    at timestamptz NOT NULL DEFAULT now()
  );
  CREATE UNIQUE INDEX changes_cursor ON changes (org_id, seq);
  CREATE INDEX changes_unnumbered ON changes (org_id, id) WHERE seq IS NULL;
  CREATE FUNCTION kb_namespace_logged() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      INSERT INTO changes (org_id, type, kind, namespace, key, description)
        VALUES (OLD.org_id, 'deleted', 'namespace', OLD.key, OLD.key, OLD.description);
    ELSE
      INSERT INTO changes (org_id, type, kind, namespace, key, description)
        VALUES (NEW.org_id, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, 'namespace', NEW.key, NEW.key, NEW.description);
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION kb_base_logged() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      INSERT INTO changes (org_id, type, kind, namespace, key, description)
        SELECT n.org_id, 'deleted', 'base', n.key, OLD.key, OLD.description FROM namespaces n WHERE n.id = OLD.namespace_id;
    ELSE
      INSERT INTO changes (org_id, type, kind, namespace, key, description)
        SELECT n.org_id, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, 'base', n.key, NEW.key, NEW.description
        FROM namespaces n WHERE n.id = NEW.namespace_id;
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION kb_changes_numbered() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    org bigint;
    head bigint;
    pending bigint;
  BEGIN
    -- The first of the transaction's firings numbers them all; the others find their row numbered already.
    PERFORM 1 FROM changes WHERE id = NEW.id AND seq IS NULL;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
    FOR org IN SELECT DISTINCT c.org_id FROM changes c WHERE c.seq IS NULL ORDER BY c.org_id LOOP
      SELECT count(*) INTO pending FROM changes c WHERE c.org_id = org AND c.seq IS NULL;
      INSERT INTO change_heads (org_id) VALUES (org) ON CONFLICT (org_id) DO NOTHING;
      UPDATE change_heads SET seq = seq + pending WHERE org_id = org RETURNING seq INTO head;
      UPDATE changes c SET seq = head - pending + numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM changes WHERE org_id = org AND seq IS NULL) numbered
        WHERE c.id = numbered.id;
    END LOOP;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER namespaces_logged AFTER INSERT OR UPDATE OR DELETE ON namespaces
    FOR EACH ROW EXECUTE FUNCTION kb_namespace_logged();
  CREATE TRIGGER bases_logged AFTER INSERT OR UPDATE OR DELETE ON bases
    FOR EACH ROW EXECUTE FUNCTION kb_base_logged();
  CREATE CONSTRAINT TRIGGER changes_numbered AFTER INSERT ON changes DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION kb_changes_numbered();
  `,
];

/**
 * The channel of the change triggers: its payload is 'tokens' (orgs, tokens), 'data:ORG_ID' (an organization's
 * namespaces or bases), or 'data' (namespaces or bases of any organization: a TRUNCATE).
 */
export const CHANGES_CHANNEL = 'kb_changes';

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS.length;

/** The table that marks a database as kb's and holds its schema version. */
export const SCHEMA_TABLE = 'kb_schema';

/** kb_schema.application of a kb database. */
export const APPLICATION = 'kb';

export const CREATE_SCHEMA_TABLE = `
  CREATE TABLE ${SCHEMA_TABLE} (
    application text NOT NULL,
    version integer NOT NULL
  )`;
