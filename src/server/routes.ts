import type { FastifyReply, FastifyRequest } from 'fastify';
import { KbApiError } from '../api/errors.js';
import { buildOpenApiDocument, OPENAPI_PATH } from '../api/openapi.js';
import { API_PREFIX, ROUTES, type RouteName, type RouteSpec } from '../api/routes.js';
import { TOKEN_EXPIRES_HEADER, TOKEN_SCOPE_HEADER } from '../api/route-table.js';
import { parseInput } from '../api/validation.js';
import { WATCH_PATH } from '../api/watch.js';
import type { Principal, Store, Write } from '../store/store.js';
import { send, sendError } from './errors.js';
import { READS, WRITES, type WriteRouteName } from './handlers.js';
import { methodsOf, refusedWhileClosing, refuseWhileClosing, requireContentType } from './http.js';
import { checkIdempotencyKey, fingerprint } from './idempotency.js';
import type { AppObserver } from './observer.js';
import { sharedPlugin } from './plugin.js';
import { VersionedCache } from './read-cache.js';

const API_ROUTES = Object.values(ROUTES) as RouteSpec[];

/** Every path served, with the methods it allows as an Allow header says them. */
const ALLOWED_METHODS = new Map<string, string>(
  [...API_ROUTES.map((route) => [API_PREFIX + route.path, route.method] as const), [API_PREFIX + OPENAPI_PATH, 'GET'] as const, [API_PREFIX + WATCH_PATH, 'GET'] as const].map(
    ([path, method]) => [path, methodsOf(method).join(', ')],
  ),
);

/** Query strings whose validated input each GET route keeps, at most (then it starts again). */
const QUERIES_KEPT = 256;

/** The answers of the GET routes (the lists) kept at most, in bytes of JSON. */
const ANSWERS_KEPT_BYTES = 32 * 1024 * 1024;

/** Organizations whose key of a kept answer each query keeps, at most (then it starts again). */
const KEYS_KEPT = 1024;

/** A query string's validated input, its part of a kept answer's key, and the whole key by organization. */
interface Query {
  input: unknown;
  key: string;
  keys: Map<number, string>;
}

type Read = (store: Store, principal: Principal, input: unknown) => Promise<unknown>;
type WriteOf = (principal: Principal, input: unknown) => Write;

/**
 * Every route of src/api under /v1, validated and answered from the store; the OpenAPI document; 404 for an unknown
 * route and 405 with Allow for a known path with another method.
 */
export const routes = sharedPlugin<{ observer?: AppObserver | undefined }>((app, options, done) => {
  const { observer } = options;
  const store: Store = app.store;
  // Answers of the GET routes, by organization and query, until the next write. Kept as bytes, so a kept answer is
  // written as it is, not encoded again for every request.
  const answers = new VersionedCache<Buffer>(ANSWERS_KEPT_BYTES, (body) => body.length);

  // The 404 route has no hook of its own to check for a closing server in: it gets one, in a context of its own so
  // that no other route pays for it (its hooks are those of the instance that sets it).
  app.register((notFound, _options, registered) => {
    notFound.addHook('onRequest', refuseWhileClosing);
    notFound.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '';
      const allowed = ALLOWED_METHODS.get(path);
      if (allowed !== undefined) {
        reply.header('allow', allowed);
        return sendError(reply, new KbApiError('method_not_allowed', `${request.method} is not allowed on ${path}`, `Use ${allowed.replace(', ', ' or ')}.`));
      }
      return sendError(reply, new KbApiError('not_found', `No such route: ${request.method} ${path}`));
    });
    registered();
  });

  for (const route of API_ROUTES) {
    const url = API_PREFIX + route.path;
    if (route.name === 'health') {
      const alive = Buffer.from(JSON.stringify({ success: true, data: 'alive' }));
      // Sent at once, and nothing returned: a handler that returns the reply has fastify wait on it as on a promise.
      app.route({
        method: methodsOf('GET'),
        url,
        handler: (_request, reply) => {
          if (!refusedWhileClosing(app, reply)) send(reply, 200, alive);
        },
      });
      continue;
    }
    const name = route.name as Exclude<RouteName, 'health'>;
    const handler = (name in READS ? READS[name as keyof typeof READS] : undefined) as Read | undefined;
    const writeOf = (name in WRITES ? WRITES[name as WriteRouteName] : undefined) as WriteOf | undefined;
    /** Reads, and keeps the answer until the next write when the store can tell when that is. */
    const read = async (principal: Principal, input: unknown, version: string | undefined, key: string): Promise<string | Buffer> => {
      const body = JSON.stringify({ success: true, data: await (handler as Read)(store, principal, input) });
      if (version === undefined) return body;
      const bytes = Buffer.from(body);
      answers.set(version, key, bytes);
      return bytes;
    };
    /**
     * The validated input of a query string and its part of a kept answer's key, by the query string as sent: the
     * same text parses to the same query, so a route validates each query it is asked once, not every request.
     * Invalid ones are not kept: each such request gets its error, as it did.
     */
    const queries = new Map<string, Query>();
    const queryOf = (request: FastifyRequest): Query => {
      const at = request.url.indexOf('?');
      const text = at === -1 ? '' : request.url.slice(at + 1);
      let query = queries.get(text);
      if (query === undefined) {
        const input = parseInput(route.input.schema, { ...(request.query as object) }, 'query');
        query = { input, key: `\u0000${name}\u0000${JSON.stringify(input)}`, keys: new Map() };
        if (queries.size >= QUERIES_KEPT) queries.clear();
        queries.set(text, query);
      }
      return query;
    };
    const write = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const input = parseInput(route.input.schema, request.body, 'request body');
      const principal = request.principal as Principal;
      const key = checkIdempotencyKey(request.headers['idempotency-key']);
      const write: Write = { ...(writeOf as WriteOf)(principal, input), tokenId: principal.tokenId };
      if (key === undefined) return send(reply, 200, { success: true, data: await store.perform(write) });
      const done = await app.idempotency.run(principal, key, fingerprint(route.name, input), (capture) => store.performKeyed(write, capture));
      if (done.replayed) {
        reply.header('idempotent-replayed', 'true');
        observer?.replayed(name);
      }
      return send(reply, done.reply.status, done.reply.body);
    };
    app.route({
      method: methodsOf(route.method),
      url,
      onRequest: app.authenticate,
      ...(route.method === 'GET' ? {} : { preParsing: requireContentType }),
      // A read whose answer is kept is sent at once, without a turn of the event loop.
      handler: (request, reply) => {
        if (route.method !== 'GET') return write(request, reply);
        const query = queryOf(request);
        const principal = request.principal as Principal;
        // Of this token, not of the organization: beside the kept answer, never in it (docs/contract.md, Tokens).
        if (name === 'auth') {
          reply.header(TOKEN_SCOPE_HEADER, principal.scope);
          if (principal.expiresAt !== null) reply.header(TOKEN_EXPIRES_HEADER, new Date(principal.expiresAt).toISOString());
        }
        // The organization's own version where the store has one: another organization's writes keep its answers.
        const version = request.readVersion === undefined || store.dataVersion === undefined ? request.readVersion : store.dataVersion(principal.orgId);
        // The same string for every request of an organization and query: neither built nor hashed again.
        let key = query.keys.get(principal.orgId);
        if (key === undefined) {
          if (query.keys.size >= KEYS_KEPT) query.keys.clear();
          query.keys.set(principal.orgId, (key = `${principal.orgId}${query.key}`));
        }
        const kept = version === undefined ? undefined : answers.get(version, key);
        observer?.keptAnswer(name, kept !== undefined);
        if (kept !== undefined) {
          send(reply, 200, kept);
          return undefined;
        }
        return read(principal, query.input, version, key).then((body) => send(reply, 200, body));
      },
    });
  }

  // A document, not an API result: served bare (no envelope) and without a token; built on first request.
  let openapi: string | undefined;
  app.route({
    method: methodsOf('GET'),
    url: API_PREFIX + OPENAPI_PATH,
    handler: (_request, reply) => (refusedWhileClosing(app, reply) ? reply : send(reply, 200, (openapi ??= JSON.stringify(buildOpenApiDocument())))),
  });
  done();
});
