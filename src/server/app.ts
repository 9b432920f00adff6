import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type preParsingHookHandler } from 'fastify';
import { KbApiError } from '../api/errors.js';
import { buildOpenApiDocument, OPENAPI_PATH } from '../api/openapi.js';
import { API_PREFIX, ROUTES, type RouteName, type RouteSpec } from '../api/routes.js';
import { LIMITS } from '../api/schemas.js';
import { parseInput } from '../api/validation.js';
import type { AuthFailureLimit, IdempotencyCapture, Principal, Store, StoredReply, WriteOutcome } from '../store/store.js';
import { HANDLERS } from './handlers.js';
import { checkIdempotencyKey, fingerprint, Idempotency } from './idempotency.js';
import { createLogger, type Logger } from './log.js';
import { AuthFailureLimiter } from './rate-limit.js';
import { VersionedCache } from './read-cache.js';
import { hashToken } from './tokens.js';

export interface AppOptions {
  store: Store;
  logger?: Logger;
  /** Milliseconds a client may take to send its headers (CONTRACT: at most 5 s). */
  headersTimeoutMs?: number;
  /** Milliseconds a client may take to send a whole request. */
  requestTimeoutMs?: number;
  /** The failed-authentication limit: by default the store's shared one, else one in this app's memory. */
  authLimiter?: AuthFailureLimit;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** The store's readVersion() as the request arrived: read once, for both the token and the answer. */
    readVersion?: string;
  }
}

const UNAUTHORIZED = new KbApiError(
  'unauthorized',
  'Authentication required: send a valid token as "Authorization: Bearer <token>"',
  'Check the token, or create one on the server with `kb serve token create --org ORG`.',
);

const UNSUPPORTED_MEDIA_TYPE = new KbApiError(
  'unsupported_media_type',
  'Request bodies must be JSON',
  'Send Content-Type: application/json.',
);

/** Sends a JSON body: an object, or one already serialized (as text or as UTF-8 bytes). */
function send(reply: FastifyReply, status: number, body: object | string | Buffer): FastifyReply {
  reply.code(status).header('content-type', 'application/json; charset=utf-8');
  // A HEAD answer has no body (RFC 9110); node drops one on the wire, in-process inject() would not.
  if (reply.request.method === 'HEAD') return reply.send(undefined);
  return reply.send(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
}

/** 429 for an address over the failed-authentication limit, with the seconds to wait. */
class RateLimitedError extends KbApiError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'Too many failed authentication attempts from this address', `Retry in ${retryAfterSeconds} s, with a valid token.`);
  }
}

function errorBody(error: KbApiError): { success: false; message: string; help?: string } {
  const body: { success: false; message: string; help?: string } = { success: false, message: error.message };
  if (error.help !== undefined) body.help = error.help;
  return body;
}

function sendError(reply: FastifyReply, error: KbApiError): FastifyReply {
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
  // A storage that cannot commit now (a lost database connection, a busy database, a server shutting down).
  else if (error.status === 503) reply.header('retry-after', '1');
  return send(reply, error.status, errorBody(error));
}

/** The reply an executed write gets, as kept under an Idempotency-Key: a 5xx is not kept, so a retry runs again. */
function replyFor(outcome: WriteOutcome): StoredReply | undefined {
  if (outcome.ok) return { status: 200, body: JSON.stringify({ success: true, data: outcome.value }) };
  const error = outcome.error;
  if (error instanceof KbApiError && error.status < 500) return { status: error.status, body: JSON.stringify(errorBody(error)) };
  return undefined;
}

/** Turns what fastify raises while reading a request into the API's error catalog. */
function fromFastifyError(error: FastifyError): KbApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KbApiError('payload_too_large', `Request body is larger than ${LIMITS.bodyBytes} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return UNSUPPORTED_MEDIA_TYPE;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new KbApiError('bad_request', 'Request body is empty: expected a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new KbApiError('bad_request', 'Request body is not valid JSON');
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return new KbApiError('bad_request', error.message);
      }
      return undefined;
  }
}

/**
 * Answers a request that never reached fastify (malformed HTTP, header timeout, oversized headers) with the
 * failure envelope too; otherwise as fastify's default handler does.
 */
function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 408 ? 'Request timed out' : status === 431 ? 'Request headers are too large' : 'Malformed HTTP request';
  const body = JSON.stringify({ success: false, message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * JSON.parse, refusing the property names of prototype poisoning (as fastify's own parser does) with a message
 * that names them, since they are never fields of this API.
 */
function parseJsonBody(raw: string): unknown {
  // A UTF-8 byte order mark is allowed before JSON text (RFC 8259 section 8.1 lets parsers ignore it).
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.length === 0) throw new KbApiError('bad_request', 'Request body is empty: expected a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, function (key, value: unknown) {
      if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
        throw new KbApiError('bad_request', `Request body has a forbidden field: ${key}`);
      }
      return value;
    });
  } catch (error) {
    if (error instanceof KbApiError) throw error;
    throw new KbApiError('bad_request', 'Request body is not valid JSON');
  }
  return parsed;
}

/**
 * Tokens known to the store, for as long as no write (a revocation, say) has committed since. Keyed by the token
 * itself, which the request holds in memory anyway, so a repeat costs neither a hash nor a query.
 */
const principals = new WeakMap<Store, VersionedCache<Principal>>();

function knownPrincipal(store: Store, token: string, version: string | undefined): Principal | undefined {
  return version === undefined ? undefined : principals.get(store)?.get(version, token);
}

async function principalOf(store: Store, token: string, version: string | undefined): Promise<Principal | null> {
  const principal = await store.authenticate(hashToken(token));
  if (version === undefined || !principal) return principal;
  // Only valid tokens are kept: a stream of made-up ones would only push them out.
  let cache = principals.get(store);
  if (!cache) principals.set(store, (cache = new VersionedCache<Principal>(10_000)));
  cache.set(version, token, principal);
  return principal;
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return typeof header === 'string' ? /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header)?.[1] : undefined;
}

/** A valid token is always served; an address with too many recent failures gets 429 instead of another 401. */
async function authenticate(store: Store, limiter: AuthFailureLimit, request: FastifyRequest, token: string | undefined): Promise<Principal> {
  const principal = token ? await principalOf(store, token, request.readVersion) : null;
  if (principal) return principal;
  const waitMs = await limiter.recordFailure(request.ip);
  if (waitMs > 0) throw new RateLimitedError(Math.ceil(waitMs / 1000));
  throw UNAUTHORIZED;
}

/** A body without Content-Type: fastify would leave it unread, but CONTRACT says any non-JSON body is 415. */
function untypedBody(request: FastifyRequest): KbApiError | null {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  return hasBody && request.headers['content-type'] === undefined ? UNSUPPORTED_MEDIA_TYPE : null;
}

const requireContentType: preParsingHookHandler = (request, _reply, payload, done) => {
  const refused = untypedBody(request);
  if (refused) return done(refused);
  done(null, payload);
};

/** Builds the HTTP app over a store: every route of src/api under /v1, validated, authenticated, logged. */
export function buildApp(options: AppOptions): FastifyInstance {
  const { store } = options;
  const limiter = options.authLimiter ?? store.authFailures ?? new AuthFailureLimiter();
  const idempotency = new Idempotency(replyFor);
  // Answers of the GET routes (the lists), by organization and query, up to 32 MiB of JSON.
  // Kept as bytes, so a kept answer is written as it is, not encoded again for every request.
  const answers = new VersionedCache<Buffer>(32 * 1024 * 1024, (body) => body.length);
  const logger = options.logger ?? createLogger('info');
  const headersTimeout = options.headersTimeoutMs ?? 5000;
  const requestTimeout = options.requestTimeoutMs ?? 10_000;
  const app = Fastify({
    logger: false,
    bodyLimit: LIMITS.bodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    exposeHeadRoutes: false,
    requestTimeout,
    keepAliveTimeout: 5000,
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: 1000 },
    // A URL fastify cannot decode would otherwise get fastify's own error body, not the failure envelope.
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, fromFastifyError(error) ?? new KbApiError('internal', 'Internal server error'));
    },
    clientErrorHandler: clientError,
  });
  // fastify parses text/plain by default; CONTRACT section 2 makes any non-JSON body a 415.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  if (logger.logsInfo !== false) {
    app.addHook('onResponse', (request, reply, done) => {
      const path = request.routeOptions.url ?? request.url.split('?')[0];
      logger.info(`${request.method} ${path} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms`);
      done();
    });
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof KbApiError) return sendError(reply, error);
    const known = fromFastifyError(error);
    if (known) return sendError(reply, known);
    logger.error(`${request.method} ${request.routeOptions.url ?? '?'} failed: ${error.stack ?? error.message}`);
    return sendError(reply, new KbApiError('internal', 'Internal server error'));
  });

  const routes = Object.values(ROUTES) as RouteSpec[];
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routes.filter((route) => API_PREFIX + route.path === path).map((route) => route.method);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, new KbApiError('method_not_allowed', `${request.method} is not allowed on ${path}`, `Use ${allowed.join(' or ')}.`));
    }
    return sendError(reply, new KbApiError('not_found', `No such route: ${request.method} ${path}`));
  });

  for (const route of routes) {
    const url = API_PREFIX + route.path;
    if (route.name === 'health') {
      const alive = Buffer.from(JSON.stringify({ success: true, data: 'alive' }));
      app.get(url, (_request, reply) => {
        send(reply, 200, alive);
      });
      continue;
    }
    const name = route.name as Exclude<RouteName, 'health'>;
    const handler = HANDLERS[name] as (store: Store, principal: Principal, input: unknown, capture?: IdempotencyCapture) => Promise<unknown>;
    /** Reads, and keeps the answer until the next write when the store can tell when that is. */
    const read = async (principal: Principal, input: unknown, version: string | undefined, key: string): Promise<string | Buffer> => {
      const body = JSON.stringify({ success: true, data: await handler(store, principal, input) });
      if (version === undefined) return body;
      const bytes = Buffer.from(body);
      answers.set(version, key, bytes);
      return bytes;
    };
    const write = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const input = parseInput(route.input.schema, request.body, 'request body');
      const principal = request.principal as Principal;
      const key = checkIdempotencyKey(request.headers['idempotency-key']);
      if (key === undefined) return send(reply, 200, { success: true, data: await handler(store, principal, input) });
      const done = await idempotency.run(principal, key, fingerprint(route.name, input), (capture) => handler(store, principal, input, capture));
      if (done.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(done.reply.status).header('content-type', 'application/json; charset=utf-8').send(done.reply.body);
    };
    const authenticateRequest = (request: FastifyRequest, version: string | undefined, done: (error?: Error) => void) => {
      request.readVersion = version;
      const token = bearerToken(request);
      const known = token === undefined ? undefined : knownPrincipal(store, token, request.readVersion);
      // A read has no preParsing hook (one fewer step for every read): it checks for an untyped body here.
      const authenticated = (principal: Principal) => {
        request.principal = principal;
        done((route.method === 'GET' ? untypedBody(request) : null) ?? undefined);
      };
      if (known) return authenticated(known);
      authenticate(store, limiter, request, token).then(authenticated, done);
    };
    app.route({
      method: route.method,
      url,
      // Authentication runs before the body is read, so a request without a valid token gets 401 whatever it sends.
      // Callback style, so that a token seen before is accepted without a turn of the event loop.
      onRequest: (request, _reply, done) => {
        const version = store.readVersion?.();
        // A store over a network (PostgreSQL) may first wait to hear what other servers committed.
        if (typeof version === 'object') return void version.then((known) => authenticateRequest(request, known, done), done);
        authenticateRequest(request, version, done);
      },
      ...(route.method === 'GET' ? {} : { preParsing: requireContentType }),
      // A read whose answer is kept is sent at once, without a turn of the event loop.
      handler: (request, reply) => {
        if (route.method !== 'GET') return write(request, reply);
        const input = parseInput(route.input.schema, { ...(request.query as object) }, 'query');
        const principal = request.principal as Principal;
        const version = request.readVersion;
        const key = `${principal.orgId}\u0000${name}\u0000${JSON.stringify(input)}`;
        const kept = version === undefined ? undefined : answers.get(version, key);
        if (kept !== undefined) return send(reply, 200, kept);
        return read(principal, input, version, key).then((body) => send(reply, 200, body));
      },
    });
  }

  // A document, not an API result: served bare (no envelope) and without a token; built on first request.
  let openapi: string | undefined;
  app.get(API_PREFIX + OPENAPI_PATH, async (_request, reply) => {
    openapi ??= JSON.stringify(buildOpenApiDocument());
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(openapi);
  });
  return app;
}
