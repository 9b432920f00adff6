import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OPENAPI_PATH } from '../api/openapi.js';
import { API_PREFIX, ROUTES, type RouteSpec } from '../api/routes.js';
import type { CommitObserver, Store } from '../store/store.js';
import type { AppObserver } from './observer.js';

/** The route label of each path served: a route's name, never a path or a key, so the labels stay few. */
const ROUTE_NAMES = new Map<string, string>([
  ...(Object.values(ROUTES) as RouteSpec[]).map((route) => [API_PREFIX + route.path, route.name] as const),
  [API_PREFIX + OPENAPI_PATH, 'openapi'],
]);

/** The methods counted by name; any other a client makes up is counted as "other". */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Seconds, from a kept list's 100 µs to a request that waited for a connection and a commit. */
const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A group commit holds at most 64 writes on PostgreSQL; SQLite's holds whatever one turn of the event loop brought. */
const WRITES_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * `kb serve`'s Prometheus metrics (docs/contract.md, "Operating behind a load balancer"): requests by route, method and
 * status, their duration by route, the group commits (duration and writes), replays, kept-list hits and misses, the
 * PostgreSQL pool and LISTEN connection (read on each scrape), and the process's own. Loaded only with --admin-port.
 */
export class ServerMetrics implements AppObserver {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'kb_http_requests_total',
    help: 'HTTP requests answered by the API, by route name, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'kb_http_request_duration_seconds',
    help: 'Time from a request arriving to its reply being sent, by route name.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
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
  private readonly kept = new Counter({
    name: 'kb_kept_answers_total',
    help: 'Reads of lists answered from the kept answers (hit) or from the store (miss), by route name.',
    labelNames: ['route', 'result'] as const,
    registers: [this.registry],
  });
  /** The label children already made, so a request costs one map lookup, not a hash of its labels. */
  private readonly counted = new Map<string, { inc(): void }>();
  private readonly timed = new Map<string, { observe(seconds: number): void }>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  responded(request: FastifyRequest, reply: FastifyReply): void {
    // A known path asked with another method (405) has no route of its own: it is named by its path's.
    const route = ROUTE_NAMES.get(request.routeOptions.url ?? (request.url.split('?')[0] as string)) ?? 'unknown';
    const method = METHODS.has(request.method) ? request.method : 'other';
    const key = `${route} ${method} ${reply.statusCode}`;
    let count = this.counted.get(key);
    if (count === undefined) this.counted.set(key, (count = this.requests.labels(route, method, String(reply.statusCode))));
    count.inc();
    let timer = this.timed.get(route);
    if (timer === undefined) this.timed.set(route, (timer = this.durations.labels(route)));
    timer.observe(reply.elapsedTime / 1000);
  }

  keptAnswer(route: string, hit: boolean): void {
    this.kept.labels(route, hit ? 'hit' : 'miss').inc();
  }

  replayed(route: string): void {
    this.replays.labels(route).inc();
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
