import { createServer, request as httpRequest, type Server } from 'node:http';
import type { ExpectStatic } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** An event of GET /v1/watch as a test reads it. */
export interface WatchEvent {
  id: string | undefined;
  event: string;
  data: { type: 'created' | 'updated' | 'deleted'; kind: 'namespace' | 'base'; object: { namespace?: string; key: string; description: string | null } };
}

export interface OpenStream {
  status: number;
  headers: Headers;
  /** The failure envelope of a stream refused (not 200). */
  body: unknown;
  events: WatchEvent[];
  /** Resolves once `test` holds of the events read so far (checked after each event); rejects when the stream ends first. */
  until(test: (events: WatchEvent[]) => boolean): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens GET /v1/watch with fetch and reads its events with eventsource-parser, as they arrive. */
export async function openWatch(baseUrl: string, token: string, query = '', headers: Record<string, string> = {}): Promise<OpenStream> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/v1/watch${query}`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: abort.signal });
  const events: WatchEvent[] = [];
  const waiters = new Set<{ test: (events: WatchEvent[]) => boolean; resolve: () => void; reject: (error: Error) => void }>();
  const check = () => {
    for (const waiter of waiters) {
      if (waiter.test(events)) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };
  if (response.status !== 200) {
    const body: unknown = await response.json();
    return { status: response.status, headers: response.headers, body, events, until: () => Promise.reject(new Error('refused')), ended: Promise.resolve(), close: () => undefined };
  }
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      events.push({ id: message.id, event: message.event ?? 'message', data: JSON.parse(message.data) as WatchEvent['data'] });
      check();
    },
  });
  let done = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Aborted by close(), or cut by the server: the stream has ended either way.
    }
    done = true;
    for (const waiter of waiters) waiter.reject(new Error(`the stream ended after ${events.length} events`));
    waiters.clear();
  })();
  return {
    status: 200,
    headers: response.headers,
    body: undefined,
    events,
    ended,
    until(test) {
      if (test(events)) return Promise.resolve();
      if (done) return Promise.reject(new Error(`the stream ended after ${events.length} events`));
      return new Promise((resolve, reject) => waiters.add({ test, resolve, reject }));
    },
    close: () => abort.abort(),
  };
}

/** The namespaces and bases that a stream's change events give, applied in order over an empty (or initial) model. */
export function replay(events: readonly WatchEvent[]): { namespaces: Map<string, string | null>; bases: Map<string, string | null> } {
  const namespaces = new Map<string, string | null>();
  const bases = new Map<string, string | null>();
  for (const { event, data } of events) {
    if (event !== 'change') continue;
    const map = data.kind === 'namespace' ? namespaces : bases;
    const key = data.kind === 'namespace' ? data.object.key : `${data.object.namespace}/${data.object.key}`;
    if (data.type === 'deleted') map.delete(key);
    else map.set(key, data.object.description);
  }
  return { namespaces, bases };
}

/** The same model read from the lists: what the replay must equal. */
export function modelOf(namespaces: Array<{ key: string; description: string | null }>, bases: Array<{ namespace: string; key: string; description: string | null }>) {
  return {
    namespaces: new Map(namespaces.map((ns) => [ns.key, ns.description])),
    bases: new Map(bases.map((base) => [`${base.namespace}/${base.key}`, base.description])),
  };
}

/** A small seeded random source (mulberry32), so that a failing run can be repeated with its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writers: `count` requests over `urls`, `concurrency` at a time, of every kind: creates (some of keys taken: 409),
 * updates and deletes (some of keys missing: 404), namespace deletes (with "cascade": true, or 409 for a namespace
 * that holds bases), bases into namespaces that do not exist yet, repeats of an
 * Idempotency-Key (replayed: no change), and invalid bodies (400). Resolves the statuses seen.
 */
export async function randomWrites(urls: readonly string[], token: string, count: number, concurrency: number, random: () => number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
  const ns = () => `ns${Math.floor(random() * 6)}`;
  const base = () => `b${Math.floor(random() * 8)}`;
  const keys: string[] = [];
  let next = 0;
  const one = async () => {
    const n = next++;
    const roll = random();
    let method = 'POST';
    let path: string;
    let body: unknown;
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    if (roll < 0.15) [path, body] = ['/ns_create', { key: ns(), description: `n${n}` }];
    else if (roll < 0.42) [path, body] = ['/base_create', { namespace: ns(), key: base(), description: `c${n}` }];
    else if (roll < 0.45) [method, path, body] = ['DELETE', '/ns_delete', { namespace: ns(), cascade: random() < 0.5 }];
    else if (roll < 0.6) [path, body] = ['/base_update', { namespace: ns(), base: base(), data: { description: random() < 0.2 ? null : `u${n}` } }];
    else if (roll < 0.7) [path, body] = ['/ns_update', { namespace: ns(), data: { description: `u${n}` } }];
    else if (roll < 0.85) [method, path, body] = ['DELETE', '/base_delete', { namespace: ns(), base: base() }];
    else if (roll < 0.95) {
      // A keyed write, or a repeat of an earlier key with the same body: the repeat is replayed, no new change.
      const repeat = keys.length > 0 && random() < 0.5;
      const key = repeat ? pick(keys) : `k${n}`;
      if (!repeat) keys.push(key);
      headers['idempotency-key'] = key;
      [path, body] = ['/base_create', { namespace: `keyed${key.length % 2}`, key, description: null }];
    } else if (roll < 0.975) [path, body] = ['/ns_create', { key: 'Not A Key!' }];
    // A miss that does not depend on what the other writes did (a base deleted, a namespace not made yet).
    else [path, body] = ['/ns_update', { namespace: 'never-made', data: { description: `u${n}` } }];
    const url = `${pick(urls)}/v1${path}`;
    // A keep-alive connection the server closed as the request went out is tried again: whether the first attempt
    // ran or not, the changes streamed must still give the lists read at the end.
    const response = await fetch(url, { method, headers, body: JSON.stringify(body) }).catch(() => fetch(url, { method, headers, body: JSON.stringify(body) }));
    await response.arrayBuffer();
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  };
  const worker = async () => {
    while (next < count) await one();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

/**
 * A watcher that drops its connection at random points and resumes with Last-Event-ID, on any of `urls`, until
 * stop() and it has reached `head`. Its events are every change of the organization from when it first connected.
 */
export class ChurningWatcher {
  readonly events: WatchEvent[] = [];
  readonly connections: number[] = [];
  private stream: OpenStream | undefined;
  private stopped: number | undefined;
  private done: Promise<void> | undefined;

  constructor(
    private readonly urls: readonly string[],
    private readonly token: string,
    private readonly random: () => number,
  ) {}

  get lastId(): string | undefined {
    return this.events.at(-1)?.id;
  }

  /** Connects a first time (changes from now on), then goes on by itself. */
  async start(): Promise<void> {
    await this.connect();
    this.done = this.loop();
  }

  /** Where the first stream began (its kb-watch-cursor header): a watcher that dropped before any event resumes there. */
  private began: string | undefined;

  private async connect(): Promise<void> {
    const url = this.urls[Math.floor(this.random() * this.urls.length)] as string;
    const last = this.lastId ?? this.began;
    const stream = await openWatch(url, this.token, '', last === undefined ? {} : { 'last-event-id': last });
    if (stream.status !== 200) throw new Error(`watch refused: ${stream.status} ${JSON.stringify(stream.body)}`);
    this.began ??= stream.headers.get('kb-watch-cursor') ?? undefined;
    this.connections.push(stream.status);
    this.stream = stream;
  }

  private async loop(): Promise<void> {
    for (;;) {
      const stream = this.stream as OpenStream;
      // Drop after a few more events (or when the target is reached), then resume.
      const leaveAfter = Math.floor(this.random() * 12);
      const seen = stream.events.length;
      // The stop is judged on every event read, this stream's or before it: a stop that came while this stream was
      // opening (finish() closed the one before) finds the target reached with no event to come.
      await stream
        .until((events) => events.length >= seen + leaveAfter || (this.stopped !== undefined && Number(events.at(-1)?.id ?? this.lastId ?? 0) >= this.stopped))
        .catch(() => undefined);
      stream.close();
      await stream.ended;
      this.events.push(...stream.events);
      if (this.stopped !== undefined && Number(this.lastId ?? 0) >= this.stopped) return;
      await this.connect();
    }
  }

  /** Resolves once every change up to cursor `head` has been read. */
  async finish(head: number): Promise<void> {
    this.stopped = head;
    // A stream waiting for its next event would hear of the stop only with one: it is dropped and resumed instead.
    this.stream?.close();
    await this.done;
  }
}

/**
 * A deployment as one without GET /v1/watch would be: every request is passed to a real kb serve but the watch route,
 * which is a 404 (kb serve itself cannot be made to lack the route).
 */
export async function withoutWatch(upstream: string): Promise<{ url: string; server: Server }> {
  const { hostname, port } = new URL(upstream);
  const server = createServer((request, response) => {
    if ((request.url ?? '').startsWith('/v1/watch')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: 'No such route: GET /v1/watch' }));
      return;
    }
    const forwarded = httpRequest({ hostname, port, method: request.method, path: request.url, headers: request.headers }, (reply) => {
      response.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(response);
    });
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * The churn proof of GET /v1/watch (docs/contract.md, Live changes) against built kb serve processes at `urls` (one
 * server, or replicas over one database): two organizations' writers at random over every url, six watchers of the
 * first that drop and resume at random on any url, and a watcher of the second. Each first-organization watcher's
 * events, replayed, give the final lists, with cursors 1..N once each; the second organization sees all of its own
 * changes and none of the first's. Returns the first organization's head cursor and a watcher's events.
 */
export async function proveChurn(expect: ExpectStatic, urls: readonly string[], token: string, otherToken: string): Promise<{ head: number; events: WatchEvent[] }> {
  const ids = (events: readonly WatchEvent[]) => events.filter((event) => event.event === 'change').map((event) => Number(event.id));
  const [first] = urls as [string];
  const last = urls.at(-1) as string;
  const seed = Date.now();
  const random = seeded(seed);
  const watchers = Array.from({ length: 6 }, () => new ChurningWatcher(urls, token, random));
  await Promise.all(watchers.map((watcher) => watcher.start()));
  const outsider = await openWatch(last, otherToken, '?since=0');
  // Two organizations write at once on every server, so that their transactions' commits interleave.
  const [statuses] = await Promise.all([randomWrites(urls, token, 400, 16, random), randomWrites(urls, otherToken, 100, 4, seeded(seed + 1))]);
  expect([...statuses.keys()], `seed ${seed}`).toEqual(expect.arrayContaining([200, 404, 409]));
  const synced = await openWatch(first, token, '?initial=true');
  await synced.until((events) => events.some((event) => event.event === 'synced'));
  synced.close();
  const head = Number(synced.events.find((event) => event.event === 'synced')?.id);
  await Promise.all(watchers.map((watcher) => watcher.finish(head)));
  const list = async <T>(path: string) => ((await (await fetch(`${last}/v1${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: T }).data;
  const lists = modelOf(await list<Array<{ key: string; description: string | null }>>('/ns_list'), await list<Array<{ namespace: string; key: string; description: string | null }>>('/base_list_all'));
  expect(replay(synced.events)).toEqual(lists);
  const expected = Array.from({ length: head }, (_, n) => n + 1);
  for (const watcher of watchers) {
    expect(ids(watcher.events), `seed ${seed}`).toEqual(expected);
    expect(replay(watcher.events), `seed ${seed}`).toEqual(lists);
  }
  // The other organization saw its own changes, all of them, and nothing of the first one's.
  const theirHead = await openWatch(first, otherToken, '?initial=true');
  await theirHead.until((events) => events.some((event) => event.event === 'synced'));
  theirHead.close();
  const theirs = Number(theirHead.events.find((event) => event.event === 'synced')?.id);
  await outsider.until((events) => events.length === theirs);
  outsider.close();
  expect(ids(outsider.events)).toEqual(Array.from({ length: theirs }, (_, n) => n + 1));
  expect(replay(outsider.events)).toEqual(replay(theirHead.events));
  return { head, events: (watchers[0] as ChurningWatcher).events };
}
