import { channel } from 'node:diagnostics_channel';
import pg from 'pg';
import { KbApiError } from '../api/errors.js';
import { type Client, CommitUnconfirmed, isConnectionFailure, storageFailure } from './postgres-sql.js';

// The PostgreSQL engine's connections: how long kb waits for the database, the pool, the group commit's kept
// connections, and which connections stopped answering (docs/scaling.md, "Faults").

/**
 * The most a replica waits for the answer to one round trip to the database (pg's query_timeout), and for a new
 * connection: a database host that froze, a half-open TCP connection or a firewall that dropped its state answer
 * nothing at all (the server's own statement_timeout cannot fire on a connection it does not read), and the requests
 * held on such a connection are answered 503 within this bound; the connection is closed and the pool opens another.
 * A healthy round trip takes milliseconds; 5 s lets a database that is busy but alive answer (its own statement
 * timeout below ends a slow statement first), and answers well before a client gives up (kb's own timeout is 30 s).
 */
export const ROUND_TRIP_MS = 5000;
/**
 * PostgreSQL ends a statement that runs longer (a lock wait behind a stalled transaction, say) a second before the
 * bound: the database answers it with an error (503, nothing written), and the connection stays in use.
 */
export const statementMs = (roundTripMs: number) => roundTripMs - 1000;
/**
 * A round trip unanswered this long counts as stalled: the replica is not ready (/ready 503, as a probe that waited as
 * long would conclude) and reads stop waiting for a LISTEN connection that stalls. Longer than a healthy round trip
 * under load, shorter than a readiness probe's usual timeout.
 */
export const STALLED_MS = 1000;
/**
 * Schema migrations and the hourly purge of idempotency replies may legitimately run long: they run under this bound
 * instead (and PostgreSQL's statement timeout a second below it).
 */
export const MAINTENANCE_ROUND_TRIP_MS = 30_000;
/**
 * TCP keepalive on every connection, probing after this long idle (then, as libuv sets it, every second, 10 times):
 * an idle connection whose peer vanished or whose state a firewall dropped is found broken (and replaced) in about
 * 20 s, not the hours of the system's default.
 */
export const KEEPALIVE_IDLE_MS = 10_000;

/** int8 (counts and identity columns) as a JS number rather than pg's default string; kb's ids stay far below 2^53. */
export const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** What every connection of kb sets: the bounds above (roundTripMs, ROUND_TRIP_MS unless told), keepalive, its name. */
export function connectionConfig(url: string, applicationName: string, roundTripMs = ROUND_TRIP_MS): pg.ClientConfig {
  return {
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: ROUND_TRIP_MS,
    query_timeout: roundTripMs,
    statement_timeout: statementMs(roundTripMs),
    // A replica that stalls inside a transaction does not hold its locks for long.
    idle_in_transaction_session_timeout: 60_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    types: TYPES,
  };
}

/**
 * Every checkout of a pool connection, published for whoever subscribes (tests counting what a request costs, metrics):
 * `diagnostics_channel.subscribe('kb:postgres:checkout', ...)`. Nothing is published while no one listens.
 */
export const CHECKOUT_CHANNEL = 'kb:postgres:checkout';
const checkouts = channel(CHECKOUT_CHANNEL);

/** A request turned away at once because this replica's connections are all taken and enough requests wait already. */
const overloaded = () => new KbApiError('unavailable', 'The server is busy with other requests', 'Retry in a moment.');

/**
 * A replica's pool, and the connections the group commit keeps between its batches. A broken connection never ends
 * the process: every client the pool opens has an 'error' listener for its whole life. A connection that broke, or
 * that did not answer a round trip within ROUND_TRIP_MS, is closed instead of going back to the pool, and the pool
 * opens a new one when one is needed.
 */
export class Connections {
  readonly pool: pg.Pool;
  /** Broken connections, told by their 'error' event or by a round trip that went unanswered: never reused. */
  readonly broken = new WeakMap<pg.ClientBase, Error>();
  /**
   * Connections the group commit keeps between its batches (no checkout per batch), `keep` at most. They go back to
   * the pool when a request waits for a connection and none is free, and when the store closes.
   */
  private readonly writers: Client[] = [];
  /** The round trips waiting for the database now, each with when it was sent (oldest first). */
  private readonly waiting = new Set<{ since: number }>();
  private closing = false;
  /** The store these connections serve, as the checkout channel names it. */
  owner: unknown;

  constructor(
    url: string,
    roundTripMs: number,
    private readonly poolSize: number,
    /** Requests that may wait for a connection when all are taken; more are refused at once with 503. */
    private readonly queueLimit: number,
    /** Connections the group commit keeps at most. */
    private readonly keep: number,
  ) {
    this.pool = new pg.Pool({ ...connectionConfig(url, 'kb serve', roundTripMs), max: poolSize });
    // pg takes the pool's own 'error' listener off a client while it is checked out, and pool.query's listener goes
    // after the first error: a connection that breaks then (a database restart, pg_terminate_backend) would raise an
    // unhandled 'error' and end the process. This listener stays for the client's whole life.
    this.pool.on('connect', (client) => client.on('error', (error: Error) => void this.broken.set(client, error)));
    // An idle connection that breaks is dropped by the pool; the next query opens a new one.
    this.pool.on('error', () => undefined);
  }

  /** A connection of the pool, or a 503: at once when too many requests wait for one already. */
  async checkout(): Promise<Client> {
    if (this.pool.waitingCount >= this.queueLimit) throw overloaded();
    if (checkouts.hasSubscribers) checkouts.publish({ store: this.owner });
    // Every connection taken: the group commit's idle ones go back first.
    if (this.writers.length > 0 && this.pool.idleCount === 0 && this.pool.totalCount >= this.poolSize) this.releaseWriters();
    try {
      return await this.pool.connect();
    } catch (error) {
      throw storageFailure(error);
    }
  }

  /** A connection for a batch: one the group commit kept (unless it broke meanwhile), else one of the pool. */
  writer(): Promise<Client> {
    for (let kept = this.writers.pop(); kept !== undefined; kept = this.writers.pop()) {
      if (!this.broken.has(kept)) return Promise.resolve(kept);
      this.release(kept);
    }
    return this.checkout();
  }

  /** Keeps a batch's connection for the next batch, unless a request waits for one or the store closes. */
  keepWriter(client: Client): void {
    if (this.closing || this.pool.waitingCount > 0 || this.broken.has(client) || this.writers.length >= this.keep) this.release(client);
    else this.writers.push(client);
  }

  releaseWriters(): void {
    for (const client of this.writers.splice(0)) this.release(client);
  }

  /**
   * Whether an error leaves the connection unusable: it broke, or it did not answer in time (what it would answer
   * next is unknown). Such a connection is marked broken: no ROLLBACK is sent on it, and release() closes it.
   */
  lost(client: Client, error: unknown): boolean {
    if (this.broken.has(client)) return true;
    const cause = error instanceof CommitUnconfirmed ? error.cause : error;
    if (!isConnectionFailure(cause)) return false;
    this.broken.set(client, cause instanceof Error ? cause : new Error(String(cause)));
    return true;
  }

  /** Gives a connection back; one that broke, or whose state is unknown after an error, is closed instead. */
  release(client: Client, error?: unknown): void {
    const lost = this.broken.get(client);
    client.release(lost ?? (error instanceof Error ? error : undefined));
  }

  /** Runs round trips to the database, counted as waiting from now until they settle (stalled()). */
  timed<T>(run: () => Promise<T>): Promise<T> {
    const entry = { since: performance.now() };
    this.waiting.add(entry);
    const done = () => void this.waiting.delete(entry);
    const promise = run();
    promise.then(done, done);
    return promise;
  }

  /** How long the oldest round trip in flight has waited, when that is STALLED_MS or more; else undefined. */
  stalled(): number | undefined {
    for (const entry of this.waiting) {
      const waited = performance.now() - entry.since;
      return waited >= STALLED_MS ? waited : undefined;
    }
    return undefined;
  }

  usage(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async end(): Promise<void> {
    this.closing = true;
    this.releaseWriters();
    await this.pool.end();
  }
}
