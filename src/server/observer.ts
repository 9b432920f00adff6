import type { FastifyRequest } from 'fastify';
import type { WatchStats } from './watch.js';

/**
 * What the API app tells about its work, for `kb serve --admin-port`'s metrics (metrics.ts). An app built without one
 * tells nothing: metrics that are off cost a request a comparison.
 */
export interface AppObserver {
  /** Every reply sent, once it is sent (as fastify's onResponse hook would be run), and how long it took. */
  responded(request: FastifyRequest, status: number, elapsedMs: number): void;
  /** A read of a route whose answers are kept: answered from the kept ones (a hit), or from the store (a miss). */
  keptAnswer(route: string, hit: boolean): void;
  /** A write answered with the reply kept under its Idempotency-Key, without running again. */
  replayed(route: string): void;
  /** The watchers of GET /v1/watch, read when metrics are scraped: told once, when the app is built. */
  watching?(stats: WatchStats): void;
}
