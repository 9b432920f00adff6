import pg from 'pg';
import { CommitListeners } from './changes.js';
import { CHANGES_CHANNEL } from './postgres-migrations.js';

/** What a write may change, so that a commit tells the caches that keep it: tokens (and organizations), or data. */
export type Changes = 'tokens' | 'data';

/** How long a fence may take before the LISTEN connection is taken for lost (and nothing is kept meanwhile). */
export const FENCE_TIMEOUT_MS = 5000;

/**
 * The replica's view of what other replicas committed: a connection of its own that LISTENs to kb_changes (see
 * postgres-migrations.ts) and counts the notifications. When that connection is lost, notifications may be missed, so
 * it says so (version() is undefined) until it has reconnected and LISTENs again; a new epoch then drops whatever was
 * kept before the gap.
 */
export class ChangeListener {
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
  /** Told of each change to an organization's data (its id), or to any's (undefined: a TRUNCATE, a LISTEN gap): the watch. */
  readonly dataChanged = new CommitListeners();

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
    this.dataChanged.tell(orgId);
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
