import type pg from 'pg';
import { type Base, LIMITS, type Namespace } from '../api/schemas.js';
import { DEFAULT_POOL_SIZE, maskDatabaseUrl, redactPassword } from './database-url.js';
import { failures } from './failures.js';
import {
  type AuthFailureLimit,
  type CommitObserver,
  type DescriptionPatch,
  IDEMPOTENCY_RETENTION_MS,
  type IdempotencyCapture,
  type IdempotencyRecord,
  type KeyedResult,
  type Principal,
  type Store,
  type StoreUsage,
  StoreUnreachableError,
  type TokenInfo,
  type TokenOptions,
  type TokenScope,
  type Write,
} from './store.js';
import { failAll, outcomeOf, type Settled, settle, WriteQueue } from './group-commit.js';
import { BatchCommit, type BaseRow, CONCURRENT_BATCHES, GATHER_MS, MAX_BATCH, OVERLAP_FROM, type Pending } from './postgres-batch.js';
import { ChangeListener, type Changes } from './postgres-changes.js';
import { PostgresChangeLog } from './postgres-changelog.js';
import { type DescribedRow, operationOf } from './postgres-writes.js';
import { migrate, waitForDatabase } from './postgres-open.js';
import { Connections, MAINTENANCE_ROUND_TRIP_MS, ROUND_TRIP_MS, statementMs } from './postgres-pool.js';
import {
  advisoryKey,
  type Client,
  CommitUnconfirmed,
  decode,
  FIRST_TOKEN_LOCK,
  isUniqueViolation,
  KEPT_REPLY,
  keptRecord,
  type KeptRow,
  type Queryable,
  reasonOf,
  storageFailure,
  unconfirmed,
  unreachable,
  type WriteStep,
} from './postgres-sql.js';

export { CHECKOUT_CHANNEL } from './postgres-pool.js';

export interface PostgresStoreOptions {
  /** postgres://USER:PASSWORD@HOST:PORT/DATABASE */
  url: string;
  /** Connections to the database at most (default DEFAULT_POOL_SIZE). */
  poolSize?: number;
  /** Requests that may wait for a connection when all are taken; more are refused at once with 503 (default 8 per connection). */
  queueLimit?: number;
  /** Milliseconds to keep trying to reach the database when opening (default 10 s); 0 tries once. */
  waitMs?: number;
  /** Told once, with a sentence naming the masked URL and the reason, when open() starts to wait for the database. */
  onWaiting?: (message: string) => void;
  /** Failed authentications per address within the window before 429 (default: LIMITS of src/api). */
  authFailureLimit?: number;
  authFailureWindowMs?: number;
  /** Told after each group commit (metrics). */
  onCommit?: CommitObserver | undefined;
  /** The most to wait for the answer to a round trip to the database (default ROUND_TRIP_MS, postgres-pool.ts). */
  roundTripMs?: number;
}

/** Tokens a replica keeps known at most. */
const MAX_PRINCIPALS = 10_000;

interface TokenRow {
  id: string;
  name: string | null;
  org: string;
  scope: TokenScope;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const TOKEN_COLUMNS = 't.id, t.name, o.name AS org, t.scope, t.created_at, t.expires_at, t.last_used_at, t.revoked_at';

function tokenInfo(row: TokenRow): TokenInfo {
  return {
    id: row.id,
    name: row.name,
    org: row.org,
    scope: row.scope,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

/**
 * The PostgreSQL engine, for several `kb serve` replicas over one database: everything a replica knows is in the
 * database (uniqueness, tokens, idempotency keys and their replies, failed authentications), so the replicas behave
 * as one server. Concurrent writes share one transaction and one commit (group commit, as the SQLite engine does),
 * each in its own savepoint, and their promises resolve only after COMMIT (synchronous_commit as the server has it:
 * on by default, so a write answered 200 is durable). What was read is kept until a notification says that a commit,
 * of this replica or another, may have changed it (readVersion).
 *
 * A broken connection never ends the process, and none holds a request for long: the requests that a connection
 * which broke or stopped answering touches fail with 503 within a bound (postgres-pool.ts), and the pool opens new
 * connections once the database answers again.
 */
export class PostgresStore implements Store {
  readonly authFailures: AuthFailureLimit;
  private readonly running = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  private lastSweep = 0;
  /**
   * Addresses this replica found over the failed-auth limit, and until when (its clock). Nothing can end a limit early
   * (refused attempts are not counted), so these are answered 429 without asking the database: an attacker's flood
   * costs the database one transaction per window, not one per request.
   */
  private readonly limited = new Map<string, number>();
  private readonly queue = new WriteQueue<Pending>((batch) => this.flush(batch), {
    maxBatch: MAX_BATCH,
    concurrent: CONCURRENT_BATCHES,
    overlapFrom: OVERLAP_FROM,
    gatherMs: GATHER_MS,
  });
  /** Versions handed out while the listener is down: each different, so nothing read then is kept. */
  private unlistened = 0;
  /** Active tokens by hash (hex), at the tokens version they were read at: authentication without a query. */
  private readonly principals = new Map<string, Principal>();
  private principalsVersion: string | undefined;
  private readonly batches: BatchCommit;
  private onCommit: CommitObserver | undefined;
  /** The change log of GET /v1/watch, which the schema's triggers write (postgres-changelog.ts). */
  readonly changeLog: PostgresChangeLog;

  private constructor(
    private readonly connections: Connections,
    private readonly changes: ChangeListener,
    private readonly authFailureLimit: number,
    private readonly authFailureWindowMs: number,
  ) {
    this.authFailures = { recordFailure: (address) => this.recordAuthFailure(address) };
    this.batches = new BatchCommit(connections.broken);
    connections.owner = this;
    this.changeLog = new PostgresChangeLog({ read: (query) => this.read(query), transaction: (fn) => this.transaction(fn), commits: changes.dataChanged });
  }

  /**
   * Connects (waiting up to waitMs for a database that does not answer yet), then creates or checks the schema. Throws
   * StoreUnreachableError when the database cannot be reached in time, StoreOpenError when it refuses kb (a foreign
   * or newer database, a wrong password, no permission); messages show the URL with its password masked.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const shown = maskDatabaseUrl(options.url);
    const redact = (text: string) => redactPassword(text, options.url);
    await waitForDatabase(options, shown, redact);
    await migrate(options.url, shown, redact);
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    // Requests beyond the pool wait for a connection, up to this many; past them a request is refused at once (503):
    // a flood of slow lists must not queue everyone else for the connection timeout.
    const roundTripMs = options.roundTripMs ?? ROUND_TRIP_MS;
    const connections = new Connections(options.url, roundTripMs, poolSize, options.queueLimit ?? poolSize * 8, CONCURRENT_BATCHES);
    const changes = new ChangeListener(options.url, roundTripMs);
    try {
      await changes.start();
    } catch (error) {
      await changes.close();
      await connections.end();
      throw new StoreUnreachableError(`lost the database at ${shown}: ${redact(reasonOf(error))}`);
    }
    const store = new PostgresStore(connections, changes, options.authFailureLimit ?? LIMITS.authFailures, options.authFailureWindowMs ?? LIMITS.authFailureWindowMs);
    store.onCommit = options.onCommit;
    return store;
  }

  /** Runs an operation unless the store is closing, and keeps it in view so that close() waits for it. */
  private track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(failures.shuttingDown());
    const promise = run();
    this.running.add(promise);
    promise.then(
      () => this.running.delete(promise),
      () => this.running.delete(promise),
    );
    return promise;
  }

  private read<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<R[]> {
    return this.track(async () => {
      const client = await this.connections.checkout();
      let failure: unknown;
      try {
        return (await this.connections.timed(() => client.query<R>(query))).rows;
      } catch (error) {
        if (this.connections.lost(client, error)) {
          failure = error;
          throw unreachable();
        }
        throw storageFailure(error);
      } finally {
        this.connections.release(client, failure);
      }
    });
  }

  /**
   * Runs fn in a transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws (unless the
   * connection was lost: it is closed instead, which ends the transaction).
   */
  private transaction<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return this.track(async () => {
      const client = await this.connections.checkout();
      let failure: unknown;
      try {
        return await this.connections.timed(async () => {
          await client.query('BEGIN');
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        });
      } catch (error) {
        if (this.connections.lost(client, error)) throw unreachable();
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          failure = rollbackError;
        });
        throw this.connections.broken.has(client) ? unreachable() : storageFailure(error);
      } finally {
        this.connections.release(client, failure);
      }
    });
  }

  /**
   * A write, in the next group commit: resolves with its own outcome once the commit is done, or rejects with the
   * commit's failure (503 for a lost connection), which then kept nothing of any write of the batch. A base create
   * gives its row, so that its batch can insert it with the others in one statement.
   */
  private write<T>(op: (step: WriteStep) => Promise<T>, capture?: IdempotencyCapture, changes: Changes = 'data', row?: BaseRow, tokenId?: string): Promise<T> {
    return this.track(
      () =>
        new Promise<T>((resolve, reject) => {
          this.queue.push({ op, capture, changes, row, tokenId, resolve: resolve as (value: unknown) => void, reject });
        }),
    );
  }

  /**
   * Commits a batch and tells each write its own outcome, only once the commit is done. A write the batch left to
   * run on its own (a base whose namespace does not exist yet) goes first into the next batch. A commit that failed
   * (or a lost connection) kept nothing of any write in the batch: each fails, none is told its own outcome, and a
   * reply made under a key is not sent (Idempotency sees an error other than the write's).
   */
  private async flush(batch: Pending[]): Promise<void> {
    const started = performance.now();
    let client: Client;
    try {
      client = await this.connections.writer();
    } catch (error) {
      return failAll(batch, error);
    }
    let results: Array<Settled | undefined>;
    try {
      results = await this.connections.timed(() => this.batches.commit(client, batch));
    } catch (error) {
      // A commit that may have reached the database is never answered as if it had not (nor as if it had).
      if (error instanceof CommitUnconfirmed) {
        this.connections.lost(client, error);
        this.connections.release(client, error);
        return failAll(batch, unconfirmed());
      }
      let failure: unknown = error;
      if (!this.connections.lost(client, error)) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          failure = rollbackError;
        });
      }
      this.connections.release(client, failure);
      return failAll(batch, this.connections.broken.has(client) ? unreachable() : storageFailure(error));
    }
    this.connections.keepWriter(client);
    this.onCommit?.(batch.length, (performance.now() - started) / 1000);
    const changed = new Set<Changes>();
    const later: Pending[] = [];
    batch.forEach((item, index) => {
      const result = results[index];
      if (result === undefined) later.push(item);
      else if (outcomeOf(result)?.ok) changed.add(item.changes);
    });
    this.changes.committed(changed);
    settle(batch, results);
    if (later.length > 0) this.queue.pushFirst(later);
  }

  /**
   * Not ready while the LISTEN connection is down (what other replicas commit would go unseen), while a round trip of
   * this replica has waited STALLED_MS or more for its answer (a connection stopped answering: the requests it holds
   * wait; it is closed at the bound, ROUND_TRIP_MS), or when the database does not answer a fence on the LISTEN
   * connection and a query on one of the pool.
   */
  async unready(): Promise<string | undefined> {
    if (this.closing) return 'the store is closing';
    if (!this.changes.isListening) return 'the LISTEN connection to the database is down';
    const stalled = this.connections.stalled() ?? this.changes.stalled();
    if (stalled !== undefined) return `a connection to the database has not answered for ${(stalled / 1000).toFixed(1)} s`;
    try {
      await Promise.all([this.changes.fence() ?? Promise.reject(new Error('the LISTEN connection does not answer')), this.read({ text: 'SELECT 1' })]);
      return undefined;
    } catch (error) {
      return `the database does not answer: ${(error as Error).message}`;
    }
  }

  usage(): StoreUsage {
    return { ...this.connections.usage(), listening: this.changes.isListening };
  }

  /**
   * Changes whenever a commit may have changed what a read returns: this replica's own (counted at once) and every
   * other's, told by PostgreSQL (LISTEN kb_changes). It resolves after a fence, a round trip on the LISTEN connection
   * sent after the request arrived: PostgreSQL delivers a listener the notifications of every transaction committed
   * before a query ahead of that query's result, so a commit acknowledged to anyone before this request was sent is
   * counted. One fence serves every request read in the same turn of the event loop. While the LISTEN connection is
   * down or has not answered a fence for STALLED_MS, each call gives a new value, so nothing is kept and reads go to
   * the database (what they read there is at least as new as the request) until it answers again.
   */
  readVersion(): Promise<string> {
    const unknown = () => `unlistened.${++this.unlistened}`;
    const fence = this.changes.fence();
    if (fence === undefined) return Promise.resolve(unknown());
    return fence.then(
      () => this.changes.version('all') ?? unknown(),
      () => unknown(),
    );
  }

  /**
   * A write's token is checked in the write's own transaction (Write.tokenId), so a write needs no fence: the server
   * authenticates it without waiting for readVersion().
   */
  readonly fencesWrites = false;

  /** From the notifications (tokens) and this replica's own token writes; undefined while not listening. */
  tokensVersion(): string | undefined {
    return this.changes.version('tokens');
  }

  async authenticate(tokenHash: Buffer): Promise<Principal | null> {
    const version = this.changes.version('tokens');
    const id = tokenHash.toString('hex');
    if (version !== this.principalsVersion) {
      this.principals.clear();
      this.principalsVersion = version;
    }
    const known = version === undefined ? undefined : this.principals.get(id);
    if (known) return known;
    const [row] = await this.read<{ id: string; org_id: number; org: string; scope: TokenScope; expires_at: Date | null }>({
      name: 'authenticate',
      text: `SELECT t.id, t.org_id, o.name AS org, t.scope, t.expires_at FROM tokens t JOIN orgs o ON o.id = t.org_id
             WHERE t.hash = $1 AND t.revoked_at IS NULL`,
      values: [tokenHash],
    });
    const principal = row ? { orgId: row.org_id, org: row.org, tokenId: row.id, scope: row.scope, expiresAt: row.expires_at?.getTime() ?? null } : null;
    // Kept only when no token changed while it was read (a revocation told since then would not be in the row). Only
    // active tokens are kept: a stream of made-up ones would only push them out.
    if (principal && version !== undefined && version === this.changes.version('tokens') && version === this.principalsVersion) {
      if (this.principals.size >= MAX_PRINCIPALS) this.principals.delete(this.principals.keys().next().value as string);
      this.principals.set(id, principal);
    }
    return principal;
  }

  createToken(org: string, id: string, tokenHash: Buffer, options: TokenOptions = {}): Promise<TokenInfo> {
    return this.write((client) => insertToken(client, org, id, tokenHash, options), undefined, 'tokens');
  }

  createFirstToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo | null> {
    return this.write(async (client) => {
      // Replicas starting together on an empty database queue here: the first creates the token, the others see it.
      await client.query('SELECT pg_advisory_xact_lock($1)', [FIRST_TOKEN_LOCK]);
      const { rows } = await client.query('SELECT 1 FROM tokens LIMIT 1');
      return rows.length > 0 ? null : insertToken(client, org, id, tokenHash);
    }, undefined, 'tokens');
  }

  async listTokens(): Promise<TokenInfo[]> {
    const rows = await this.read<TokenRow>({
      text: `SELECT ${TOKEN_COLUMNS} FROM tokens t JOIN orgs o ON o.id = t.org_id ORDER BY t.created_at, t.id`,
    });
    return rows.map(tokenInfo);
  }

  revokeToken(id: string): Promise<TokenInfo | null> {
    return this.write(async (client) => {
      await client.query('UPDATE tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      const { rows } = await client.query<TokenRow>(
        `SELECT ${TOKEN_COLUMNS} FROM tokens t JOIN orgs o ON o.id = t.org_id WHERE t.id = $1`,
        [id],
      );
      return rows[0] ? tokenInfo(rows[0]) : null;
    }, undefined, 'tokens');
  }

  /**
   * One statement of its own, outside the group commit: the change triggers leave last_used_at out
   * (postgres-migrations.ts), so no replica drops what it knows of tokens for it.
   */
  async markTokensUsed(ids: readonly string[], minute: string): Promise<void> {
    await this.read({
      name: 'mark-tokens-used',
      text: 'UPDATE tokens SET last_used_at = $2 WHERE id = ANY($1) AND (last_used_at IS NULL OR last_used_at < $2)',
      values: [ids, minute],
    });
  }

  perform(write: Write): Promise<unknown> {
    return this.counted(this.dispatch(write, undefined), write.orgId);
  }

  performKeyed(write: Write, capture: IdempotencyCapture): Promise<KeyedResult> {
    return this.counted(this.dispatch(write, capture), write.orgId) as Promise<KeyedResult>;
  }

  /** The write's promise, settling only once the write is counted for its organization's version (dataVersion). */
  private counted(written: Promise<unknown>, orgId: number): Promise<unknown> {
    return written.then(
      (value) => {
        this.changes.wrote(orgId);
        return value;
      },
      (error: unknown) => {
        this.changes.wrote(orgId);
        throw error;
      },
    );
  }

  /** Per organization, from the notifications (data:ORG_ID) and this replica's own writes; undefined while not listening. */
  dataVersion(orgId: number): string | undefined {
    return this.changes.versionOf(orgId);
  }

  /** Queues a write; with a capture, its promise resolves with a KeyedResult (flush). */
  private dispatch(write: Write, capture: IdempotencyCapture | undefined): Promise<unknown> {
    const { op, row } = operationOf(write);
    return this.write(op, capture, 'data', row, write.tokenId);
  }

  async nsList(orgId: number): Promise<Namespace[]> {
    const rows = await this.read<DescribedRow>({
      name: 'ns_list',
      text: 'SELECT key, description FROM namespaces WHERE org_id = $1 ORDER BY key',
      values: [orgId],
    });
    return rows.map((row) => ({ key: row.key, description: decode(row.description) }));
  }

  nsCreate(orgId: number, ns: Namespace): Promise<Namespace> {
    return this.perform({ op: 'nsCreate', orgId, ns }) as Promise<Namespace>;
  }


  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace> {
    return this.perform({ op: 'nsUpdate', orgId, key, patch }) as Promise<Namespace>;
  }


  async baseList(orgId: number, namespace: string): Promise<Base[]> {
    // One statement, so the namespace and its bases come from one snapshot; no row at all means no such namespace.
    const rows = await this.read<{ key: string | null; description: Buffer | null }>({
      name: 'base_list',
      text: `SELECT b.key, b.description FROM namespaces n LEFT JOIN bases b ON b.namespace_id = n.id
             WHERE n.org_id = $1 AND n.key = $2 ORDER BY b.key`,
      values: [orgId, namespace],
    });
    if (rows.length === 0) throw failures.namespaceNotFound(namespace);
    return rows.flatMap((row) => (row.key === null ? [] : [{ namespace, key: row.key, description: decode(row.description) }]));
  }

  async baseListAll(orgId: number): Promise<Base[]> {
    const rows = await this.read<{ namespace: string; key: string; description: Buffer | null }>({
      name: 'base_list_all',
      text: `SELECT n.key AS namespace, b.key, b.description FROM bases b JOIN namespaces n ON n.id = b.namespace_id
             WHERE n.org_id = $1 ORDER BY n.key, b.key`,
      values: [orgId],
    });
    return rows.map((row) => ({ namespace: row.namespace, key: row.key, description: decode(row.description) }));
  }

  baseCreate(orgId: number, base: Base): Promise<Base> {
    return this.perform({ op: 'baseCreate', orgId, base }) as Promise<Base>;
  }


  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base> {
    return this.perform({ op: 'baseUpdate', orgId, namespace, key, patch }) as Promise<Base>;
  }


  baseDelete(orgId: number, namespace: string, key: string): Promise<Base> {
    return this.perform({ op: 'baseDelete', orgId, namespace, key }) as Promise<Base>;
  }


  async idempotencyGet(orgId: number, key: string): Promise<IdempotencyRecord | null> {
    const rows = await this.read<KeptRow>({ name: 'kept_reply', text: KEPT_REPLY, values: [orgId, key, IDEMPOTENCY_RETENTION_MS] });
    return rows[0] ? keptRecord(rows[0]) : null;
  }

  /** Under the maintenance limits (postgres-pool.ts): a purge of an hour of replies may take a while. */
  idempotencyPurge(): Promise<number> {
    return this.transaction(async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${statementMs(MAINTENANCE_ROUND_TRIP_MS)}`);
      const result = await client.query({
        text: `DELETE FROM idempotency WHERE created_at < now() - $1::float8 * interval '1 millisecond'`,
        values: [IDEMPOTENCY_RETENTION_MS],
        query_timeout: MAINTENANCE_ROUND_TRIP_MS,
      } as pg.QueryConfig);
      return result.rowCount ?? 0;
    });
  }

  /**
   * Decides and counts under the address's advisory lock, so that replicas failing the same address at once cannot
   * all slip under the limit; the rows of failures that left the window are deleted as it goes.
   */
  private async recordAuthFailure(address: string): Promise<number> {
    const now = Date.now();
    const until = this.limited.get(address);
    if (until !== undefined && until > now) return until - now;
    this.limited.delete(address);
    const window = this.authFailureWindowMs;
    const sweep = now - this.lastSweep > window;
    if (sweep) {
      this.lastSweep = now;
      for (const [known, end] of this.limited) if (end <= now) this.limited.delete(known);
    }
    const waitMs = await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [advisoryKey('auth-failure', address)]);
      const { rows } = await client.query<{ failures: number; wait_ms: number | null }>(
        `SELECT count(*) AS failures,
                ceil(extract(epoch FROM min(failed_at) + $3::float8 * interval '1 millisecond' - clock_timestamp()) * 1000)::float8 AS wait_ms
         FROM (SELECT failed_at FROM auth_failures
               WHERE address = $1 AND failed_at > clock_timestamp() - $3::float8 * interval '1 millisecond'
               ORDER BY failed_at DESC LIMIT $2) recent`,
        [address, this.authFailureLimit, window],
      );
      const verdict = rows[0];
      if (verdict && verdict.failures >= this.authFailureLimit) return Math.max(1, verdict.wait_ms ?? 1);
      // Forget what left the window: this address's rows each time, everyone's once a window.
      await client.query(
        `DELETE FROM auth_failures WHERE failed_at <= clock_timestamp() - $2::float8 * interval '1 millisecond' AND ($3 OR address = $1)`,
        [address, window, sweep],
      );
      await client.query('INSERT INTO auth_failures (address, failed_at) VALUES ($1, clock_timestamp())', [address]);
      return 0;
    });
    if (waitMs > 0) this.limited.set(address, Date.now() + waitMs);
    return waitMs;
  }

  /** Waits for the operations in flight, then closes every connection; later operations are refused with 503. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.running]);
      await this.changes.close();
      await this.connections.end();
    })();
    return this.closing;
  }
}

async function insertToken(client: Queryable, org: string, id: string, tokenHash: Buffer, options: TokenOptions = {}): Promise<TokenInfo> {
  const { name = null, scope = 'full', expiresAt = null } = options;
  await client.query('INSERT INTO orgs (name, created_at) VALUES ($1, now()) ON CONFLICT (name) DO NOTHING', [org]);
  if (name !== null) {
    const { rows } = await client.query('SELECT 1 FROM tokens WHERE name = $1 AND revoked_at IS NULL', [name]);
    if (rows.length > 0) throw failures.tokenNameTaken(name);
  }
  let rows: Array<{ created_at: Date; expires_at: Date | null }>;
  try {
    ({ rows } = await client.query<{ created_at: Date; expires_at: Date | null }>(
      `INSERT INTO tokens (id, org_id, hash, created_at, name, scope, expires_at) SELECT $1, id, $3, now(), $4, $5, $6 FROM orgs WHERE name = $2
       RETURNING created_at, expires_at`,
      [id, org, tokenHash, name, scope, expiresAt],
    ));
  } catch (error) {
    // The check above cannot see a token of this name that another transaction has made and not yet committed (two
    // replicas' init steps at once): the unique index decides, and the loser is told as a sequential duplicate is.
    if (name !== null && isUniqueViolation(error) && (error as pg.DatabaseError).constraint === 'tokens_active_name') throw failures.tokenNameTaken(name);
    throw error;
  }
  const row = rows[0] as { created_at: Date; expires_at: Date | null };
  return { id, name, org, scope, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at?.toISOString() ?? null, lastUsedAt: null, revokedAt: null };
}


