import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What the API app tells about its work, for `kb serve --admin-port`'s metrics (metrics.ts). An app built without one
 * registers no hook and tells nothing: metrics that are off cost a request nothing.
 */
export interface AppObserver {
  /** Every reply sent, once it is sent (fastify's onResponse hook). */
  responded(request: FastifyRequest, reply: FastifyReply): void;
  /** A read of a route whose answers are kept: answered from the kept ones (a hit), or from the store (a miss). */
  keptAnswer(route: string, hit: boolean): void;
  /** A write answered with the reply kept under its Idempotency-Key, without running again. */
  replayed(route: string): void;
}
