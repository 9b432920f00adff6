import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OPENAPI_PATH } from '../api/openapi.js';
import { API_PREFIX, ROUTES, type RouteSpec } from '../api/routes.js';
import { WATCH_PATH } from '../api/watch.js';
import type { CommitObserver, Store } from '../store/store.js';
import type { AppObserver } from './observer.js';
import type { WatchStats } from './watch.js';

/** The route label of each path served: a route's name, never a path or a key, so the labels stay few. */
const ROUTE_NAMES = new Map<string, string>([
  ...(Object.values(ROUTES) as RouteSpec[]).map((route) => [API_PREFIX + route.path, route.name] as const),
  [API_PREFIX + OPENAPI_PATH, 'openapi'],
  [API_PREFIX + WATCH_PATH, 'watch'],
]);

/** The methods counted by name; any other a client makes up is counted as "other". */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Seconds, from a kept list's 100 µs to a request that waited for a connection and a commit. */
const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A group commit holds at most 64 writes on PostgreSQL; SQLite's holds whatever one turn of the event loop brought. */
const WRITES_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * A prom-client counter counted per request in a plain number by label set, handed to prom-client when scraped (its
 * collect()): prom-client's own inc() hashes and checks the labels again at every call.
 */
class RequestCounter<L extends string> {
  private readonly pending = new Map<string, { labels: Record<L, string>; count: number }>();

  constructor(registry: Registry, configuration: { name: string; help: string; labelNames: readonly L[] }) {
    const pending = this.pending;
    new Counter<L>({
      ...configuration,
      registers: [registry],
      collect() {
        for (const entry of pending.values()) {
          if (entry.count === 0) continue;
          this.inc(entry.labels, entry.count);
          entry.count = 0;
        }
      },
    });
  }

  /** Counts one under `key`, which stands for `labels()` (called only the first time the key is seen). */
  inc(key: string, labels: () => Record<L, string>): void {
    const entry = this.pending.get(key);
    if (entry === undefined) this.pending.set(key, { labels: labels(), count: 1 });
    else entry.count++;
  }
}

/**
 * A histogram by route kept in plain arrays, written out by prom-client's registry (registerMetric) in the form its
 * own Histogram gives: the same lines, labels and order. prom-client's Histogram hashes, checks and converts the
 * labels of every observation; this finds a bucket and adds.
 */
export class RouteHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly routes = new Map<string, { buckets: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(route: string, value: number): void {
    let data = this.routes.get(route);
    if (data === undefined) this.routes.set(route, (data = { buckets: this.bounds.map(() => 0), sum: 0, count: 0 }));
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    if (i < bounds.length) (data.buckets[i] as number)++;
    data.sum += value;
    data.count++;
  }

  getForPromString() {
    const values: Array<{ labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string; exemplar?: null }> = [];
    for (const [route, data] of this.routes) {
      const shared = { route };
      let total = 0;
      this.bounds.forEach((le, i) => {
        total += data.buckets[i] as number;
        values.push({ labels: { le }, sharedLabels: shared, value: total, metricName: `${this.name}_bucket`, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: shared, value: data.count, metricName: `${this.name}_bucket`, exemplar: null });
      values.push({ labels: {}, sharedLabels: shared, value: data.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: shared, value: data.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  get() {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
  }

  reset(): void {
    this.routes.clear();
  }
}

/**
 * `kb serve`'s Prometheus metrics (docs/contract.md, "Operating behind a load balancer"): requests by route, method and
 * status, their duration by route, the group commits (duration and writes), replays, kept-list hits and misses, the
 * PostgreSQL pool and LISTEN connection (read on each scrape), and the process's own. Loaded only with --admin-port.
 */
export class ServerMetrics implements AppObserver {
  readonly registry = new Registry();
  private readonly requests = new RequestCounter(this.registry, {
    name: 'kb_http_requests_total',
    help: 'HTTP requests answered by the API, by route name, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
  });
  private readonly durations = new RouteHistogram(
    'kb_http_request_duration_seconds',
    'Time from a request arriving to its reply being sent, by route name.',
    DURATION_BUCKETS,
  );
  private readonly commitSeconds = new Histogram({
    name: 'kb_commit_duration_seconds',
    help: 'Time each group commit took, from taking its writes to its COMMIT.',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly commitWrites = new Histogram({
    name: 'kb_commit_writes',
    help: 'Writes committed together by each group commit.',
    buckets: WRITES_BUCKETS,
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: 'kb_idempotent_replays_total',
    help: 'Writes answered with the reply kept under their Idempotency-Key, by route name.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly kept = new RequestCounter(this.registry, {
    name: 'kb_kept_answers_total',
    help: 'Reads of lists answered from the kept answers (hit) or from the store (miss), by route name.',
    labelNames: ['route', 'result'] as const,
  });

  constructor() {
    this.registry.registerMetric(this.durations as unknown as Histogram);
    collectDefaultMetrics({ register: this.registry });
  }

  responded(method: string | undefined, url: string, routeUrl: string | undefined, status: number, elapsedMs: number | undefined): void {
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    // The route's name by the path asked, as it is for every request of this API (no route has parameters); a path
    // that reached its route otherwise (percent-encoded) by the route's own, and a known path asked with another
    // method (405), which has no route of its own, by its path's.
    const route = ROUTE_NAMES.get(path) ?? (routeUrl === undefined ? undefined : ROUTE_NAMES.get(routeUrl)) ?? 'unknown';
    const counted = method !== undefined && METHODS.has(method) ? method : 'other';
    this.requests.inc(`${route} ${counted} ${status}`, () => ({ route, method: counted, status: String(status) }));
    if (elapsedMs !== undefined) this.durations.observe(route, elapsedMs / 1000);
  }

  keptAnswer(route: string, hit: boolean): void {
    this.kept.inc(`${route} ${hit}`, () => ({ route, result: hit ? 'hit' : 'miss' }));
  }

  replayed(route: string): void {
    this.replays.labels(route).inc();
  }

  /** The watchers of GET /v1/watch and the events sent to them, read when scraped. */
  watching(stats: WatchStats): void {
    new Gauge({
      name: 'kb_watchers',
      help: 'Streams of GET /v1/watch open now.',
      registers: [this.registry],
      collect() {
        this.set(stats.watchers());
      },
    });
    let counted = 0;
    new Counter({
      name: 'kb_watch_events_sent_total',
      help: 'Change events written to the streams of GET /v1/watch.',
      registers: [this.registry],
      collect() {
        const sent = stats.eventsSent();
        this.inc(sent - counted);
        counted = sent;
      },
    });
  }

  /** The store's observer of its group commits. */
  readonly committed: CommitObserver = (writes, seconds) => {
    this.commitWrites.observe(writes);
    this.commitSeconds.observe(seconds);
  };

  /** Gauges of what the store uses of a database server, read when scraped; nothing for the embedded engine. */
  watch(store: Store): void {
    const usage = store.usage?.bind(store);
    if (usage === undefined) return;
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    gauge('kb_pg_pool_connections', 'PostgreSQL connections the pool holds open.', () => usage().total);
    gauge('kb_pg_pool_idle', 'PostgreSQL connections of the pool that are idle.', () => usage().idle);
    gauge('kb_pg_pool_waiting', 'Requests waiting for a PostgreSQL connection of the pool.', () => usage().waiting);
    gauge('kb_pg_listen_up', '1 while the LISTEN connection listens (other replicas\' writes are seen), else 0.', () => (usage().listening ? 1 : 0));
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
