import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from './logger.js';

/**
 * Requests the server sends itself once it listens, before it says so. A start whose first requests come from many
 * connections at once (a load test, a busy balancer), or that first sits idle for some seconds (V8's memory reducer
 * then collects the little that ran), builds Node's process.nextTick objects through V8's slow paths for as long as it
 * runs, some 2 to 4 µs of CPU a request (docs/performance.md). These requests, one at a time on each of a few
 * connections, avoid it; a few hundred are not enough, this many take a few hundred milliseconds on a busy machine.
 * They do not protect a server that sits idle for a minute or more before its load: the memory reducer's collections
 * then bring the slow paths back, and more requests do not undo them; kb serve keeps the reducer from collecting at
 * all (src/commands/serve/index.ts: no incremental marking).
 */
export const WARM_UP_REQUESTS = 1000;
/** Requests in flight at once, each on its own kept-open connection, one request at a time as most clients send them. */
const WARM_UP_CONNECTIONS = 8;
/** However slow the machine, the server says it listens no later than this after it began. */
export const WARM_UP_LIMIT_MS = 1000;

/**
 * The warm-up of an app, and what tells its requests apart: they carry a request id of their own (random, so that no
 * client sends it by chance), and their replies are neither logged nor counted in the metrics. Health is the one route
 * they ask, which reads nothing and needs no token, so no failed authentication is counted either.
 */
export class WarmUp {
  /**
   * The request id of the warm-up's requests once it has begun. It stays set after: a request of the warm-up that a
   * failure left in flight is still told apart when it completes.
   */
  private id: string | undefined;

  /** Whether this request is one of the warm-up's (checked once a request, for its line and its metrics). */
  of(request: FastifyRequest): boolean {
    return this.id !== undefined && request.id === this.id;
  }

  /**
   * Sends `count` GET /v1/health to the server at `address` (a wildcard address through loopback) and resolves once
   * they are answered, or `limitMs` has passed, or a request failed: a warm-up that cannot run is skipped. At the limit,
   * a request still unanswered (a connection that hangs) is cut, so the start never waits longer than that. `tls`: the
   * server speaks HTTPS, whose certificate need not name the loopback address: it is not checked, since the requests
   * go to this process's own port and carry nothing secret. Resolves with the number of requests answered.
   */
  async run(address: AddressInfo, count = WARM_UP_REQUESTS, limitMs = WARM_UP_LIMIT_MS, tls = false): Promise<number> {
    const id = `kb-warm-up-${randomBytes(12).toString('hex')}`;
    const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
    const pool = { keepAlive: true, maxSockets: WARM_UP_CONNECTIONS };
    const agent = tls ? new HttpsAgent({ ...pool, rejectUnauthorized: false }) : new Agent(pool);
    const request = tls ? httpsRequest : httpRequest;
    const deadline = Date.now() + limitMs;
    const cut = setTimeout(() => agent.destroy(), limitMs);
    let left = count;
    let answered = 0;
    const one = () =>
      new Promise<void>((resolve, reject) => {
        const sent = request({ host, port: address.port, path: '/v1/health', agent, headers: { [REQUEST_ID_HEADER]: id } }, (reply) => {
          reply.resume();
          reply.once('end', () => {
            answered++;
            resolve();
          });
          reply.once('error', reject);
        });
        sent.once('error', reject);
        sent.end();
      });
    const connection = async () => {
      while (left > 0 && Date.now() < deadline) {
        left--;
        await one();
      }
    };
    this.id = id;
    try {
      await Promise.all(Array.from({ length: WARM_UP_CONNECTIONS }, connection));
    } catch {
      // A warm-up is only ever an optimization.
    } finally {
      clearTimeout(cut);
      agent.destroy();
    }
    return answered;
  }
}
