import { createHash } from 'node:crypto';
import pg from 'pg';
import { KbApiError } from '../api/errors.js';
import { failures } from './failures.js';
import type { IdempotencyCapture, IdempotencyRecord, StoredReply } from './store.js';

// The PostgreSQL engine's SQL: its statements' text, the values written into them, and what PostgreSQL's errors mean.

export type Client = pg.PoolClient;

/** What a write runs its statements on: a connection, or the step of a group commit that it is. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * One write of a group commit, on the batch's connection. Its savepoint is taken with its first statement, in the
 * same round trip when the write sends that statement through inline(): on 2 cores, round trips (a system call at
 * each end) are most of what a write costs.
 */
export class WriteStep implements Queryable {
  /** Whether the savepoint statement was sent (and so whether a failure must roll back to it). */
  sent = false;

  constructor(
    private readonly client: Client,
    private pending: string | undefined,
  ) {}

  private take(): string | undefined {
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined) this.sent = true;
    return pending;
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>> {
    const pending = this.take();
    if (pending !== undefined) await this.client.query(pending);
    return typeof config === 'string' ? this.client.query<R>(config, values) : this.client.query<R>(config);
  }

  /** Statements with their values written in (see sql below), sent after the savepoint in one simple query. */
  async inline(statements: string): Promise<pg.QueryResult> {
    const pending = this.take();
    const results = (await this.client.query(pending === undefined ? statements : `${pending}; ${statements}`)) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(results) ? (results.at(-1) as pg.QueryResult) : results;
  }
}

/** Values written into a statement: an integer, a string literal, bytes (as hex, which needs no escaping), or NULL. */
export const sql = {
  integer: (value: number) => {
    if (!Number.isSafeInteger(value)) throw new TypeError('not an integer');
    return String(value);
  },
  // As a parameter would be: null (and undefined) is NULL, so that a NOT NULL column refuses it.
  // A NUL would end the statement's text on the wire (and the connection, with every write of the batch): PostgreSQL's
  // text cannot hold it anyway, so it fails this write alone, before anything is sent.
  text: (value: string | null | undefined) => {
    if (value == null) return 'NULL';
    const text = String(value);
    if (text.includes('\u0000')) throw new TypeError('text cannot hold U+0000');
    return pg.escapeLiteral(text);
  },
  bytes: (value: Buffer | null) => (value === null ? 'NULL' : `decode('${value.toString('hex')}', 'hex')`),
};

/** Node's codes of a network that does not (yet) answer: worth waiting for at start-up. */
export const NETWORK_ERRORS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ENOENT',
]);

/** SQLSTATEs of a server that cannot serve this connection right now: starting, stopping, full, or the link broke. */
export const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * A 64-bit advisory lock key for a purpose and its parts. Advisory locks belong to one database, so these never meet
 * another database's; SHA-256 makes two different (organization, key) pairs collide with a negligible chance.
 */
export function advisoryKey(...parts: Array<string | number>): string {
  const digest = createHash('sha256').update(['kb', ...parts].join('\u0000')).digest();
  return digest.readBigInt64BE(0).toString();
}

export const MIGRATION_LOCK = advisoryKey('migrate');
export const FIRST_TOKEN_LOCK = advisoryKey('first-token');

/** The advisory lock a write holds, for its transaction, while it runs under an organization's Idempotency-Key. */
export function idempotencyLock(orgId: number, key: string): string {
  return advisoryKey('idempotency', orgId, key);
}

export function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

/** Whether the database could not be reached or dropped the connection, as opposed to refusing what was asked. */
export function isConnectionFailure(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) return state.startsWith('08') || UNAVAILABLE_STATES.has(state);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_ERRORS.has(code)) return true;
  // pg's own words: a connection that ended, and a round trip or a connect that got no answer in time (query_timeout,
  // connectionTimeoutMillis), whose connection is as good as lost.
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|connection timeout|Query read timeout/i.test(error.message);
}

/** One line saying why, also for Node's AggregateError of a host with several addresses (whose message is empty). */
export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = (error as { errors?: unknown[] }).errors?.[0];
  if (inner instanceof Error && inner.message) return inner.message;
  return (error as { code?: string }).code ?? error.name;
}

/** Maps what PostgreSQL and the driver throw to the API's error catalog; KbApiErrors and others pass through. */
export function storageFailure(error: unknown): unknown {
  if (error instanceof KbApiError) return error;
  const state = sqlState(error);
  if (state === '53100') {
    return new KbApiError('insufficient_storage', 'The database is out of disk space; nothing was written', 'Free space on the database server and retry.');
  }
  if (state === '40001' || state === '40P01' || state === '55P03' || state === '57014') {
    return failures.busy();
  }
  if (isConnectionFailure(error)) return unreachable();
  return error;
}

export const unreachable = () => new KbApiError('unavailable', 'The database cannot be reached', 'Retry in a moment.');

/**
 * A COMMIT (or a statement that commits by itself) was sent, and its connection broke or stalled before the answer:
 * the database may have committed it, or may yet (a stalled server reads what was sent once it runs again).
 */
export class CommitUnconfirmed extends Error {
  override name = 'CommitUnconfirmed';
  constructor(override readonly cause: unknown) {
    super(`the commit was not confirmed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * The answer to a write whose commit was not confirmed (docs/contract.md, "Storage faults"): 503 like any lost
 * connection, never a 200 that may not be there, and saying that it may have been applied. A retry with the same
 * Idempotency-Key settles it: it gets the write's reply if it was committed, and runs it if not.
 */
export const unconfirmed = () =>
  new KbApiError(
    'unavailable',
    'The database did not confirm the commit: the write may have been applied',
    'Retry with the same Idempotency-Key (kb does): it gets the write\'s reply if it was applied, and runs it if not.',
  );

/** A description as stored: its UTF-8 (see postgres-migrations.ts); absent is none. */
export const encode = (description: string | null | undefined): Buffer | null => (description == null ? null : Buffer.from(description, 'utf8'));
export const decode = (description: Buffer | null): string | null => (description === null ? null : description.toString('utf8'));

export interface KeptRow { fingerprint: string; status: number; body: string; created_at: Date }

export const KEPT_REPLY = `SELECT fingerprint, status, body, created_at FROM idempotency
  WHERE org_id = $1 AND key = $2 AND created_at >= now() - $3::float8 * interval '1 millisecond'`;

export function keptRecord(row: KeptRow): IdempotencyRecord {
  return { fingerprint: row.fingerprint, status: row.status, body: row.body, createdAt: row.created_at.toISOString() };
}

/**
 * The base rows of a batch (see insertBases), as arrays, one a column: one prepared statement whatever the batch's size.
 * A row is inserted only when the token it was sent with (if any) is still active. Only the rows not created come back
 * (most batches: none), n their place in the arrays, from 1: revoked when its token is not active, else found when the
 * namespace exists (the key is taken already), else neither (the row is left to its write's own op).
 */
export const INSERT_BASES = `
  WITH target AS (
    SELECT input.n, ns.id AS namespace_id, input.key COLLATE "C" AS key, input.description,
      input.token IS NULL OR EXISTS (SELECT 1 FROM tokens t WHERE t.id = input.token COLLATE "C" AND t.revoked_at IS NULL) AS allowed
    FROM unnest($1::int8[], $2::text[], $3::text[], $4::bytea[], $5::text[])
      WITH ORDINALITY AS input (org_id, namespace, key, description, token, n)
    LEFT JOIN namespaces ns ON ns.org_id = input.org_id AND ns.key = input.namespace COLLATE "C"),
  created AS (
    INSERT INTO bases (namespace_id, key, description, created_at, updated_at)
    SELECT namespace_id, key, description, now(), now() FROM target
    WHERE allowed AND namespace_id IS NOT NULL ORDER BY namespace_id, key
    ON CONFLICT (namespace_id, key) DO NOTHING
    RETURNING namespace_id, key)
  SELECT target.n, NOT target.allowed AS revoked, target.namespace_id IS NOT NULL AS found
  FROM target LEFT JOIN created USING (namespace_id, key)
  WHERE created.key IS NULL`;

/** A row INSERT_BASES returns: a row it did not create (its place n, from 1), and why. */
export interface NotCreated {
  n: number;
  revoked: boolean;
  found: boolean;
}

/** What of pg's Connection a query of kb's own uses (the protocol's messages, as pg's own queries and pg-cursor send them). */
interface ProtocolConnection {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
  parse(query: { text: string; name: string }): void;
  bind(config: { statement: string; values: Array<string | null> }): void;
  execute(config: Record<string, never>): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/**
 * INSERT_BASES for one batch, as a query of kb's own (pg's Submittable, the driver's way to send what its query config
 * cannot say, as pg-cursor does): its columns are known, so it is bound and executed with no Describe, and PostgreSQL
 * sends no RowDescription for pg to parse and build a result from each batch; its few rows are read here, and its
 * parameters are written as array literals once. Prepared once per connection under its name, as a named query is.
 * `done` resolves with the rows not created once PostgreSQL is ready again, or rejects with its error (or the
 * connection's).
 */
export class InsertBases {
  readonly name = 'insert_bases';
  readonly text = INSERT_BASES;
  readonly done: Promise<NotCreated[]>;
  private readonly rows: NotCreated[] = [];
  private settle!: { resolve: (rows: NotCreated[]) => void; reject: (error: unknown) => void };

  constructor(private readonly values: [orgs: string, namespaces: string, keys: string, descriptions: string, tokens: string]) {
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: ProtocolConnection): void {
    // One write for the messages, as pg's own prepared queries do.
    connection.stream.cork?.();
    try {
      if (connection.parsedStatements[this.name] === undefined && connection.submittedNamedStatements[this.name] === undefined) {
        connection.parse({ text: this.text, name: this.name });
        connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ statement: this.name, values: this.values });
      connection.execute({});
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    const [n, revoked, found] = message.fields;
    this.rows.push({ n: Number(n), revoked: revoked === 't', found: found === 't' });
  }

  /**
   * Set by pg when it bounds the round trip (query_timeout): called as the query settles, as pg's own queries do, so
   * that pg clears the query's timer.
   */
  callback?: (error: Error | null) => void;

  handleReadyForQuery(): void {
    this.settle.resolve(this.rows);
    this.callback?.(null);
  }

  handleError(error: Error): void {
    this.settle.reject(error);
    this.callback?.(error);
  }

  handleCopyInResponse(connection: ProtocolConnection): void {
    connection.sendCopyFail('No source stream defined');
  }

  handleRowDescription(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}

/** Array literals of the parameters of INSERT_BASES, as pg would write them: every text element quoted and escaped. */
export const arrayLiteral = {
  integers: (values: readonly number[]) => `{${values.join(',')}}`,
  texts: (values: ReadonlyArray<string | null>) =>
    `{${values.map((value) => (value === null ? 'NULL' : `"${value.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`,
  bytes: (values: ReadonlyArray<Buffer | null>) => `{${values.map((value) => (value === null ? 'NULL' : `\\\\x${value.toString('hex')}`)).join(',')}}`,
};

/**
 * The statement that tells which of the tokens writes were sent with are active now (its rows: their ids), for a
 * batch's transaction; undefined when no write names its token.
 */
export function activeTokens(tokenIds: ReadonlyArray<string | undefined>): string | undefined {
  const ids = [...new Set(tokenIds.filter((id) => id !== undefined))];
  if (ids.length === 0) return undefined;
  return `SELECT id FROM tokens WHERE id IN (${ids.map((id) => sql.text(id)).join(', ')}) AND revoked_at IS NULL`;
}

/** The start and the end of the statement that keeps replies under Idempotency-Keys (a later reply replaces one expired). */
export const KEEP_REPLIES = 'INSERT INTO idempotency (org_id, key, fingerprint, status, body, created_at)';
export const ON_KEPT_CONFLICT = `ON CONFLICT (org_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
  body = excluded.body, created_at = excluded.created_at`;

/** A reply as a row of KEEP_REPLIES, its values written in. */
export function keptReplyRow(capture: IdempotencyCapture, reply: StoredReply): string {
  return `(${sql.integer(capture.orgId)}, ${sql.text(capture.key)}, ${sql.text(capture.fingerprint)}, ${sql.integer(reply.status)}, ${sql.text(reply.body)}, now())`;
}

export const isText = (value: unknown): value is string => typeof value === 'string' && !value.includes('\u0000');

/** The writes of a batch, each to run on its own (its op, in a savepoint), none in a shared INSERT of base rows. */
