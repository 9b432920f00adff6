import type { WatchStats } from './watch.js';

/**
 * What the API app tells about its work, for `kb serve --admin-port`'s metrics (metrics.ts). An app built without one
 * tells nothing: metrics that are off cost a request a comparison.
 */
export interface AppObserver {
  /**
   * Every request read, once its reply is sent or it ended without one: its method and URL as read (none for a request
   * Node could not parse), the URL of the route that answered it, its status, and how long it took (none when that is
   * not known: a request Node refused before anything of it was at hand).
   */
  responded(method: string | undefined, url: string, routeUrl: string | undefined, status: number, elapsedMs: number | undefined): void;
  /** A read of a route whose answers are kept: answered from the kept ones (a hit), or from the store (a miss). */
  keptAnswer(route: string, hit: boolean): void;
  /** A write answered with the reply kept under its Idempotency-Key, without running again. */
  replayed(route: string): void;
  /** The watchers of GET /v1/watch, read when metrics are scraped: told once, when the app is built. */
  watching?(stats: WatchStats): void;
}
