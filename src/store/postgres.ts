import { createHash } from 'node:crypto';
import pg from 'pg';
import { KbApiError } from '../api/errors.js';
import { type Base, LIMITS, type Namespace } from '../api/schemas.js';
import { DEFAULT_POOL_SIZE, maskDatabaseUrl, redactPassword } from './database-url.js';
import { failures } from './failures.js';
import {
  APPLICATION,
  CHANGES_CHANNEL,
  CREATE_SCHEMA_TABLE,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
  SCHEMA_TABLE,
} from './postgres-migrations.js';
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
  type StoredReply,
  StoreOpenError,
  type StoreUsage,
  StoreUnreachableError,
  type TokenInfo,
  type Write,
  type WriteOutcome,
} from './store.js';

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
}

type Client = pg.PoolClient;

/** What a write runs its statements on: a connection, or the step of a group commit that it is. */
interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * One write of a group commit, on the batch's connection. Its savepoint is taken with its first statement, in the
 * same round trip when the write sends that statement through inline(): on 2 cores, round trips (a system call at
 * each end) are most of what a write costs.
 */
class WriteStep implements Queryable {
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
const sql = {
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

/** Tokens a replica keeps known at most. */
const MAX_PRINCIPALS = 10_000;

interface TokenRow { id: string; org: string; created_at: Date; revoked_at: Date | null }
interface DescribedRow { key: string; description: Buffer | null }

/** int8 (counts and identity columns) as a JS number rather than pg's default string; kb's ids stay far below 2^53. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Node's codes of a network that does not (yet) answer: worth waiting for at start-up. */
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ENOENT',
]);

/** SQLSTATEs of a server that cannot serve this connection right now: starting, stopping, full, or the link broke. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * A 64-bit advisory lock key for a purpose and its parts. Advisory locks belong to one database, so these never meet
 * another database's; SHA-256 makes two different (organization, key) pairs collide with a negligible chance.
 */
function advisoryKey(...parts: Array<string | number>): string {
  const digest = createHash('sha256').update(['kb', ...parts].join('\u0000')).digest();
  return digest.readBigInt64BE(0).toString();
}

const MIGRATION_LOCK = advisoryKey('migrate');
const FIRST_TOKEN_LOCK = advisoryKey('first-token');

/** The advisory lock a write holds, for its transaction, while it runs under an organization's Idempotency-Key. */
export function idempotencyLock(orgId: number, key: string): string {
  return advisoryKey('idempotency', orgId, key);
}

function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

/** Whether the database could not be reached or dropped the connection, as opposed to refusing what was asked. */
function isConnectionFailure(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) return state.startsWith('08') || UNAVAILABLE_STATES.has(state);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_ERRORS.has(code)) return true;
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|connection timeout/i.test(error.message);
}

/** One line saying why, also for Node's AggregateError of a host with several addresses (whose message is empty). */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = (error as { errors?: unknown[] }).errors?.[0];
  if (inner instanceof Error && inner.message) return inner.message;
  return (error as { code?: string }).code ?? error.name;
}

/** Maps what PostgreSQL and the driver throw to the API's error catalog; KbApiErrors and others pass through. */
function storageFailure(error: unknown): unknown {
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

const unreachable = () => new KbApiError('unavailable', 'The database cannot be reached', 'Retry in a moment.');

/** A description as stored: its UTF-8 (see postgres-migrations.ts); absent is none. */
const encode = (description: string | null | undefined): Buffer | null => (description == null ? null : Buffer.from(description, 'utf8'));
const decode = (description: Buffer | null): string | null => (description === null ? null : description.toString('utf8'));

function tokenInfo(row: TokenRow): TokenInfo {
  return { id: row.id, org: row.org, createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() ?? null };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A request turned away at once because this replica's connections are all taken and enough requests wait already. */
const overloaded = () => new KbApiError('unavailable', 'The server is busy with other requests', 'Retry in a moment.');

/** What a write may change, so that a commit tells the caches that keep it: tokens (and organizations), or data. */
type Changes = 'tokens' | 'data';

/** A base create, which a batch inserts together with the others of its batch in one statement (insertBases). */
interface BaseRow {
  orgId: number;
  base: Base;
}

interface Pending {
  op: (step: WriteStep) => Promise<unknown>;
  /** Present on a keyed write: it then resolves with a KeyedResult, and rejects only with the commit's failure. */
  capture: IdempotencyCapture | undefined;
  changes: Changes;
  /** Set on a base create that may go into its batch's one INSERT; cleared when it must run on its own (op). */
  row?: BaseRow | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What a batch decided for one write: its outcome (unkeyed), or what became of it (keyed); undefined: not yet. */
type Settled = WriteOutcome | KeyedResult;

/** What the claim of a batch's keys decided: writes settled before they run, and second copies of a key (its first's index). */
interface Claimed {
  settled: Map<number, KeyedResult>;
  followers: Map<number, number>;
}

/** The outcome of a write that ran, whatever it was sent as; undefined for one that did not run. */
function outcomeOf(result: Settled): WriteOutcome | undefined {
  if (!('kind' in result)) return result;
  return result.kind === 'ran' ? result.outcome : undefined;
}

/**
 * A second copy of a key in one batch gets what its first copy got: the same replay, or the reply kept for the first's
 * outcome (as a replay of it); the same wait when the first is busy. Undefined when the first kept nothing: the copy
 * then runs itself.
 */
function followerResult(first: Pending, settled: KeyedResult | undefined, reply: StoredReply | undefined): KeyedResult | undefined {
  if (settled?.kind === 'replayed' || settled?.kind === 'busy') return settled;
  if (reply === undefined || first.capture === undefined) return undefined;
  return { kind: 'replayed', record: { fingerprint: first.capture.fingerprint, ...reply, createdAt: new Date().toISOString() } };
}

/** What the batch's INSERT of base rows decided for a write: inserted, taken already, or left to the write's own op. */
type RowVerdict = 'created' | 'exists' | 'alone';

/**
 * Writes of one group commit at most. Each write's savepoint takes a subtransaction id, and a backend keeps 64 of them
 * in shared memory: past that, every other session's snapshots must look subtransactions up on disk (suboverflow).
 */
const MAX_BATCH = 64;
/** Group commits in flight at once per replica: one gathers writes while the other waits for PostgreSQL's flush. */
const CONCURRENT_BATCHES = 2;
/** How long a fence may take before the LISTEN connection is taken for lost (and nothing is kept meanwhile). */
const FENCE_TIMEOUT_MS = 5000;

/**
 * The replica's view of what other replicas committed: a connection of its own that LISTENs to kb_changes (see
 * postgres-migrations.ts) and counts the notifications. When that connection is lost, notifications may be missed, so
 * it says so (version() is undefined) until it has reconnected and LISTENs again; a new epoch then drops whatever was
 * kept before the gap.
 */
class ChangeListener {
  private client: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private epoch = 0;
  private reconnect: NodeJS.Timeout | undefined;
  private delay = 100;
  /** The fence sent in this turn of the event loop, the one on its way, and the one that will follow it. */
  private readonly fences: { thisTurn?: Promise<void> | undefined; inFlight?: Promise<void> | undefined; next?: Promise<void> | undefined } = {};
  /** Notifications seen (and this replica's own commits), by what they changed. */
  readonly counts = { tokens: 0, data: 0 };
  /** Changes to data of no one organization (a TRUNCATE), and to each organization's (data:ORG_ID, and own writes). */
  private anyOrg = 0;
  private readonly orgs = new Map<number, number>();

  constructor(private readonly url: string) {}

  /** Connects and LISTENs; rejects when the first attempt fails (open() then fails as it would without a listener). */
  start(): Promise<void> {
    return this.connect();
  }

  /**
   * The version of one organization's data, or undefined while notifications may be missed: changed by its own
   * writes, by a token's, and by a change of unknown organization (a TRUNCATE), never by another organization's.
   */
  versionOf(orgId: number): string | undefined {
    if (!this.listening) return undefined;
    return `${this.epoch}.${this.counts.tokens}.${this.anyOrg}.${this.orgs.get(orgId) ?? 0}`;
  }

  /** A write of this replica to an organization's data: counted at once, before its reply and its notification. */
  wrote(orgId: number): void {
    this.counts.data++;
    this.orgs.set(orgId, (this.orgs.get(orgId) ?? 0) + 1);
  }

  /** Whether it listens now: when not, other replicas' commits may go unseen. */
  get isListening(): boolean {
    return this.listening;
  }

  /** The version of what this replica may keep, or undefined while it may be missing notifications. */
  version(of: Changes | 'all'): string | undefined {
    if (!this.listening) return undefined;
    if (of === 'tokens') return `${this.epoch}.${this.counts.tokens}`;
    return `${this.epoch}.${this.counts.tokens}.${this.counts.data}`;
  }

  /**
   * Resolves once every notification of a transaction committed before this call has been counted: a query on the
   * LISTEN connection, whose result PostgreSQL sends after the notifications pending for it. A fence sent in this turn
   * of the event loop serves every request read in it (their bytes arrived before it was sent). One sent in an earlier
   * turn may not serve: the calls that come while it is on its way share the next one, sent once it is back, so there is
   * at most one fence per round trip however many requests arrive. Undefined while not listening. A fence that takes
   * too long counts as a lost connection.
   */
  fence(): Promise<void> | undefined {
    if (!this.listening || this.client === undefined) return undefined;
    if (this.fences.thisTurn) return this.fences.thisTurn;
    if (this.fences.inFlight === undefined) return this.sendFence();
    this.fences.next ??= this.fences.inFlight.then(
      () => this.sendFence(),
      () => this.sendFence(),
    ).then(() => undefined);
    return this.fences.next;
  }

  private sendFence(): Promise<void> {
    this.fences.next = undefined;
    const client = this.client;
    if (!this.listening || client === undefined) return Promise.reject(new Error('not listening'));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('the LISTEN connection did not answer')), FENCE_TIMEOUT_MS);
    });
    const fence = Promise.race([client.query('SELECT 1'), timeout]).then(
      () => clearTimeout(timer),
      (error: unknown) => {
        clearTimeout(timer);
        this.drop(client);
        throw error;
      },
    );
    this.fences.inFlight = fence;
    this.fences.thisTurn = fence;
    const settled = () => {
      if (this.fences.inFlight === fence) this.fences.inFlight = undefined;
    };
    fence.then(settled, settled);
    setImmediate(() => {
      if (this.fences.thisTurn === fence) this.fences.thisTurn = undefined;
    });
    return fence;
  }

  /**
   * A commit of this replica: known at once, before its notification comes back. Its writes to data are also counted
   * by organization, as they settle (wrote()).
   */
  committed(changes: ReadonlySet<Changes>): void {
    if (changes.has('tokens')) this.counts.tokens++;
    if (changes.has('data')) this.counts.data++;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: 'kb serve (listen)', connectionTimeoutMillis: 5000 });
    this.client = client;
    const lost = () => this.drop(client);
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel !== CHANGES_CHANNEL) return;
      const org = /^data:(\d+)$/.exec(message.payload ?? '')?.[1];
      if (org !== undefined) this.wrote(Number(org));
      else if (message.payload === 'tokens') this.counts.tokens++;
      else {
        this.counts.data++;
        this.anyOrg++;
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      lost();
      throw error;
    }
    if (this.client !== client) return;
    this.epoch++;
    this.listening = true;
    this.delay = 100;
  }

  /** Forgets a LISTEN connection that broke (or stalled), and connects again after a while. */
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    this.fences.thisTurn = this.fences.inFlight = undefined;
    client.end().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      this.connect().catch(() => undefined);
    }, this.delay);
    this.reconnect.unref();
    this.delay = Math.min(this.delay * 2, 2000);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }
}

/**
 * The PostgreSQL engine, for several `kb serve` replicas over one database: everything a replica knows is in the
 * database (uniqueness, tokens, idempotency keys and their replies, failed authentications), so the replicas behave
 * as one server. Concurrent writes share one transaction and one commit (group commit, as the SQLite engine does),
 * each in its own savepoint, and their promises resolve only after COMMIT (synchronous_commit as the server has it:
 * on by default, so a write answered 200 is durable). What was read is kept until a notification says that a commit,
 * of this replica or another, may have changed it (readVersion).
 *
 * A broken connection never ends the process: every client the pool opens has an 'error' listener for its whole
 * life, and the requests it touches fail with 503; the pool opens new connections once the database is back.
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
  private queue: Pending[] = [];
  private batches = 0;
  private flushScheduled = false;
  /** Versions handed out while the listener is down: each different, so nothing read then is kept. */
  private unlistened = 0;
  /** Active tokens by hash (hex), at the tokens version they were read at: authentication without a query. */
  private readonly principals = new Map<string, Principal>();
  private principalsVersion: string | undefined;
  private onCommit: CommitObserver | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly changes: ChangeListener,
    /** Broken connections, told by their 'error' event: released to the pool as broken, never reused. */
    private readonly broken: WeakMap<pg.ClientBase, Error>,
    private readonly queueLimit: number,
    private readonly authFailureLimit: number,
    private readonly authFailureWindowMs: number,
  ) {
    this.authFailures = { recordFailure: (address) => this.recordAuthFailure(address) };
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
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    const pool = new pg.Pool({
      connectionString: options.url,
      max: poolSize,
      // A request that cannot get a connection in time fails with 503 instead of hanging.
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      application_name: 'kb serve',
      // No statement waits forever, and a replica that stalls inside a transaction does not hold its locks for long.
      statement_timeout: 30_000,
      idle_in_transaction_session_timeout: 60_000,
      types: TYPES,
    });
    // pg takes the pool's own 'error' listener off a client while it is checked out, and pool.query's listener goes
    // after the first error: a connection that breaks then (a database restart, pg_terminate_backend) would raise an
    // unhandled 'error' and end the process. This listener stays for the client's whole life.
    const broken = new WeakMap<pg.ClientBase, Error>();
    pool.on('connect', (client) => client.on('error', (error: Error) => void broken.set(client, error)));
    // An idle connection that breaks is dropped by the pool; the next query opens a new one.
    pool.on('error', () => undefined);
    const changes = new ChangeListener(options.url);
    try {
      await migrate(pool, shown, redact);
      await changes.start();
    } catch (error) {
      await changes.close();
      await pool.end();
      if (error instanceof StoreOpenError) throw error;
      throw new StoreUnreachableError(`lost the database at ${shown}: ${redact(reasonOf(error))}`);
    }
    // Requests beyond the pool wait for a connection, up to this many; past them a request is refused at once (503):
    // a flood of slow lists must not queue everyone else for the connection timeout.
    const queueLimit = options.queueLimit ?? poolSize * 8;
    const store = new PostgresStore(pool, changes, broken, queueLimit, options.authFailureLimit ?? LIMITS.authFailures, options.authFailureWindowMs ?? LIMITS.authFailureWindowMs);
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

  /** A connection of the pool, or a 503: at once when too many requests wait for one already. */
  private async checkout(): Promise<Client> {
    if (this.pool.waitingCount >= this.queueLimit) throw overloaded();
    try {
      return await this.pool.connect();
    } catch (error) {
      throw storageFailure(error);
    }
  }

  /** Gives a connection back; one that broke, or whose state is unknown after an error, is closed instead. */
  private release(client: Client, error?: unknown): void {
    const lost = this.broken.get(client);
    client.release(lost ?? (error instanceof Error ? error : undefined));
  }

  private read<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<R[]> {
    return this.track(async () => {
      const client = await this.checkout();
      let failure: unknown;
      try {
        return (await client.query<R>(query)).rows;
      } catch (error) {
        if (this.broken.has(client) || isConnectionFailure(error)) {
          failure = error;
          throw unreachable();
        }
        throw storageFailure(error);
      } finally {
        this.release(client, failure);
      }
    });
  }

  /** Runs fn in a transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  private transaction<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return this.track(async () => {
      const client = await this.checkout();
      let failure: unknown;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          failure = rollbackError;
        });
        throw this.broken.has(client) ? unreachable() : storageFailure(error);
      } finally {
        this.release(client, failure);
      }
    });
  }

  /**
   * A write, in the next group commit: resolves with its own outcome once the commit is done, or rejects with the
   * commit's failure (503 for a lost connection), which then kept nothing of any write of the batch. A base create
   * gives its row, so that its batch can insert it with the others in one statement.
   */
  private write<T>(op: (step: WriteStep) => Promise<T>, capture?: IdempotencyCapture, changes: Changes = 'data', row?: BaseRow): Promise<T> {
    return this.track(
      () =>
        new Promise<T>((resolve, reject) => {
          this.queue.push({ op, capture, changes, row, resolve: resolve as (value: unknown) => void, reject });
          this.schedule();
        }),
    );
  }

  /** Writes that arrive in this turn of the event loop go together. */
  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.batches < CONCURRENT_BATCHES) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.batches++;
      void this.flush(batch).finally(() => {
        this.batches--;
        this.pump();
      });
    }
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
      client = await this.checkout();
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    let results: Array<Settled | undefined>;
    try {
      results = await this.commit(client, batch);
    } catch (error) {
      let failure: unknown = error;
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        failure = rollbackError;
      });
      this.release(client, failure);
      const rejected = this.broken.has(client) ? unreachable() : storageFailure(error);
      for (const item of batch) item.reject(rejected);
      return;
    }
    this.release(client);
    this.onCommit?.(batch.length, (performance.now() - started) / 1000);
    const changed = new Set<Changes>();
    const later: Pending[] = [];
    batch.forEach((item, index) => {
      const result = results[index];
      if (result === undefined) later.push(item);
      else if (outcomeOf(result)?.ok) changed.add(item.changes);
    });
    this.changes.committed(changed);
    batch.forEach((item, index) => {
      const result = results[index];
      if (result === undefined) return;
      if ('kind' in result) item.resolve(result);
      else if (result.ok) item.resolve(result.value);
      else item.reject(result.error);
    });
    if (later.length > 0) {
      this.queue.unshift(...later);
      this.schedule();
    }
  }

  /**
   * Runs a batch in one transaction and commits it; resolves what became of each write, or undefined for a write left
   * to the next batch. The base creates of a batch go into one INSERT (insertBases). A batch of nothing else, without
   * Idempotency-Keys, is that one statement on its own, committed by itself: one round trip. Otherwise the transaction
   * takes the keys first (claim), then inserts the bases, then runs every other write in a savepoint of its own, so
   * that one failing write (a 409, a 404) is undone alone; the replies kept under keys are committed with their writes.
   */
  private async commit(client: Client, batch: Pending[]): Promise<Array<Settled | undefined>> {
    const outcomes: Array<WriteOutcome | undefined> = batch.map(() => undefined);
    const keyed = batch.some((item) => item.capture !== undefined);
    if (!keyed && batch.every((item) => item.row !== undefined)) {
      const verdicts = await this.insertBases(client, batch);
      // Refused as a whole: nothing was written (the statement committed, or failed, by itself). Each write runs alone.
      if (verdicts === undefined) return this.commit(client, alone(batch));
      batch.forEach((item, index) => {
        const verdict = verdicts[index] as RowVerdict;
        if (verdict === 'alone') item.row = undefined;
        else outcomes[index] = rowOutcome(item, verdict);
      });
      return outcomes;
    }

    const claimed: Claimed = { settled: new Map(), followers: new Map() };
    await (keyed ? this.claim(client, batch, claimed) : client.query('BEGIN'));
    const decided = (index: number) => outcomes[index] !== undefined || claimed.settled.has(index) || claimed.followers.has(index);
    const rows = batch.filter((item, index) => item.row !== undefined && !decided(index));
    if (rows.length > 0) {
      const verdicts = await this.insertBases(client, rows);
      if (verdicts === undefined) {
        await client.query('ROLLBACK');
        return this.commit(client, alone(batch));
      }
      rows.forEach((item, at) => {
        const verdict = verdicts[at] as RowVerdict;
        if (verdict === 'alone') item.row = undefined;
        else outcomes[batch.indexOf(item)] = rowOutcome(item, verdict);
      });
    }
    const kept = new Map<number, StoredReply | undefined>();
    const keptRows: string[] = [];
    for (const item of rows) {
      const index = batch.indexOf(item);
      const outcome = outcomes[index];
      const reply = outcome && item.capture?.reply(outcome);
      if (outcome) kept.set(index, reply);
      if (item.capture && reply) keptRows.push(keptReplyRow(item.capture, reply));
    }
    const savepoint = { taken: false };
    for (const [index, item] of batch.entries()) {
      const first = claimed.followers.get(index);
      // A second copy of a key in this batch: the first's reply, once it has one.
      if (first !== undefined) {
        const copied = followerResult(batch[first] as Pending, claimed.settled.get(first), kept.get(first));
        if (copied !== undefined) {
          claimed.settled.set(index, copied);
          continue;
        }
      } else if (decided(index)) continue;
      const ran = await this.runInBatch(client, item, savepoint);
      outcomes[index] = ran.outcome;
      kept.set(index, ran.reply);
    }
    // The last write's savepoint goes with the COMMIT, and so do the replies of the base rows.
    await client.query(keptRows.length > 0 ? `${KEEP_REPLIES} VALUES ${keptRows.join(', ')} ${ON_KEPT_CONFLICT}; COMMIT` : 'COMMIT');
    return batch.map((item, index) => {
      const settled = claimed.settled.get(index);
      if (settled !== undefined) return settled;
      const outcome = outcomes[index];
      if (outcome === undefined || item.capture === undefined) return outcome;
      return { kind: 'ran', outcome, reply: kept.get(index) };
    });
  }

  /**
   * Opens the batch's transaction and takes every Idempotency-Key of the batch, in one round trip: first each key's
   * advisory lock, then, in a statement of its own and so a snapshot taken after the locks, the replies kept under
   * them. A key with a kept reply is replayed, whether or not its lock was free (another replica may be replaying it
   * too); a key whose lock another connection holds and that has no reply yet is busy (its first request runs there
   * now). A second copy of a key in the batch follows the first (commit gives it the first's reply).
   */
  private async claim(client: Client, batch: Pending[], claimed: Claimed): Promise<void> {
    const claims: Array<{ index: number; capture: IdempotencyCapture; lock: string; org: string; key: string }> = [];
    const firsts = new Map<string, number>();
    for (const [index, item] of batch.entries()) {
      const { capture } = item;
      if (capture === undefined) continue;
      const slot = `${capture.orgId}\u0000${capture.key}`;
      const first = firsts.get(slot);
      if (first !== undefined) {
        claimed.followers.set(index, first);
        item.row = undefined;
        continue;
      }
      firsts.set(slot, index);
      try {
        // Written into statements here and with the reply (keptReplyRow): a value that cannot be fails this write alone.
        sql.text(capture.fingerprint);
        claims.push({ index, capture, lock: idempotencyLock(capture.orgId, capture.key), org: sql.integer(capture.orgId), key: sql.text(capture.key) });
      } catch (error) {
        claimed.settled.set(index, { kind: 'ran', outcome: { ok: false, error }, reply: undefined });
      }
    }
    if (claims.length === 0) {
      await client.query('BEGIN');
      return;
    }
    const [, locks, kept] = (await client.query(
      `BEGIN;
       SELECT pg_try_advisory_xact_lock(claim.lock) AS locked FROM unnest(ARRAY[${claims.map((claim) => claim.lock).join(', ')}]::int8[])
         WITH ORDINALITY AS claim(lock, n) ORDER BY claim.n;
       SELECT claim.n, kept.fingerprint, kept.status, kept.body, kept.created_at
         FROM (VALUES ${claims.map((claim, n) => `(${n}, ${claim.org}::int8, ${claim.key}::text)`).join(', ')}) AS claim(n, org_id, key)
         JOIN idempotency kept ON kept.org_id = claim.org_id AND kept.key = claim.key COLLATE "C"
         WHERE kept.created_at >= now() - ${sql.integer(IDEMPOTENCY_RETENTION_MS)}::float8 * interval '1 millisecond'`,
    )) as unknown as [pg.QueryResult, pg.QueryResult<{ locked: boolean }>, pg.QueryResult<KeptRow & { n: number }>];
    const keptBy = new Map(kept.rows.map((row) => [row.n, row]));
    claims.forEach((claim, n) => {
      const row = keptBy.get(n);
      if (row) claimed.settled.set(claim.index, { kind: 'replayed', record: keptRecord(row) });
      else if (!locks.rows[n]?.locked) claimed.settled.set(claim.index, { kind: 'busy' });
    });
  }

  /**
   * Inserts the bases of several creates with one statement, in key order (so that two batches inserting the same
   * keys wait for each other rather than deadlock), skipping a key taken already (ON CONFLICT DO NOTHING waits for a
   * concurrent insert of the key to commit or roll back, so of concurrent creates exactly one is 'created'). A row
   * whose namespace does not exist, that repeats another row of the batch, or that would fail the statement as a whole
   * is left 'alone', to its write's own op. Undefined when PostgreSQL refused the statement as a whole,
   * which then wrote nothing; a lost connection throws.
   */
  private async insertBases(client: Client, items: Pending[]): Promise<RowVerdict[] | undefined> {
    const verdicts: RowVerdict[] = items.map(() => 'alone');
    const sent: number[] = [];
    const columns = { org: [] as number[], namespace: [] as string[], key: [] as string[], description: [] as Array<Buffer | null> };
    const seen = new Set<string>();
    for (const [n, item] of items.entries()) {
      const { orgId, base } = item.row as BaseRow;
      // What would fail the whole statement (a key that is not text, or holds a NUL, which PostgreSQL's text cannot)
      // fails its write alone, in its op.
      if (!isText(base.namespace) || !isText(base.key) || !(base.description == null || typeof base.description === 'string')) continue;
      const slot = `${orgId}\u0000${base.namespace}\u0000${base.key}`;
      if (seen.has(slot)) continue;
      seen.add(slot);
      sent.push(n);
      columns.org.push(orgId);
      columns.namespace.push(base.namespace);
      columns.key.push(base.key);
      columns.description.push(encode(base.description));
    }
    if (sent.length === 0) return verdicts;
    let rows: Array<{ n: number; created: boolean }>;
    try {
      ({ rows } = await client.query<{ n: number; created: boolean }>({
        name: 'insert_bases',
        text: INSERT_BASES,
        values: [columns.org, columns.namespace, columns.key, columns.description],
      }));
    } catch (error) {
      if (this.broken.has(client) || isConnectionFailure(error)) throw error;
      return undefined;
    }
    for (const row of rows) verdicts[sent[row.n - 1] as number] = row.created ? 'created' : 'exists';
    return verdicts;
  }

  /** One write of a batch, in a savepoint of its own; its Idempotency-Key was claimed with the batch's (claim). */
  private async runInBatch(client: Client, item: Pending, savepoint: { taken: boolean }): Promise<{ outcome: WriteOutcome; reply: StoredReply | undefined }> {
    const { capture } = item;
    // The previous write's savepoint is released as this one's is taken, with the write's first statement.
    const step = new WriteStep(client, savepoint.taken ? 'RELEASE SAVEPOINT write; SAVEPOINT write' : 'SAVEPOINT write');
    let outcome: WriteOutcome;
    try {
      outcome = { ok: true, value: await item.op(step) };
    } catch (error) {
      // A connection that broke ends the batch; anything else is this write's own failure.
      if (this.broken.has(client) || isConnectionFailure(error)) throw error;
      // A write that failed before sending anything has nothing to undo (and the savepoint named is a previous one's).
      if (step.sent) await client.query('ROLLBACK TO SAVEPOINT write');
      outcome = { ok: false, error: storageFailure(error) };
    }
    if (step.sent) savepoint.taken = true;
    const reply = capture?.reply(outcome);
    if (capture && reply) {
      await client.query({
        name: 'idempotency_put',
        text: `${KEEP_REPLIES} VALUES ($1, $2, $3, $4, $5, now()) ${ON_KEPT_CONFLICT}`,
        values: [capture.orgId, capture.key, capture.fingerprint, reply.status, reply.body],
      });
    }
    return { outcome, reply };
  }

  /**
   * Changes whenever a commit may have changed what a read returns: this replica's own (counted at once) and every
   * other's, told by PostgreSQL (LISTEN kb_changes). It resolves after a fence, a round trip on the LISTEN connection
   * sent after the request arrived: PostgreSQL delivers a listener the notifications of every transaction committed
   * before a query ahead of that query's result, so a commit acknowledged to anyone before this request was sent is
   * counted. One fence serves every request read in the same turn of the event loop. While the LISTEN connection is
   * down, each call gives a new value, so nothing is kept until it LISTENs again.
   */
  /**
   * Not ready while the LISTEN connection is down (what other replicas commit would go unseen) or the database does not
   * answer a query on a connection of the pool (within its connection timeout).
   */
  async unready(): Promise<string | undefined> {
    if (this.closing) return 'the store is closing';
    if (!this.changes.isListening) return 'the LISTEN connection to the database is down';
    try {
      await this.read({ text: 'SELECT 1' });
      return undefined;
    } catch (error) {
      return `the database does not answer: ${(error as Error).message}`;
    }
  }

  usage(): StoreUsage {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, listening: this.changes.isListening };
  }

  readVersion(): Promise<string> {
    const unknown = () => `unlistened.${++this.unlistened}`;
    const fence = this.changes.fence();
    if (fence === undefined) return Promise.resolve(unknown());
    return fence.then(
      () => this.changes.version('all') ?? unknown(),
      () => unknown(),
    );
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
    const [row] = await this.read<{ id: string; org_id: number; org: string }>({
      name: 'authenticate',
      text: `SELECT t.id, t.org_id, o.name AS org FROM tokens t JOIN orgs o ON o.id = t.org_id
             WHERE t.hash = $1 AND t.revoked_at IS NULL`,
      values: [tokenHash],
    });
    const principal = row ? { orgId: row.org_id, org: row.org, tokenId: row.id } : null;
    // Kept only when no token changed while it was read (a revocation told since then would not be in the row). Only
    // active tokens are kept: a stream of made-up ones would only push them out.
    if (principal && version !== undefined && version === this.changes.version('tokens') && version === this.principalsVersion) {
      if (this.principals.size >= MAX_PRINCIPALS) this.principals.delete(this.principals.keys().next().value as string);
      this.principals.set(id, principal);
    }
    return principal;
  }

  createToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo> {
    return this.write((client) => insertToken(client, org, id, tokenHash), undefined, 'tokens');
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
      text: `SELECT t.id, o.name AS org, t.created_at, t.revoked_at FROM tokens t JOIN orgs o ON o.id = t.org_id
             ORDER BY t.created_at, t.id`,
    });
    return rows.map(tokenInfo);
  }

  revokeToken(id: string): Promise<TokenInfo | null> {
    return this.write(async (client) => {
      await client.query('UPDATE tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      const { rows } = await client.query<TokenRow>(
        `SELECT t.id, o.name AS org, t.created_at, t.revoked_at FROM tokens t JOIN orgs o ON o.id = t.org_id
         WHERE t.id = $1`,
        [id],
      );
      return rows[0] ? tokenInfo(rows[0]) : null;
    }, undefined, 'tokens');
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
    switch (write.op) {
      case 'nsCreate':
        return this.nsCreateWith(write.orgId, write.ns, capture);
      case 'nsUpdate':
        return this.nsUpdateWith(write.orgId, write.key, write.patch, capture);
      case 'baseCreate':
        return this.baseCreateWith(write.orgId, write.base, capture);
      case 'baseUpdate':
        return this.baseUpdateWith(write.orgId, write.namespace, write.key, write.patch, capture);
      case 'baseDelete':
        return this.baseDeleteWith(write.orgId, write.namespace, write.key, capture);
    }
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
    return this.nsCreateWith(orgId, ns, undefined);
  }

  private nsCreateWith(orgId: number, ns: Namespace, capture: IdempotencyCapture | undefined): Promise<Namespace> {
    return this.write(async (client) => {
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
    }, capture);
  }

  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace> {
    return this.nsUpdateWith(orgId, key, patch, undefined);
  }

  private nsUpdateWith(orgId: number, key: string, patch: DescriptionPatch, capture: IdempotencyCapture | undefined): Promise<Namespace> {
    return this.write(async (client) => {
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
    }, capture);
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

  baseCreate(orgId: number, base: Base): Promise<Base> {
    return this.baseCreateWith(orgId, base, undefined);
  }

  private baseCreateWith(orgId: number, base: Base, capture: IdempotencyCapture | undefined): Promise<Base> {
    return this.write(async (client) => {
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
    }, capture, 'data', { orgId, base });
  }

  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base> {
    return this.baseUpdateWith(orgId, namespace, key, patch, undefined);
  }

  private baseUpdateWith(orgId: number, namespace: string, key: string, patch: DescriptionPatch, capture: IdempotencyCapture | undefined): Promise<Base> {
    return this.write(async (client) => {
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
    }, capture);
  }

  baseDelete(orgId: number, namespace: string, key: string): Promise<Base> {
    return this.baseDeleteWith(orgId, namespace, key, undefined);
  }

  private baseDeleteWith(orgId: number, namespace: string, key: string, capture: IdempotencyCapture | undefined): Promise<Base> {
    return this.write(async (client) => {
      const { rows } = await client.query<DescribedRow>(
        `DELETE FROM bases b USING namespaces n
         WHERE n.id = b.namespace_id AND n.org_id = $1 AND n.key = $2 AND b.key = $3 RETURNING b.key, b.description`,
        [orgId, namespace, key],
      );
      const row = rows[0];
      if (!row) throw await baseNotFound(client, orgId, namespace, key);
      return { namespace, key: row.key, description: decode(row.description) };
    }, capture);
  }

  async idempotencyGet(orgId: number, key: string): Promise<IdempotencyRecord | null> {
    const rows = await this.read<KeptRow>({ name: 'kept_reply', text: KEPT_REPLY, values: [orgId, key, IDEMPOTENCY_RETENTION_MS] });
    return rows[0] ? keptRecord(rows[0]) : null;
  }

  idempotencyPurge(): Promise<number> {
    return this.transaction(async (client) => {
      const result = await client.query(
        `DELETE FROM idempotency WHERE created_at < now() - $1::float8 * interval '1 millisecond'`,
        [IDEMPOTENCY_RETENTION_MS],
      );
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
      await this.pool.end();
    })();
    return this.closing;
  }
}

interface KeptRow { fingerprint: string; status: number; body: string; created_at: Date }

const KEPT_REPLY = `SELECT fingerprint, status, body, created_at FROM idempotency
  WHERE org_id = $1 AND key = $2 AND created_at >= now() - $3::float8 * interval '1 millisecond'`;

function keptRecord(row: KeptRow): IdempotencyRecord {
  return { fingerprint: row.fingerprint, status: row.status, body: row.body, createdAt: row.created_at.toISOString() };
}

/**
 * The base rows of a batch (see insertBases), as arrays, one a column: one prepared statement whatever the batch's size.
 * A row appears in the result when its namespace exists, created or not; n is its place in the arrays, from 1.
 */
const INSERT_BASES = `
  WITH input AS (
    SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::bytea[]) WITH ORDINALITY AS input (org_id, namespace, key, description, n)),
  target AS (
    SELECT input.n, ns.id AS namespace_id, input.key COLLATE "C" AS key, input.description
    FROM input JOIN namespaces ns ON ns.org_id = input.org_id AND ns.key = input.namespace COLLATE "C"),
  created AS (
    INSERT INTO bases (namespace_id, key, description, created_at, updated_at)
    SELECT namespace_id, key, description, now(), now() FROM target ORDER BY namespace_id, key
    ON CONFLICT (namespace_id, key) DO NOTHING
    RETURNING namespace_id, key)
  SELECT target.n, created.key IS NOT NULL AS created FROM target LEFT JOIN created USING (namespace_id, key)`;

/** The start and the end of the statement that keeps replies under Idempotency-Keys (a later reply replaces one expired). */
const KEEP_REPLIES = 'INSERT INTO idempotency (org_id, key, fingerprint, status, body, created_at)';
const ON_KEPT_CONFLICT = `ON CONFLICT (org_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
  body = excluded.body, created_at = excluded.created_at`;

/** A reply as a row of KEEP_REPLIES, its values written in. */
function keptReplyRow(capture: IdempotencyCapture, reply: StoredReply): string {
  return `(${sql.integer(capture.orgId)}, ${sql.text(capture.key)}, ${sql.text(capture.fingerprint)}, ${sql.integer(reply.status)}, ${sql.text(reply.body)}, now())`;
}

const isText = (value: unknown): value is string => typeof value === 'string' && !value.includes('\u0000');

/** The writes of a batch, each to run on its own (its op, in a savepoint), none in a shared INSERT of base rows. */
function alone(batch: Pending[]): Pending[] {
  for (const item of batch) item.row = undefined;
  return batch;
}

/** A base create's outcome as the batch's INSERT decided it. */
function rowOutcome(item: Pending, verdict: 'created' | 'exists'): WriteOutcome {
  const { base } = item.row as BaseRow;
  return verdict === 'created'
    ? { ok: true, value: { namespace: base.namespace, key: base.key, description: base.description } }
    : { ok: false, error: failures.baseExists(base.namespace, base.key) };
}

async function insertToken(client: Queryable, org: string, id: string, tokenHash: Buffer): Promise<TokenInfo> {
  await client.query('INSERT INTO orgs (name, created_at) VALUES ($1, now()) ON CONFLICT (name) DO NOTHING', [org]);
  const { rows } = await client.query<{ created_at: Date }>(
    'INSERT INTO tokens (id, org_id, hash, created_at) SELECT $1, id, $3, now() FROM orgs WHERE name = $2 RETURNING created_at',
    [id, org, tokenHash],
  );
  return { id, org, createdAt: (rows[0] as { created_at: Date }).created_at.toISOString(), revokedAt: null };
}

/** The not_found of a base write that matched no row: the namespace's when it is missing, else the base's. */
async function baseNotFound(client: Queryable, orgId: number, namespace: string, key: string): Promise<KbApiError> {
  const { rows } = await client.query('SELECT 1 FROM namespaces WHERE org_id = $1 AND key = $2', [orgId, namespace]);
  return rows.length === 0 ? failures.namespaceNotFound(namespace) : failures.baseNotFound(namespace, key);
}

/**
 * Connects once to see that the database answers, retrying while it is unreachable (not started yet, restarting,
 * a name not resolvable yet) until waitMs has passed. A database that answers but refuses (wrong password, no such
 * database) is reported at once: waiting would not change its answer.
 */
async function waitForDatabase(options: PostgresStoreOptions, shown: string, redact: (text: string) => string): Promise<void> {
  const waitMs = options.waitMs ?? 10_000;
  const deadline = Date.now() + waitMs;
  let delay = 100;
  let told = false;
  for (;;) {
    const left = deadline - Date.now();
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: Math.min(5000, Math.max(left, 1000)) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      const reason = redact(reasonOf(error));
      if (!isConnectionFailure(error)) throw refusal(`cannot open the database at ${shown}: ${reason}`, error);
      if (Date.now() >= deadline) {
        throw new StoreUnreachableError(
          `cannot reach the database at ${shown}${waitMs > 0 ? ` (waited ${seconds(waitMs)})` : ''}: ${reason}`,
          'Check that PostgreSQL is running and that the URL names the right host and port.',
        );
      }
      if (!told) {
        options.onWaiting?.(`cannot reach the database at ${shown} yet (${reason}); trying again for up to ${seconds(waitMs)}`);
        told = true;
      }
      await sleep(Math.min(delay, Math.max(deadline - Date.now(), 0)));
      delay = Math.min(delay * 2, 1000);
    }
  }
}

/** A StoreOpenError with help for the refusals PostgreSQL states by SQLSTATE. */
function refusal(message: string, error: unknown): StoreOpenError {
  const state = sqlState(error);
  const help =
    state === '28P01' || state === '28000'
      ? 'Check the user name and password in the URL.'
      : state === '3D000'
        ? 'Create the database first (createdb NAME), or name an existing one.'
        : state === '42501'
          ? 'Let the user create tables in the database (it should own it), or pick a database it owns.'
          : undefined;
  return new StoreOpenError(message, help);
}

/**
 * Brings the schema to this kb's version in one transaction, under an advisory lock, so that replicas starting
 * together migrate once. Refuses, without writing anything, a database that is not kb's (it has tables but no
 * kb_schema, or a kb_schema of another application) or whose schema is newer than this kb.
 */
async function migrate(pool: pg.Pool, shown: string, redact: (text: string) => string): Promise<void> {
  let client: Client;
  try {
    client = await pool.connect();
  } catch (error) {
    throw refusal(`cannot open the database at ${shown}: ${redact(reasonOf(error))}`, error);
  }
  let broken: Error | undefined;
  const lost = (error: Error) => (broken ??= error);
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows } = await client.query<{ schema: string | null; marked: boolean; relations: number }>(
      `SELECT current_schema() AS schema,
              to_regclass(quote_ident(current_schema()) || '.${SCHEMA_TABLE}') IS NOT NULL AS marked,
              (SELECT count(*) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
               WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')) AS relations`,
    );
    const found = rows[0] as { schema: string | null; marked: boolean; relations: number };
    if (found.schema === null) {
      throw new StoreOpenError(`the database at ${shown} has no schema to keep kb's tables in`, 'Check the search_path of the user.');
    }
    let version = 0;
    if (found.marked) {
      const marks = await client.query<{ application: string; version: number }>(`SELECT application, version FROM ${SCHEMA_TABLE}`);
      const mark = marks.rows[0];
      if (marks.rows.length !== 1 || mark?.application !== APPLICATION) throw foreign(shown);
      version = mark.version;
    } else if (found.relations > 0) {
      throw foreign(shown);
    }
    if (version > POSTGRES_SCHEMA_VERSION) {
      throw new StoreOpenError(
        `the database at ${shown} has schema version ${version}, newer than this kb supports (${POSTGRES_SCHEMA_VERSION}).`,
        'Upgrade kb to open it.',
      );
    }
    if (version < POSTGRES_SCHEMA_VERSION) {
      if (version === 0) {
        await client.query(CREATE_SCHEMA_TABLE);
        await client.query(`INSERT INTO ${SCHEMA_TABLE} (application, version) VALUES ($1, 0)`, [APPLICATION]);
      }
      for (let next = version; next < POSTGRES_SCHEMA_VERSION; next++) await client.query(POSTGRES_MIGRATIONS[next] as string);
      await client.query(`UPDATE ${SCHEMA_TABLE} SET version = $1`, [POSTGRES_SCHEMA_VERSION]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    if (error instanceof StoreOpenError) throw error;
    if (isConnectionFailure(error)) throw new StoreUnreachableError(`lost the database at ${shown}: ${redact(reasonOf(error))}`);
    throw refusal(`cannot set up kb's tables in the database at ${shown}: ${redact(reasonOf(error))}`, error);
  } finally {
    client.off('error', lost);
    client.release(broken);
  }
}

function foreign(shown: string): StoreOpenError {
  return new StoreOpenError(
    `the database at ${shown} is not a kb database: it has tables of another application.`,
    'Give kb an empty database of its own (createdb kb), or one kb created.',
  );
}
