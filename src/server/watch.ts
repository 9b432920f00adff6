import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KbApiError } from '../api/errors.js';
import { API_PREFIX } from '../api/routes.js';
import { parseInput } from '../api/validation.js';
import { WATCH_CURSOR_HEADER, WATCH_PATH, WatchQuery } from '../api/watch.js';
import type { Change, ChangeLog, Snapshot } from '../store/changes.js';
import type { Principal, Store } from '../store/store.js';
import { bearerToken } from './auth.js';
import { sendError } from './errors.js';
import { methodsOf, refusedWhileClosing } from './http.js';
import { sharedPlugin } from './plugin.js';
import { hashToken } from './tokens.js';

// GET /v1/watch (docs/contract.md, Live changes): each organization's change log, streamed as Server-Sent Events.

/** Changes read from the log at once, at most: with descriptions of 4 KB, a page is 800 KB. */
const PAGE = 200;
/** A comment this often on every stream (the contract asks at least every 15 s): proxies keep it, clients see it live. */
export const HEARTBEAT_MS = 10_000;
/** How often the tokens of open streams are checked: a revocation or an expiry ends them within a second (docs/contract.md, Tokens). */
export const TOKEN_CHECK_MS = 1000;
/** Bytes a watcher may leave unread before it is ended: it resumes from its last id (bounded memory per watcher). */
export const WATCHER_BUFFER_BYTES = 1024 * 1024;
/**
 * How long a stream sent at its reader's pace (a backlog, a ?initial=true snapshot) may wait for its reader to take
 * anything: then it is ended, and what it held for it let go. It resumes from its last id (a snapshot asks again).
 */
export const WATCHER_STALL_MS = 30_000;

/** What /metrics reads of the watchers. */
export interface WatchStats {
  watchers(): number;
  eventsSent(): number;
}

/** The event of each change read, made once for all the watchers it goes to (1,000 watchers: 1 JSON.stringify, not 1,000). */
const eventTexts = new WeakMap<Change, string>();

function eventText(change: Change): string {
  let text = eventTexts.get(change);
  if (text === undefined) {
    text = `id: ${change.seq}\nevent: change\ndata: ${JSON.stringify({ type: change.type, kind: change.kind, object: change.object })}\n\n`;
    eventTexts.set(change, text);
  }
  return text;
}

/** One open stream: where it is in its organization's log, and what of it it wants. */
class Watcher {
  /** The last change sent or skipped (cursor): the next one it may take is cursor + 1. */
  constructor(
    readonly reply: FastifyReply,
    readonly namespace: string | undefined,
    public cursor: number,
    private readonly counted: (events: number) => void,
    private readonly stallMs: number,
  ) {}

  get open(): boolean {
    return !this.reply.raw.destroyed && !this.reply.raw.writableEnded;
  }

  /**
   * Sends a change in order; a change it has had already is skipped; a gap ends the stream (it resumes from its id).
   * False when the connection's buffer is past its high-water mark (a caller that can wait waits for 'drain').
   */
  take(change: Change): boolean {
    if (change.seq <= this.cursor) return true;
    if (change.seq !== this.cursor + 1) {
      this.end();
      return true;
    }
    this.cursor = change.seq;
    const namespace = change.kind === 'namespace' ? change.object.key : change.object.namespace;
    if (this.namespace !== undefined && namespace !== this.namespace) return true;
    this.counted(1);
    return this.write(eventText(change));
  }

  /** Writes, and ends a reader that has left too much unread: it reconnects with its last id and loses nothing. */
  write(text: string): boolean {
    if (!this.open) return true;
    const below = this.reply.raw.write(text);
    if (this.reply.raw.writableLength > WATCHER_BUFFER_BYTES) this.reply.raw.destroy();
    return below;
  }

  /** Resolves once the connection has taken what was written, or has closed: ended if its reader took nothing for stallMs. */
  drained(): Promise<void> {
    const raw = this.reply.raw;
    if (!this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const stalled = setTimeout(() => raw.destroy(), this.stallMs);
      const done = () => {
        clearTimeout(stalled);
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    });
  }

  end(): void {
    if (this.open) this.reply.raw.end();
  }
}

/**
 * The objects of ?initial=true as `created` events, then `synced`, at the reader's pace through the watcher's bound:
 * one event's text at a time, never the whole snapshot as one string in the connection's buffer.
 */
async function sendSnapshot(watcher: Watcher, snapshot: Snapshot): Promise<void> {
  const send = async (text: string) => {
    if (!watcher.write(text)) await watcher.drained();
  };
  const inScope = (namespace: string) => watcher.namespace === undefined || namespace === watcher.namespace;
  for (const ns of snapshot.namespaces) {
    if (!watcher.open) return;
    if (inScope(ns.key)) await send(`event: change\ndata: ${JSON.stringify({ type: 'created', kind: 'namespace', object: ns })}\n\n`);
  }
  for (const base of snapshot.bases) {
    if (!watcher.open) return;
    if (inScope(base.namespace)) await send(`event: change\ndata: ${JSON.stringify({ type: 'created', kind: 'base', object: base })}\n\n`);
  }
  watcher.write(`id: ${snapshot.seq}\nevent: synced\ndata: {}\n\n`);
}

/**
 * One organization's watchers, fed by one read of the log per commit whatever their number. Its work is one queue, so
 * that a watcher joins (reads what it missed) between two fan-outs, never during one.
 */
class Feed {
  readonly watchers = new Set<Watcher>();
  /** The last change the fan-out read. */
  private seq: number | undefined;
  private queue: Promise<void> = Promise.resolve();
  private fanOutQueued = false;
  /** Watchers reading their backlog, not yet among `watchers`: a feed is dropped only when it has neither. */
  private joining = 0;

  constructor(
    private readonly log: ChangeLog,
    private readonly orgId: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  private run(task: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(task).catch((error: unknown) => this.failed(error));
    return this.queue;
  }

  /** A commit may have added changes: one fan-out is queued (more commits meanwhile are read by it). */
  poke(): void {
    if (this.fanOutQueued || this.seq === undefined) return;
    this.fanOutQueued = true;
    void this.run(async () => {
      this.fanOutQueued = false;
      await this.fanOut();
    });
  }

  private async fanOut(): Promise<void> {
    for (;;) {
      if (this.watchers.size === 0 || this.seq === undefined) return;
      const read = await this.log.read(this.orgId, this.seq, PAGE);
      if (read.gone) {
        // Purged past the fan-out (or a database replaced under it): each watcher ends, and resumes or gets its 410.
        for (const watcher of this.watchers) watcher.end();
        return;
      }
      for (const change of read.changes) for (const watcher of this.watchers) watcher.take(change);
      const last = read.changes.at(-1);
      if (last !== undefined) this.seq = last.seq;
      if (read.changes.length < PAGE) return;
    }
  }

  /**
   * Sends a new watcher what it missed since its cursor, then feeds it with the others. A long backlog is sent at the
   * reader's pace, outside the feed's queue (the other watchers go on meanwhile); what was committed while it was sent
   * is read in the queue, between two fan-outs. A snapshot (?initial=true) is sent first, the same way.
   */
  async join(watcher: Watcher, snapshot?: Snapshot): Promise<void> {
    this.joining++;
    try {
      if (snapshot !== undefined) await sendSnapshot(watcher, snapshot);
      if (await this.catchUp(watcher, true)) return;
      await this.run(async () => {
        if (await this.catchUp(watcher, false)) return;
        this.watchers.add(watcher);
        this.seq ??= watcher.cursor;
        // Whatever was committed while it read is read by the next fan-out.
        this.poke();
      });
    } finally {
      this.joining--;
    }
  }

  /** No watcher fed and none joining: the hub may drop the feed (a watcher joining a dropped feed was never fed). */
  get idle(): boolean {
    return this.watchers.size === 0 && this.joining === 0;
  }

  /** Reads and sends the watcher's backlog; true when the watcher is gone (closed, or its cursor no longer kept). */
  private async catchUp(watcher: Watcher, paced: boolean): Promise<boolean> {
    for (;;) {
      if (!watcher.open) return true;
      const read = await this.log.read(this.orgId, watcher.cursor, PAGE);
      if (read.gone) {
        watcher.end();
        return true;
      }
      for (const change of read.changes) if (!watcher.take(change) && paced) await watcher.drained();
      if (read.changes.length < PAGE) return !watcher.open;
    }
  }
}

/** What the hub asks of the store to end the streams of a token revoked or expired since they opened. */
export type TokenCheck = Pick<Store, 'authenticate' | 'tokensVersion'>;

export interface WatchHubOptions {
  /** Milliseconds between two heartbeat comments (HEARTBEAT_MS). */
  heartbeatMs?: number | undefined;
  /** Milliseconds a stream sent at its reader's pace may wait for it (WATCHER_STALL_MS). */
  stallMs?: number | undefined;
  /** Where the tokens of open streams are checked again; without it, a token is checked only as its stream opens. */
  tokens?: TokenCheck | undefined;
}

/** The open streams of one token, checked once for all of them. */
class StreamToken {
  readonly watchers = new Set<Watcher>();
  /** The tokens version (Store.tokensVersion) it was last found valid at; undefined: to be checked at the next tick. */
  version: string | undefined;

  constructor(
    readonly hash: Buffer,
    public expiresAt: number | null,
  ) {}
}

/** The watchers of one server, by organization, their heartbeat, and the check of their tokens. */
export class WatchHub implements WatchStats {
  private readonly feeds = new Map<number, Feed>();
  private readonly unsubscribe: () => void;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly tokens = new Map<string, StreamToken>();
  /** Runs while a stream is open: one timer for every token, each looked up only when the tokens have changed. */
  private tokenTimer: NodeJS.Timeout | undefined;
  private checking = false;
  /** Whether the last check failed (a database that does not answer): logged once, not every second. */
  private checkFailed = false;
  private count = 0;
  private sent = 0;

  constructor(
    readonly log: ChangeLog,
    private readonly failed: (error: unknown) => void,
    private readonly options: WatchHubOptions = {},
  ) {
    this.unsubscribe = log.subscribe((orgId) => {
      if (orgId === undefined) for (const feed of this.feeds.values()) feed.poke();
      else this.feeds.get(orgId)?.poke();
    });
    // One timer for every stream: idle watchers cost no timer each.
    this.heartbeat = setInterval(() => {
      for (const feed of this.feeds.values()) for (const watcher of feed.watchers) watcher.write(': keep-alive\n\n');
    }, options.heartbeatMs ?? HEARTBEAT_MS).unref();
  }

  /** Keeps the watcher among its token's streams until it closes. */
  private watchToken(principal: Principal, hash: Buffer, watcher: Watcher): () => void {
    const id = principal.tokenId;
    let token = this.tokens.get(id);
    if (token === undefined) {
      token = new StreamToken(hash, principal.expiresAt);
      this.tokens.set(id, token);
    }
    const owner = token;
    owner.watchers.add(watcher);
    if (this.options.tokens !== undefined) this.tokenTimer ??= setInterval(() => void this.checkTokens(), TOKEN_CHECK_MS).unref();
    return () => {
      owner.watchers.delete(watcher);
      if (owner.watchers.size === 0 && this.tokens.get(id) === owner) this.tokens.delete(id);
      if (this.tokens.size === 0 && this.tokenTimer !== undefined) {
        clearInterval(this.tokenTimer);
        this.tokenTimer = undefined;
      }
    };
  }

  /**
   * Ends the streams of each token expired by this server's clock, or no longer valid (revoked, here or on another
   * replica: the tokens version tells) once looked up again. An ended stream's client reconnects and gets its 401.
   */
  private async checkTokens(): Promise<void> {
    const check = this.options.tokens;
    if (this.checking || check === undefined) return;
    this.checking = true;
    try {
      // Read before the lookups: a change of the tokens told after it is looked up at the next tick.
      const version = check.tokensVersion?.();
      const now = Date.now();
      for (const token of [...this.tokens.values()]) {
        let valid = token.expiresAt === null || token.expiresAt > now;
        if (valid && (version === undefined || token.version !== version)) {
          const principal = await check.authenticate(token.hash);
          valid = principal !== null && (principal.expiresAt === null || principal.expiresAt > now);
          token.version = version;
        }
        if (!valid) for (const watcher of token.watchers) watcher.end();
      }
      this.checkFailed = false;
    } catch (error) {
      if (!this.checkFailed) this.failed(error);
      this.checkFailed = true;
    } finally {
      this.checking = false;
    }
  }

  watchers(): number {
    return this.count;
  }

  eventsSent(): number {
    return this.sent;
  }

  counted = (events: number): void => {
    this.sent += events;
  };

  /** Adds a stream at `cursor` (its events begin after it, the snapshot's first if any); it leaves when its connection ends. */
  add(principal: Principal, tokenHash: Buffer, reply: FastifyReply, namespace: string | undefined, cursor: number, snapshot?: Snapshot): Promise<void> {
    const { orgId } = principal;
    let feed = this.feeds.get(orgId);
    if (feed === undefined) {
      feed = new Feed(this.log, orgId, this.failed);
      this.feeds.set(orgId, feed);
    }
    const watcher = new Watcher(reply, namespace, cursor, this.counted, this.options.stallMs ?? WATCHER_STALL_MS);
    this.count++;
    const owner = feed;
    const forget = () => {
      if (owner.idle && this.feeds.get(orgId) === owner) this.feeds.delete(orgId);
    };
    const unwatchToken = this.watchToken(principal, tokenHash, watcher);
    reply.raw.once('close', () => {
      this.count--;
      unwatchToken();
      owner.watchers.delete(watcher);
      forget();
    });
    // A watcher that closed while it joined leaves its feed idle only once the join is over.
    return feed.join(watcher, snapshot).finally(forget);
  }

  /** Ends every stream (a server that stops): clients reconnect, to another replica, with their last id. */
  endAll(): void {
    for (const feed of this.feeds.values()) for (const watcher of feed.watchers) watcher.end();
  }

  close(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.tokenTimer);
    this.unsubscribe();
    this.endAll();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The watchers of GET /v1/watch; undefined when the store keeps no change log. */
    watchHub: WatchHub | undefined;
  }
}

/** The cursor to resume after: Last-Event-ID wins over ?since (a reconnecting EventSource sends the header). */
function cursorOf(request: FastifyRequest, query: WatchQuery): number | undefined {
  const header = request.headers['last-event-id'];
  const text = typeof header === 'string' && header !== '' ? header : query.since;
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new KbApiError('bad_request', `Invalid Last-Event-ID: ${JSON.stringify(text.slice(0, 40))} is not a cursor`, 'Use the id of an event of this stream.');
  return Number(text);
}

const gone = (cursor: number) =>
  new KbApiError('gone', `Cursor ${cursor} is not kept by this server: older than the changes it keeps, or not one of its cursors`, 'List again (or watch with ?initial=true), then watch from now.');

/** The route: validates, answers 410 before any byte of the stream, then streams until the client or the server ends. */
export const watchRoute = sharedPlugin<{ hub: WatchHub | undefined }>((app: FastifyInstance, options, done) => {
  const { hub } = options;
  app.decorate('watchHub', hub);
  if (hub !== undefined) {
    // Before the server waits for its connections to end: streams would never end by themselves.
    app.addHook('preClose', (hookDone) => {
      hub.close();
      hookDone();
    });
  }
  app.route({
    method: methodsOf('GET'),
    url: API_PREFIX + WATCH_PATH,
    onRequest: app.authenticate,
    handler: async (request, reply) => {
      if (refusedWhileClosing(app, reply)) return reply;
      if (hub === undefined) return sendError(reply, new KbApiError('not_found', 'This server keeps no change log: GET /v1/watch is not served'));
      const query = parseInput(WatchQuery, { ...(request.query as object) }, 'query');
      const cursor = cursorOf(request, query);
      const principal = request.principal as Principal;
      const initial = query.initial === 'true' && cursor === undefined;
      let start: number;
      let snapshot: Snapshot | undefined;
      if (cursor !== undefined) {
        // Checked before the stream starts, so that a cursor past retention gets its 410 and no event.
        const read = await hub.log.read(principal.orgId, cursor, 0);
        if (read.gone) return sendError(reply, gone(cursor));
        start = cursor;
      } else if (initial) {
        snapshot = await hub.log.snapshot(principal.orgId);
        start = snapshot.seq;
      } else {
        start = await hub.log.head(principal.orgId);
      }
      if (request.method === 'HEAD') return reply.code(200).header('content-type', 'text/event-stream').send();
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // Proxies such as nginx buffer a response unless told not to.
        'x-accel-buffering': 'no',
        // The cursor the stream starts after: a client that drops before any event resumes from it (kb watch).
        [WATCH_CURSOR_HEADER]: String(start),
      });
      raw.flushHeaders();
      // The stream is open: a comment now tells the client so (EventSource's open, a proxy's first byte).
      if (snapshot === undefined) raw.write(': watching\n\n');
      await hub.add(principal, hashToken(bearerToken(request) as string), reply, query.namespace, start, snapshot);
      return reply;
    },
  });
  done();
});
