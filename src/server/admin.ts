import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommitObserver, Store } from '../store/store.js';
import { ServerMetrics } from './metrics.js';
import type { AppObserver } from './observer.js';

/** How long a readiness check of the store is reused: probes of several balancers cost the database one query a second. */
const READY_CHECK_KEPT_MS = 1000;
/** A check that takes longer than this answers "not ready" (a probe's own timeout is often 1 s). */
const READY_CHECK_TIMEOUT_MS = 900;

/** The admin port could not be listened on (in use, say): its own message, so it is not taken for the API's port. */
export class AdminListenError extends Error {
  override name = 'AdminListenError';
}

export interface AdminOptions {
  host: string;
  port: number;
}

/**
 * `kb serve --admin-port`'s listener, apart from the API's (docs/contract.md, "Operating behind a load balancer", after
 * PostgREST's admin server): GET /live, GET /ready and GET /metrics. Started first, before the store opens and the
 * API listens, whose observers it hands out (metrics): /live answers from then on, /ready 503 until `serving()` (the
 * store open, the API listening and warmed up), so that a probe never meets a refused connection while the start waits
 * on the database. A plain node:http server: none of the API's hooks, authentication or logging, and a probe never
 * waits behind the API's work.
 */
export class AdminServer {
  private readonly metrics = new ServerMetrics();
  private server: Server | undefined;
  private store: Store | undefined;
  private draining = false;
  private check: { at: number; reason: Promise<string | undefined> } | undefined;

  /** The app's observer: requests, kept answers, replays. */
  get observer(): AppObserver {
    return this.metrics;
  }

  /** The store's observer of its group commits. */
  get onCommit(): CommitObserver {
    return this.metrics.committed;
  }

  /** Listens; resolves with the URL it answers at. /ready answers 503 until serving(). */
  async start(options: AdminOptions): Promise<string> {
    const server = createServer((request, response) => void this.answer(request, response));
    server.keepAliveTimeout = 5000;
    server.headersTimeout = 5000;
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(new AdminListenError(`cannot listen on ${options.host}:${options.port} (--admin-port): ${error.message}`));
      server.once('error', failed);
      server.listen(options.port, options.host, () => {
        server.off('error', failed);
        resolve();
      });
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  /** The server has started (its store open, the API listening and warmed up): /ready asks the store from now on. */
  serving(store: Store): void {
    this.store = store;
    this.metrics.watch(store);
  }

  /** From now on /ready answers 503: a SIGTERM began the drain, and balancers should stop sending. */
  drain(): void {
    this.draining = true;
  }

  /** Stops listening, cutting whatever probes are open: the last thing a shutdown does. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    const head = request.method === 'HEAD';
    const reply = (status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
      response.end(head ? undefined : body);
    };
    if (path !== '/live' && path !== '/ready' && path !== '/metrics') return reply(404, 'not found: the admin port serves /live, /ready and /metrics\n');
    if (request.method !== 'GET' && !head) {
      response.setHeader('allow', 'GET, HEAD');
      return reply(405, `${request.method} is not allowed: use GET\n`);
    }
    try {
      if (path === '/live') return reply(200, 'live\n');
      if (path === '/ready') {
        const reason = this.draining ? 'draining: kb serve received a signal to stop' : await this.unready();
        return reason === undefined ? reply(200, 'ready\n') : reply(503, `not ready: ${reason}\n`);
      }
      const { body, contentType } = await this.metrics.scrape();
      return reply(200, body, contentType);
    } catch (error) {
      return reply(500, `failed: ${(error as Error).message}\n`);
    }
  }

  /** Why the server cannot serve, from a check of the store at most READY_CHECK_KEPT_MS old; undefined when it can. */
  private unready(): Promise<string | undefined> {
    const store = this.store;
    if (store === undefined) return Promise.resolve('starting: the store is opening, or the server warming up');
    const now = Date.now();
    if (this.check === undefined || now - this.check.at >= READY_CHECK_KEPT_MS) {
      this.check = { at: now, reason: withTimeout(store.unready?.() ?? Promise.resolve(undefined)) };
    }
    return this.check.reason;
  }
}

/** The store's answer, or a reason of its own when it takes too long. */
function withTimeout(check: Promise<string | undefined>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the database did not answer within ${READY_CHECK_TIMEOUT_MS} ms`), READY_CHECK_TIMEOUT_MS);
  });
  return Promise.race([check.catch((error: Error) => `the store check failed: ${error.message}`), late]).finally(() => clearTimeout(timer));
}
