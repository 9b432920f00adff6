import type { Server as HttpsServer } from 'node:https';
import Fastify, { type FastifyInstance } from 'fastify';
import { LIMITS } from '../api/schemas.js';
import type { AuthFailureLimit, Store } from '../store/store.js';
import { auth } from './auth.js';
import { clientErrorHandler, errors, frameworkError } from './errors.js';
import { httpRules } from './http.js';
import { idempotency } from './idempotency.js';
import { createLogger, RequestLog, requestFields, requestIds, type RequestTold, type ServerLogger } from './logger.js';
import type { AppObserver } from './observer.js';
import { routes } from './routes.js';
import { answerPlainHttp, plainHttpAnswer } from './tls.js';
import { WarmUp } from './warm-up.js';
import { WatchHub, watchRoute } from './watch.js';

/** docs/contract.md, Limits: a client has at most 5 s for its headers, checked every second. */
export const HEADERS_TIMEOUT_MS = 5000;
export const CONNECTIONS_CHECK_INTERVAL_MS = 1000;
/** The explicit limit for a whole request, body included. */
export const REQUEST_TIMEOUT_MS = 10_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5000;

export interface AppOptions {
  store: Store;
  /** Where the app logs; by default at info to stderr. */
  logger?: ServerLogger;
  /** Milliseconds a client may take to send its headers (at most HEADERS_TIMEOUT_MS). */
  headersTimeoutMs?: number;
  /** Milliseconds a client may take to send a whole request. */
  requestTimeoutMs?: number;
  /** The failed-authentication limit: by default the store's shared one, else one in this app's memory. */
  authLimiter?: AuthFailureLimit;
  /** Milliseconds a repeat of an Idempotency-Key waits for the key's first request before its 409 (5 s). */
  repeatWaitMs?: number;
  /** Told of every reply, kept answer and replay (metrics); none by default, and then no hook is registered. */
  observer?: AppObserver | undefined;
  /** Serve HTTPS with this certificate and key (PEM, checked by tls.ts); plain HTTP by default. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** Milliseconds between two heartbeat comments of GET /v1/watch (watch.ts, HEARTBEAT_MS). */
  watchHeartbeatMs?: number | undefined;
  /** Milliseconds a watch stream sent at its reader's pace may wait for it (watch.ts, WATCHER_STALL_MS). */
  watchStallMs?: number | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    /** Requests the server sends itself before it says it listens (warm-up.ts): neither logged nor counted. */
    warmUp: WarmUp;
  }
}

/** What fastify would compile a route's JSON schema with: kb's routes have none, and one that had would fail to register. */
function noSchemaCompiler(): never {
  throw new Error('kb routes declare no JSON schema: they parse their input with src/api/schemas.ts');
}

/**
 * Builds the HTTP app over a store: every route of src/api under /v1, validated, authenticated, logged. Each concern
 * is a plugin of its own (http.ts, errors.ts, auth.ts, idempotency.ts, routes.ts), its state on this app.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const requestId = requestIds();
  const logger = options.logger ?? createLogger('info');
  const warmUp = new WarmUp();
  const { observer } = options;
  // Every request's line at its level and its count in the metrics (docs/contract.md, Logging), however it ended: one
  // answered at info, one whose reply was not sent (a failure, its connection closed first) at warn.
  const told: RequestTold = (reqId, method, url, routeUrl, status, elapsedMs, error) => {
    observer?.responded(method, url ?? '', routeUrl, status, elapsedMs);
    if (error) logger.pino.warn({ ...requestFields(reqId, method, url, status, elapsedMs), err: error }, 'request not completed');
    else if (logger.pino.isLevelEnabled('info')) logger.pino.info(requestFields(reqId, method, url, status, elapsedMs), 'request');
  };
  // A request Fastify answered, once its reply is sent, unless the request is the server's own warm-up.
  const requestLog = new RequestLog((request, status, elapsedMs, error) => {
    if (!warmUp.of(request)) told(request.id, request.method, request.url, request.routeOptions.url, status, elapsedMs, error);
  });
  const http = {
    ServerResponse: requestLog.responses,
    headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
    requestTimeout,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
  };
  const { tls } = options;
  const app = Fastify({
    // Fastify logs nothing itself: kb writes each request's line (RequestLog) and logs through its own logger.
    logger: false,
    logController: requestLog.controller,
    genReqId: requestId,
    bodyLimit: LIMITS.bodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A request that reaches the closing server gets the API's 503 (http.ts), not fastify's own.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // HEAD is declared with each GET route, so that send() answers it (errors included) with the GET's headers.
    exposeHeadRoutes: false,
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // With TLS, fastify gives its `https` options (the http ones among them) to https.createServer, and no `http`.
    ...(tls === undefined ? { http } : { https: { ...http, cert: tls.cert, key: tls.key, handshakeTimeout: HEADERS_TIMEOUT_MS } }),
    frameworkErrors: frameworkError,
    clientErrorHandler: clientErrorHandler({ newRequestId: requestId, log: logger.pino, requestLog, observer }),
    // kb's routes declare no JSON schema (they parse their input with src/api/schemas.ts), so fastify's compilers,
    // ajv and fast-json-stringify, are never needed: left to fastify, they are loaded at every start all the same.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
  });
  // A plain HTTP request to the TLS port is answered (tls.ts), not left waiting for a handshake.
  if (tls !== undefined) answerPlainHttp(app.server as unknown as HttpsServer, plainHttpAnswer(requestId, told), HEADERS_TIMEOUT_MS);
  app.decorate('store', options.store);
  app.decorate('warmUp', warmUp);
  app.register(httpRules, { requestId, told });
  app.register(errors, { log: logger.pino });
  app.register(auth, { limiter: options.authLimiter });
  app.register(idempotency, { waitMs: options.repeatWaitMs });
  app.register(routes, { observer });
  // GET /v1/watch, over the store's change log (watch.ts).
  const log = options.store.changeLog;
  const hub = log && new WatchHub(log, (error) => logger.pino.error({ err: error }, 'a watch feed failed to read the change log or the tokens'), {
    heartbeatMs: options.watchHeartbeatMs,
    stallMs: options.watchStallMs,
    tokens: options.store,
  });
  if (hub !== undefined) observer?.watching?.(hub);
  app.register(watchRoute, { hub });
  return app;
}
