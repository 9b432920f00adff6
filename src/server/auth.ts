import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { KbApiError } from '../api/errors.js';
import type { AuthFailureLimit, Principal, Store } from '../store/store.js';
import { RateLimitedError } from './errors.js';
import { expectsContinue, refusedWhileClosing, untypedBody } from './http.js';
import { sharedPlugin } from './plugin.js';
import { AuthFailureLimiter } from './rate-limit.js';
import { VersionedCache } from './read-cache.js';
import { hashToken } from './tokens.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Tokens known to the store, for as long as no token has changed since (the store's tokensVersion(): a revocation,
     * say, of this server or another). Keyed by the token itself, which the request holds in memory anyway, so a repeat
     * costs neither a hash nor a query.
     */
    principals: VersionedCache<Principal>;
    /** The failed-authentication limit per client address. */
    authFailures: AuthFailureLimit;
    /** onRequest hook of every authenticated route: sets request.principal, or fails with 400, 401 or 429. */
    authenticate: onRequestHookHandler;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The store's readVersion() as the request arrived: read once, for both the token and the answer. */
    readVersion: string | undefined;
  }
}

const UNAUTHORIZED = new KbApiError(
  'unauthorized',
  'Authentication required: send a valid token as "Authorization: Bearer <token>"',
  'Check the token, or create one on the server with `kb serve token create --org ORG`.',
);

/** A token past its expiry: 401, saying when (docs/contract.md, Tokens). */
function expired(expiresAt: number): KbApiError {
  return new KbApiError(
    'unauthorized',
    `This token expired at ${new Date(expiresAt).toISOString()}`,
    'Create a new one on the server with `kb serve token create --org ORG`.',
  );
}

/** The one 403 of the API: the token is valid, and its scope does not allow writes (docs/contract.md, Tokens). */
const READ_ONLY = new KbApiError(
  'forbidden',
  'This token has scope read-only: it can read, not write; nothing was changed',
  'Write with a token of full scope (`kb serve token create --org ORG` makes one).',
);

const MINUTE_MS = 60_000;

/** Tokens whose last use is remembered at most (then it starts again: one more write for each, at worst). */
const USES_KEPT = 10_000;

/**
 * Writes each token's last use to the minute, at most once a minute (docs/contract.md, Tokens), never in the path of
 * the request: the write is not awaited, and one that fails is logged and not tried again within that minute.
 */
class TokenUses {
  /** The minute (ms since the epoch) each token's use was last written for. */
  private readonly written = new Map<string, number>();

  constructor(private readonly app: FastifyInstance) {}

  used(tokenId: string): void {
    const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    if (this.written.get(tokenId) === minute) return;
    if (this.written.size >= USES_KEPT) this.written.clear();
    this.written.set(tokenId, minute);
    this.app.store.markTokensUsed([tokenId], new Date(minute).toISOString()).catch((error: unknown) => {
      if (!this.app.shutdown.closing) this.app.log.warn({ tokenId, err: error }, 'could not record the last use of a token');
    });
  }
}

const TWO_AUTHORIZATIONS = new KbApiError('bad_request', 'Request has more than one Authorization header', 'Send one: Authorization: Bearer <token>.');

/** Valid tokens kept at most: a stream of made-up ones is never kept, so it cannot push them out. */
const PRINCIPALS_KEPT = 10_000;

/** The bearer token, if any; node keeps only the first of several Authorization headers, so they are counted raw. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) throw TWO_AUTHORIZATIONS;
  }
  return /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header)?.[1];
}

/** A valid token is always served; an address with too many recent failures gets 429 instead of another 401. */
async function principalOf(app: FastifyInstance, request: FastifyRequest, token: string | undefined, tokens: string | undefined): Promise<Principal> {
  const principal = token === undefined ? null : await app.store.authenticate(hashToken(token));
  if (principal) {
    if (tokens !== undefined) app.principals.set(tokens, token as string, principal);
    return principal;
  }
  const waitMs = await app.authFailures.recordFailure(request.ip);
  if (waitMs > 0) throw new RateLimitedError(Math.ceil(waitMs / 1000));
  throw UNAUTHORIZED;
}

export interface AuthOptions extends Record<string, unknown> {
  /** The failed-authentication limit: by default the store's shared one, else one in this app's memory. */
  limiter?: AuthFailureLimit | undefined;
}

/**
 * Bearer authentication, checked before anything of the request is read, so a request without a valid token gets 401
 * whatever it sends. Callback style, so that a token seen before is accepted without a turn of the event loop.
 */
export const auth = sharedPlugin<AuthOptions>((app, options, done) => {
  app.decorate('principals', new VersionedCache<Principal>(PRINCIPALS_KEPT));
  app.decorate('authFailures', options.limiter ?? app.store.authFailures ?? new AuthFailureLimiter());
  app.decorateRequest('principal', null);
  app.decorateRequest('readVersion', undefined);
  const store: Store = app.store;
  const uses = new TokenUses(app);
  app.decorate('authenticate', function authenticate(request, reply, next) {
    if (refusedWhileClosing(app, reply)) return;
    // A write the store checks its token for in its own transaction waits for no fence (Store.fencesWrites).
    if (store.fencesWrites === false && request.method !== 'GET' && request.method !== 'HEAD') return authenticateNow(request, reply, next);
    const version = store.readVersion?.();
    // A store over a network (PostgreSQL) may first wait to hear what other servers committed.
    if (typeof version === 'object') {
      return void version.then((known) => {
        request.readVersion = known;
        authenticateNow(request, reply, next);
      }, next);
    }
    request.readVersion = version;
    authenticateNow(request, reply, next);
  });
  /** Authentication once the read version is known: a token seen at this tokens version costs no hash and no query. */
  const authenticateNow = (request: FastifyRequest, reply: FastifyReply, next: (error?: Error) => void): void => {
    let token: string | undefined;
    try {
      token = bearerToken(request);
    } catch (error) {
      return next(error as Error);
    }
    const authenticated = (principal: Principal) => {
      // By this server's clock on every request, cached or not: an expiry holds on every replica at once.
      if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) return next(expired(principal.expiresAt));
      if (principal.scope === 'read-only' && request.method !== 'GET' && request.method !== 'HEAD') return next(READ_ONLY);
      uses.used(principal.tokenId);
      request.principal = principal;
      // Only now may the client send its body: no one unauthenticated gets to upload one.
      if (expectsContinue(request)) reply.raw.writeContinue();
      // A read has no preParsing hook (one fewer step for every read): its untyped body is refused here, after the 401.
      next((request.method === 'GET' || request.method === 'HEAD' ? untypedBody(request) : null) ?? undefined);
    };
    // Read after readVersion() has resolved (what other servers committed before the request is counted), before the lookup.
    const tokens = store.tokensVersion === undefined ? request.readVersion : store.tokensVersion();
    const known = token === undefined || tokens === undefined ? undefined : app.principals.get(tokens, token);
    if (known) return authenticated(known);
    principalOf(app, request, token, tokens).then(authenticated, next);
  };
  done();
});
