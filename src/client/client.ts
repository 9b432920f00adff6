import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { QUICK_INPUT, QUICK_OUTPUT, type Quick, quickEnvelope, quickFailure, REFUSED } from '../api/quick.js';
import { API_PREFIX, ROUTE_TABLE, type RouteName, TOKEN_EXPIRES_HEADER, TOKEN_SCOPE_HEADER } from '../api/route-table.js';
import type { RouteInput, RouteOutput } from '../api/routes.js';
import {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  NetworkError,
  NsDeleteUnsupportedError,
  ResponseFormatError,
  ResponseTooLargeError,
  type NetworkErrorKind,
} from './errors.js';
import { failedAtProxy, proxyFor, type ProxySettings } from './proxy.js';
import { openStream, type OpenStream } from './stream.js';
import { isTlsCode, TRUST_HELP, untrustedCertificate } from './tls.js';
import { defaultDispatcher, exchange } from './undici.js';
import { normalizeBaseUrl } from './base-url.js';

export interface KbClientOptions {
  /** The deployment's base URL without /v1, e.g. http://127.0.0.1:8080; the client adds /v1. */
  url: string;
  /** Sent as `Authorization: Bearer` on every route but health. */
  token?: string | undefined;
  /** Connect timeout, and the deadline of each attempt from connect to the last byte of the reply. */
  timeoutMs?: number | undefined;
  /** Further attempts for a GET after a connection failure or a 502/503/504. */
  retries?: number | undefined;
  /** Called with one line per attempt: `METHOD URL STATUS Nms`. Never sees the token. */
  trace?: ((line: string) => void) | undefined;
  /** A reply longer than this many bytes is refused (ResponseTooLargeError) as soon as that is known. */
  maxResponseBytes?: number | undefined;
  /**
   * Send through these proxies with undici's EnvHttpProxyAgent (the CLI reads them from HTTPS_PROXY, HTTP_PROXY and
   * NO_PROXY: src/config/proxy.ts). Otherwise undici's plain Agent.
   */
  proxy?: ProxySettings | undefined;
  /** CAs (PEM) trusted on top of the system's: `--cacert`, `KB_CA_CERT` or the profile's (src/client/tls.ts). */
  ca?: readonly string[] | undefined;
  /** Replaces the default dispatcher (see `proxy`); it belongs to the caller. */
  dispatcher?: Dispatcher | undefined;
  /**
   * Many requests at once (kb apply, import, export): at most 2 connections, several requests on each before their
   * replies once the deployment keeps its connections open. Otherwise one request a connection at a time, so that a
   * slow reply holds up no other (src/client/undici.ts).
   */
  bulk?: boolean | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 2 ** 20;
export const DEFAULT_RETRIES = 2;
const BACKOFF_BASE_MS = 100;
/** A Retry-After longer than this ends the retries: waiting would outlast what a CLI user expects. */
const MAX_RETRY_AFTER_MS = 5000;
const RETRY_STATUSES = new Set([502, 503, 504]);
/** Failures before a connection was made: the request never left. Any other may come after the server ran it. */
const NEVER_SENT = new Set<NetworkErrorKind>(['refused', 'dns']);
/** zod's checks (explain.ts), loaded when a value is refused by the quick ones, or for replies of any data. */
const explain = () => import('./explain.js');
/** Visible ASCII: anything else cannot go in a header, and undici's complaint might quote it. */
const TOKEN_PATTERN = /^[\x21-\x7e]+$/;

interface Exchange {
  method: string;
  /** Relative to /v1, with any query string. */
  path: string;
  /** A route's path, with a query string made by URLSearchParams: already as a URL parser would put it. */
  routed: boolean;
  body?: unknown;
  auth: boolean;
  /** The route whose data the reply carries; undefined for any data (`request`). */
  route?: RouteName | undefined;
  /** The output's data checked without zod (src/api/quick.ts), where it can be: zod then says why it is refused. */
  quick?: Quick | undefined;
  /** Sent as Idempotency-Key; with one, a POST or DELETE is as safe to repeat as a GET. */
  idempotencyKey?: string;
}

/** Where a request goes: its URL (for traces and errors), and the origin and the path with its query, as undici takes them. */
interface Target {
  url: string;
  origin: string;
  path: string;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Set by #transmit: an earlier attempt's connection was lost after the request was sent (NetworkError.mayHaveRun). */
  afterLoss?: boolean;
}

/** Statuses a gateway answers for a server that may have run the request and lost its reply. */
const GATEWAY_LOST = new Set([502, 504]);

/** A reply of `raw`, as it came. */
export interface RawReply {
  status: number;
  /** The URL the request went to. */
  url: string;
  contentType: string | undefined;
  /** The reply's X-Request-Id, if it had one. */
  requestId?: string | undefined;
  /** Every header of the reply, names in lower case (for `kb api -i`). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  text: string;
}

/** What undici and node report, mapped to a kind, the words a user reads, and whether a GET may try again. */
interface Failure {
  kind: NetworkErrorKind;
  reason: string;
  retryable: boolean;
}

const CODE_FAILURES: Record<string, Failure> = {
  ECONNREFUSED: { kind: 'refused', reason: 'connection refused', retryable: true },
  ECONNRESET: { kind: 'reset', reason: 'connection reset by the other side', retryable: true },
  EPIPE: { kind: 'reset', reason: 'connection closed by the other side', retryable: true },
  UND_ERR_SOCKET: { kind: 'reset', reason: 'connection closed by the other side', retryable: true },
  ENOTFOUND: { kind: 'dns', reason: 'host name not found (DNS)', retryable: false },
  EAI_NODATA: { kind: 'dns', reason: 'host name has no address (DNS)', retryable: false },
  EAI_FAIL: { kind: 'dns', reason: 'DNS lookup failed', retryable: false },
  EAI_AGAIN: { kind: 'dns', reason: 'DNS lookup failed temporarily', retryable: true },
  UND_ERR_CONNECT_TIMEOUT: { kind: 'timeout', reason: 'timed out while connecting', retryable: true },
  ETIMEDOUT: { kind: 'timeout', reason: 'timed out while connecting', retryable: true },
  UND_ERR_HEADERS_TIMEOUT: { kind: 'timeout', reason: 'timed out waiting for the reply', retryable: false },
  UND_ERR_BODY_TIMEOUT: { kind: 'timeout', reason: 'timed out reading the reply', retryable: false },
  EHOSTUNREACH: { kind: 'other', reason: 'host unreachable', retryable: false },
  ENETUNREACH: { kind: 'other', reason: 'network unreachable', retryable: false },
};

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  // Happy eyeballs (several addresses) fails with an AggregateError of one error per address.
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return errorCode(cause);
}

function describeFailure(error: unknown): Failure {
  const code = errorCode(error);
  if (code !== undefined) {
    const known = CODE_FAILURES[code];
    if (known) return known;
    if (isTlsCode(code)) {
      // OpenSSL's own `reason` ("wrong version number") reads better than its message (which carries a source path).
      const { reason, message } = error as { reason?: unknown; message?: unknown };
      const detail = typeof reason === 'string' ? reason : typeof message === 'string' ? message : code;
      return { kind: 'tls', reason: `TLS failed: ${detail}`, retryable: false };
    }
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { kind: 'other', reason: detail || 'request failed', retryable: false };
}

function header(headers: Reply['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After as milliseconds to wait: delta-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** 100 ms, 200 ms, 400 ms ... each with up to 25% jitter either way, so many clients do not retry in step. */
function backoffMs(retry: number): number {
  const base = BACKOFF_BASE_MS * 2 ** retry;
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/** A 404 from the deployment, as a failure envelope or as anything else (a web server in front of it). */
function isRemote404(error: unknown): error is ApiError | ResponseFormatError {
  if (error instanceof ApiError) return !error.local && error.status === 404;
  return error instanceof ResponseFormatError && error.status === 404;
}

/**
 * The kb API over undici. Typed methods are thin wrappers over one function driven by the ROUTE_TABLE
 * of src/api; `request` reaches any route for its data, and `raw` returns any reply as it came (for `kb api`).
 */
export class KbClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly maxResponseBytes: number;
  /** True when the URL given ended in /v1, which the client dropped (the CLI says so). */
  readonly urlHadApiPrefix: boolean;
  readonly #token: string | undefined;
  readonly #trace: ((line: string) => void) | undefined;
  #dispatcher: Dispatcher | Promise<Dispatcher> | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #proxy: ProxySettings | undefined;
  readonly #ca: readonly string[] | undefined;
  /** The base URL's origin: the base URL is that and a path (normalizeBaseUrl). */
  readonly #origin: string;
  /**
   * Whether requests may be pipelined (src/client/undici.ts): for a bulk client only, once a reply has kept its
   * connection open, and until one closes it (`Connection: close`). On a deployment that closes each connection after
   * one reply, every request pipelined behind it would be lost and sent again, and again.
   */
  #pipelining: 'unknown' | 'yes' | 'never';
  readonly #bulk: boolean;

  constructor(options: KbClientOptions) {
    const base = normalizeBaseUrl(options.url);
    this.baseUrl = base.url;
    this.#origin = new URL(base.url).origin;
    this.urlHadApiPrefix = base.withoutApiPrefix;
    if (options.token !== undefined && !TOKEN_PATTERN.test(options.token)) {
      throw new ClientOptionsError('the token must be printable ASCII without spaces');
    }
    this.#token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retries = options.retries ?? DEFAULT_RETRIES;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!(this.timeoutMs > 0)) throw new ClientOptionsError(`the timeout must be a positive number of milliseconds, not ${this.timeoutMs}`);
    if (!Number.isInteger(this.retries) || this.retries < 0) throw new ClientOptionsError(`retries must be a whole number >= 0, not ${this.retries}`);
    if (!Number.isSafeInteger(this.maxResponseBytes) || this.maxResponseBytes <= 0) {
      throw new ClientOptionsError(`the response size limit must be a whole number of bytes > 0, not ${this.maxResponseBytes}`);
    }
    this.#trace = options.trace;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher;
    this.#proxy = options.proxy;
    this.#ca = options.ca;
    this.#bulk = options.bulk === true;
    this.#pipelining = this.#bulk ? 'unknown' : 'never';
  }

  health(): Promise<RouteOutput<'health'>> {
    return this.#call('health', {});
  }

  /** Checks the token; resolves to the name of the organization it belongs to. */
  auth(): Promise<RouteOutput<'auth'>> {
    return this.#call('auth', {});
  }

  /**
   * GET /auth with what kb serve tells of the token beside the organization (docs/contract.md, Tokens): its scope and
   * expiry travel in headers, so that `data` stays the string the API defines. Undefined where a server does not say.
   */
  async authDetails(): Promise<{ organization: RouteOutput<'auth'>; scope: string | undefined; expiresAt: string | undefined }> {
    const route = ROUTE_TABLE.auth;
    const exchange: Exchange = { method: route.method, path: route.path, routed: true, auth: true, route: 'auth', quick: QUICK_OUTPUT.auth };
    const target = this.#target(exchange.path, true);
    const reply = await this.#transmit(exchange.method, target, true, undefined);
    const organization = (await this.#interpret(exchange, target.url, reply)) as RouteOutput<'auth'>;
    return { organization, scope: header(reply.headers, TOKEN_SCOPE_HEADER), expiresAt: header(reply.headers, TOKEN_EXPIRES_HEADER) };
  }

  nsList(): Promise<RouteOutput<'ns_list'>> {
    return this.#call('ns_list', {});
  }

  nsCreate(body: RouteInput<'ns_create'>): Promise<RouteOutput<'ns_create'>> {
    return this.#call('ns_create', body);
  }

  nsUpdate(body: RouteInput<'ns_update'>): Promise<RouteOutput<'ns_update'>> {
    return this.#call('ns_update', body);
  }

  /** Through the ns_delete extension of kb serve: a deployment without it answers 404, as for a namespace it lacks. */
  /**
   * Deletes a namespace through the ns_delete extension. A 404 is ambiguous (no such namespace, or no such route), so
   * the client asks ns_list, as baseList does: a namespace that exists means the deployment lacks the route.
   */
  async nsDelete(body: RouteInput<'ns_delete'>): Promise<RouteOutput<'ns_delete'>> {
    try {
      return await this.#call('ns_delete', body);
    } catch (error) {
      if (error instanceof ApiError && !error.local && error.status === 405) throw new NsDeleteUnsupportedError(error.url, body.namespace);
      if (!isRemote404(error)) throw error;
      const namespaces = await this.nsList();
      if (namespaces.some((ns) => ns.key === body.namespace)) throw new NsDeleteUnsupportedError(error.url, body.namespace);
      if (error instanceof ApiError) error.nearby = namespaces.map((ns) => ns.key);
      throw error;
    }
  }

  baseCreate(body: RouteInput<'base_create'>): Promise<RouteOutput<'base_create'>> {
    return this.#call('base_create', body);
  }

  baseUpdate(body: RouteInput<'base_update'>): Promise<RouteOutput<'base_update'>> {
    return this.#call('base_update', body);
  }

  baseDelete(body: RouteInput<'base_delete'>): Promise<RouteOutput<'base_delete'>> {
    return this.#call('base_delete', body);
  }

  /**
   * The bases of a namespace through the base_list extension. A 404 is ambiguous (no such namespace, or no such
   * route), so the client asks ns_list: a namespace that exists means the deployment lacks the route.
   */
  async baseList(namespace: string): Promise<RouteOutput<'base_list'>> {
    try {
      return await this.#call('base_list', { namespace });
    } catch (error) {
      if (!isRemote404(error)) throw error;
      const namespaces = await this.nsList();
      if (namespaces.some((ns) => ns.key === namespace)) throw new BaseListUnsupportedError(error.url, namespace);
      if (error instanceof ApiError) error.nearby = namespaces.map((ns) => ns.key);
      throw error;
    }
  }

  /**
   * Every base of the organization in one request, through the base_list_all extension of kb serve; undefined when
   * the deployment does not offer it (a 404: the route takes no namespace, so nothing else can be missing).
   */
  async baseListAll(): Promise<RouteOutput<'base_list_all'> | undefined> {
    try {
      return await this.#call('base_list_all', {});
    } catch (error) {
      if (isRemote404(error)) return undefined;
      throw error;
    }
  }

  /**
   * Any request under /v1: `path` is relative to {url}/v1 and may carry a query string. Resolves to
   * the envelope's `data`; failures are the same errors as the typed methods'. The input is not checked locally.
   */
  request(method: string, path: string, body?: unknown): Promise<unknown> {
    const relative = path.startsWith('/') ? path : `/${path}`;
    return this.#send({ method: method.toUpperCase(), path: relative, routed: false, body, auth: true });
  }

  /**
   * Any request under /v1, answered whatever its status or body, for `kb api`: `path` is relative to {url}/v1 and
   * may carry a query string; `body` is sent as it is, as JSON. The token goes with it when there is one; `headers`
   * (lower-case names; the caller keeps Authorization and Host out of them) are added, or replace kb's own. Only a
   * failure below HTTP throws (a NetworkError), after the retries a GET may have.
   */
  async raw(method: string, path: string, body?: string, headers: Readonly<Record<string, string>> = {}): Promise<RawReply> {
    const target = this.#target(path.startsWith('/') ? path : `/${path}`, false);
    const reply = await this.#transmit(method.toUpperCase(), target, true, body, undefined, headers);
    return {
      status: reply.status, url: target.url, contentType: header(reply.headers, 'content-type'), requestId: header(reply.headers, 'x-request-id'),
      headers: reply.headers, text: reply.text,
    };
  }

  /** A GET under /v1 whose body goes to `onChunk` as it comes (kb watch), through this client's dispatcher: stream.ts. */
  async stream(path: string, signal: AbortSignal, onChunk: (chunk: Buffer) => void): Promise<OpenStream> {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` }) };
    return openStream(await this.#getDispatcher(), this.#target(path, false), headers, { headersTimeoutMs: this.timeoutMs, signal, onChunk });
  }

  /** Closes the connections of the default dispatcher; a dispatcher passed in belongs to the caller. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher && this.#dispatcher !== undefined) await (await this.#dispatcher).close();
  }

  /** The default dispatcher is made on the first request: the proxy agent is loaded only for a proxy (undici.ts). */
  #getDispatcher(): Dispatcher | Promise<Dispatcher> {
    this.#dispatcher ??= defaultDispatcher(this.timeoutMs, this.#proxy, this.#bulk, this.#ca).then((dispatcher) => (this.#dispatcher = dispatcher));
    return this.#dispatcher;
  }

  /**
   * Checks input as the server would, without sending anything: resolves to the input as it would be sent, or
   * throws a local ApiError (status 400, `local: true`) whose message ends ": nothing was sent".
   */
  async check<N extends RouteName>(name: N, input: RouteInput<N>): Promise<Record<string, unknown>> {
    return this.#checked(name, input);
  }

  /**
   * check()'s answer: the input as the quick validators take it, at once (a request of kb apply's then pays no turn of
   * the microtask queue, in code that is still interpreted), or a promise of zod's answer where they refuse it.
   */
  #checked(name: RouteName, input: unknown): Record<string, unknown> | Promise<Record<string, unknown>> {
    const quick = QUICK_INPUT[name]?.(input) ?? REFUSED;
    return quick !== REFUSED ? (quick as Record<string, unknown>) : this.#checkByZod(name, input);
  }

  /** What check() says of input the quick validators refuse: zod's value, or its words for what is wrong. */
  async #checkByZod(name: RouteName, input: unknown): Promise<Record<string, unknown>> {
    const checked = (await explain()).checkInput(name, input);
    if (checked.ok) return checked.data;
    const route = ROUTE_TABLE[name];
    throw new ApiError({
      status: 400, message: `${checked.problems}: nothing was sent`,
      url: this.#url(route.path), method: route.method, local: true,
    });
  }

  async #call<N extends RouteName>(name: N, input: RouteInput<N>): Promise<RouteOutput<N>> {
    const route = ROUTE_TABLE[name];
    const fromBody = route.from === 'body';
    const answer = this.#checked(name, input);
    const checked = answer instanceof Promise ? await answer : answer;
    let path = route.path;
    if (!fromBody) {
      const query = new URLSearchParams(Object.entries(checked).map(([key, value]): [string, string] => [key, String(value)])).toString();
      if (query !== '') path += `?${query}`;
    }
    const exchange: Exchange = { method: route.method, path, routed: true, auth: route.auth, route: name, quick: QUICK_OUTPUT[name] };
    if (fromBody) exchange.body = checked;
    // One key per logical write, reused by its retries: the server runs it once and replays its reply.
    if (route.method !== 'GET') exchange.idempotencyKey = globalThis.crypto.randomUUID();
    return (await this.#send(exchange)) as RouteOutput<N>;
  }

  #url(path: string): string {
    return `${this.baseUrl}${API_PREFIX}${path}`;
  }

  /**
   * The target of `path` (relative to /v1). A routed path is taken as it is, after the origin; any other is put in
   * normal form by the URL parser (percent-encoding, dot segments), as the URL of a request by undici would be.
   */
  #target(path: string, routed: boolean): Target {
    const url = this.#url(path);
    if (routed) return { url, origin: this.#origin, path: url.slice(this.#origin.length) };
    const { origin, pathname, search } = new URL(url);
    return { url, origin, path: `${pathname}${search}` };
  }

  async #send(exchange: Exchange): Promise<unknown> {
    const target = this.#target(exchange.path, exchange.routed);
    const payload = exchange.body === undefined ? undefined : JSON.stringify(exchange.body);
    const reply = await this.#transmit(exchange.method, target, exchange.auth, payload, exchange.idempotencyKey);
    // A value, or a promise on the paths that load zod: adopted either way, awaited only then.
    return this.#interpret(exchange, target.url, reply);
  }

  /** One request with the retries a GET may have; resolves to the last reply, or throws the last NetworkError. */
  async #transmit(
    method: string,
    target: Target,
    auth: boolean,
    payload: string | undefined,
    idempotencyKey?: string,
    extraHeaders: Readonly<Record<string, string>> = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    Object.assign(headers, extraHeaders);
    if (auth && this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    // A GET is safe to repeat, and so is a write under an Idempotency-Key; any other write is never sent twice.
    const repeatable = method === 'GET' || idempotencyKey !== undefined;
    const attempts = repeatable ? this.retries + 1 : 1;
    let mayHaveRun = false;
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      const elapsed = () => `${Math.round(performance.now() - started)}ms`;
      const canRetry = attempt < attempts;
      const outcome = await this.#attempt(method, target, headers, payload, repeatable && this.#pipelining === 'yes');
      if ('failure' in outcome) {
        const wait = canRetry && outcome.retryable ? backoffMs(attempt - 1) : undefined;
        this.#traceLine(`${method} ${target.url} ${outcome.failure.kind} ${elapsed()}`, wait);
        mayHaveRun ||= !NEVER_SENT.has(outcome.failure.kind);
        if (wait === undefined) {
          outcome.failure.mayHaveRun = mayHaveRun;
          throw outcome.failure;
        }
        await sleep(wait);
        continue;
      }
      const reply = outcome.reply;
      let wait: number | undefined;
      // A 409 with Retry-After to a keyed write: its first request still runs, and a repeat with the key gets its reply.
      const running = reply.status === 409 && idempotencyKey !== undefined && header(reply.headers, 'retry-after') !== undefined;
      if (canRetry && (RETRY_STATUSES.has(reply.status) || running)) {
        const asked = reply.status === 503 || running ? retryAfterMs(header(reply.headers, 'retry-after')) : undefined;
        if (asked === undefined) wait = backoffMs(attempt - 1);
        else if (asked <= MAX_RETRY_AFTER_MS) wait = asked;
      }
      this.#traceLine(`${method} ${target.url} ${reply.status} ${elapsed()}`, wait);
      if (wait === undefined) {
        if (mayHaveRun) reply.afterLoss = true;
        return reply;
      }
      await sleep(wait);
    }
  }

  #traceLine(line: string, retryInMs: number | undefined): void {
    this.#trace?.(retryInMs === undefined ? line : `${line} (retrying in ${retryInMs}ms)`);
  }

  /** One HTTP exchange under one deadline; a failure below HTTP comes back as a NetworkError, with whether a GET may try again. */
  async #attempt(
    method: string,
    target: Target,
    headers: Record<string, string>,
    payload: string | undefined,
    pipelined: boolean,
  ): Promise<{ reply: Reply } | { failure: NetworkError; retryable: boolean }> {
    const { url } = target;
    // Made only when it fires: an Error takes a stack trace, which every request would pay for.
    let deadline: Error | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const sent = exchange(await this.#getDispatcher(), target, {
        method,
        headers,
        body: payload ?? null,
        pipelined,
        maxBytes: this.maxResponseBytes,
        // The reply is read up to the limit: a Content-Length above it fails before any of the body is read, and a body
        // that grows past it fails as soon as it does. undici's own maxResponseSize would do this on some paths only:
        // its proxy agent drops the option for requests it sends in absolute form.
        tooLarge: (replyHeaders) => new ResponseTooLargeError(url, method, this.maxResponseBytes, header(replyHeaders, 'x-request-id')),
      });
      timer = setTimeout(() => sent.abort((deadline = new Error(`no complete reply within ${this.timeoutMs} ms`))), this.timeoutMs);
      const reply = await sent.reply;
      if (this.#pipelining !== 'never') this.#pipelining = /\bclose\b/i.test(header(reply.headers, 'connection') ?? '') ? 'never' : 'yes';
      return { reply };
    } catch (error) {
      if (error instanceof ResponseTooLargeError) throw error;
      // The request may already be with the server, so a spent deadline is not retried, unlike a connect timeout.
      const failure: Failure = deadline !== undefined
        ? { kind: 'timeout', reason: `timed out (no complete reply within ${this.timeoutMs} ms)`, retryable: false }
        : describeFailure(error);
      const proxy = this.#proxy && proxyFor(this.#proxy, url);
      // A certificate refused is said with the host, its subject, and how to trust it (docs/contract.md, TLS).
      const untrusted = failure.kind === 'tls' ? await untrustedCertificate(error, url, proxy === undefined, Math.min(this.timeoutMs, 5000)) : undefined;
      if (untrusted !== undefined) return { failure: new NetworkError('tls', url, method, untrusted, { cause: error, help: TRUST_HELP }), retryable: false };
      const atProxy = proxy !== undefined && failure.kind !== 'timeout' && failedAtProxy(proxy, url, error) ? proxy : undefined;
      return { failure: new NetworkError(failure.kind, url, method, failure.reason, { cause: error, proxy: atProxy }), retryable: failure.retryable };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The envelope's data on 200, the ApiError of a failure envelope, a ResponseFormatError for anything else. */
  #interpret(exchange: Exchange, url: string, reply: Reply): unknown {
    const { method } = exchange;
    const requestId = header(reply.headers, 'x-request-id');
    const malformed = (detail: string) => new ResponseFormatError(url, method, reply.status, detail, requestId);
    if (reply.text.trim() === '') throw malformed('the body is empty');
    let json: unknown;
    try {
      json = JSON.parse(reply.text);
    } catch {
      const type = header(reply.headers, 'content-type');
      const location = reply.status >= 300 && reply.status < 400 ? header(reply.headers, 'location') : undefined;
      throw malformed(
        `the body is not JSON (content-type ${type ?? 'not given'}${location ? `, redirect to ${location}` : ''})`,
      );
    }
    if (reply.status === 200) {
      if (exchange.quick !== undefined) {
        const data = quickEnvelope(json, exchange.quick);
        if (data !== REFUSED) return data;
      }
      return explain().then(({ replyData }) => {
        const data = replyData(exchange.route, json, exchange.path.split('?')[0] ?? '');
        if (data.ok) return data.data;
        throw malformed(data.detail);
      });
    }
    if (reply.status >= 400) {
      const quick = quickFailure(json);
      if (quick === REFUSED) {
        return explain().then(({ failureOf }) => {
          throw this.#failure(exchange, url, reply, requestId, failureOf(json));
        });
      }
      throw this.#failure(exchange, url, reply, requestId, quick);
    }
    throw malformed('kb API replies have status 200 or 4xx/5xx');
  }

  /** The error of a failure reply: an ApiError of its envelope, or a ResponseFormatError when it has none. */
  #failure(exchange: Exchange, url: string, reply: Reply, requestId: string | undefined, failure: { message: string; help?: string | null | undefined } | undefined): Error {
    const { method } = exchange;
    if (failure === undefined) return new ResponseFormatError(url, method, reply.status, 'the JSON is not a failure envelope {"success":false,"message":...}', requestId);
    const stillRunning = reply.status === 409 && exchange.idempotencyKey !== undefined && header(reply.headers, 'retry-after') !== undefined;
    const mayHaveRun = method !== 'GET' && (reply.afterLoss === true || stillRunning || GATEWAY_LOST.has(reply.status));
    return new ApiError({
      status: reply.status, message: failure.message, help: failure.help ?? undefined, url, method, requestId, stillRunning, mayHaveRun,
    });
  }
}
