import pg from 'pg';
import { CommitListeners } from './changes.js';
import { CHANGES_CHANNEL } from './postgres-migrations.js';
import { connectionConfig, ROUND_TRIP_MS, STALLED_MS } from './postgres-pool.js';

/** What a write may change, so that a commit tells the caches that keep it: tokens (and organizations), or data. */
export type Changes = 'tokens' | 'data';

/**
 * The replica's view of what other replicas committed: a connection of its own that LISTENs to kb_changes (see
 * postgres-migrations.ts) and counts the notifications. When that connection is lost, notifications may be missed, so
 * it says so (version() is undefined) until it has reconnected and LISTENs again; a new epoch then drops whatever was
 * kept before the gap. A connection that stops answering (a fence unanswered for STALLED_MS) is said so too, at once,
 * and is dropped and replaced once its round trip reaches pg's bound (query_timeout, postgres-pool.ts).
 */
export class ChangeListener {
  private client: pg.Client | undefined;
  private listening = false;
  /** When the fence that has gone unanswered for STALLED_MS was sent; undefined while the connection answers. */
  private stalledSince: number | undefined;
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
  /** Told of each change to an organization's data (its id), or to any's (undefined: a TRUNCATE, a LISTEN gap): the watch. */
  readonly dataChanged = new CommitListeners();

  constructor(
    private readonly url: string,
    /** The bound on a round trip of the LISTEN connection (postgres-pool.ts). */
    private readonly roundTripMs = ROUND_TRIP_MS,
  ) {}

  /** Connects and LISTENs; rejects when the first attempt fails (open() then fails as it would without a listener). */
  start(): Promise<void> {
    return this.connect();
  }

  /**
   * The version of one organization's data, or undefined while notifications may be missed: changed by its own
   * writes, by a token's, and by a change of unknown organization (a TRUNCATE), never by another organization's.
   */
  versionOf(orgId: number): string | undefined {
    if (!this.isListening) return undefined;
    return `${this.epoch}.${this.counts.tokens}.${this.anyOrg}.${this.orgs.get(orgId) ?? 0}`;
  }

  /** A write of this replica to an organization's data: counted at once, before its reply and its notification. */
  wrote(orgId: number): void {
    this.counts.data++;
    this.orgs.set(orgId, (this.orgs.get(orgId) ?? 0) + 1);
    this.dataChanged.tell(orgId);
  }

  /** Whether it listens now, and answers: when not, other replicas' commits may go unseen. */
  get isListening(): boolean {
    return this.listening && this.stalledSince === undefined;
  }

  /** How long the fence in flight has gone unanswered, once that is STALLED_MS or more; else undefined. */
  stalled(): number | undefined {
    return this.stalledSince === undefined ? undefined : performance.now() - this.stalledSince;
  }

  /** The version of what this replica may keep, or undefined while it may be missing notifications. */
  version(of: Changes | 'all'): string | undefined {
    if (!this.isListening) return undefined;
    if (of === 'tokens') return `${this.epoch}.${this.counts.tokens}`;
    return `${this.epoch}.${this.counts.tokens}.${this.counts.data}`;
  }

  /**
   * Resolves once every notification of a transaction committed before this call has been counted: a query on the
   * LISTEN connection, whose result PostgreSQL sends after the notifications pending for it. A fence sent in this turn
   * of the event loop serves every request read in it (their bytes arrived before it was sent). One sent in an earlier
   * turn may not serve: the calls that come while it is on its way share the next one, sent once it is back, so there is
   * at most one fence per round trip however many requests arrive. Undefined while not listening, or while a fence has
   * gone unanswered for STALLED_MS: a fence rejects once it has waited that long (reads then go to the database, not to
   * what was kept), and one unanswered by pg's bound drops the connection.
   */
  fence(): Promise<void> | undefined {
    if (!this.isListening || this.client === undefined) return undefined;
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
    if (!this.isListening || client === undefined) return Promise.reject(new Error('not listening'));
    const sent = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        if (this.client === client) this.stalledSince = sent;
        reject(new Error(`the LISTEN connection has not answered for ${STALLED_MS} ms`));
      }, STALLED_MS);
    });
    const answered = client.query('SELECT 1').then(
      () => {
        clearTimeout(timer);
        if (this.client === client) this.stalledSince = undefined;
      },
      (error: unknown) => {
        clearTimeout(timer);
        this.drop(client);
        throw error;
      },
    );
    // Settled (and so counted) whichever way it goes; what waits for it is the race below.
    answered.catch(() => undefined);
    const fence = Promise.race([answered, late]);
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
    const client = new pg.Client(connectionConfig(this.url, 'kb serve (listen)', this.roundTripMs));
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
        this.dataChanged.tell(undefined);
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
    // Notifications may have been missed while it did not listen.
    this.dataChanged.tell(undefined);
  }

  /** Forgets a LISTEN connection that broke (or stalled), and connects again after a while. */
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    this.stalledSince = undefined;
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
