/**
 * The parts of undici the client uses. Without a proxy, undici's Agent is imported from its own module: undici's index
 * also loads fetch, WebSocket, the cache and the mocks, which would double what `kb ns list` pays to start (README,
 * "Performance"). That path is undici's internals, so package.json pins undici to one minor version.
 */
import type { Agent as AgentType, Dispatcher } from 'undici';
// @ts-expect-error undici ships no types for its internal modules; their types are the public ones below.
import AgentModule from 'undici/lib/dispatcher/agent.js';
import { type Proxy, proxyFor, type ProxySettings } from './proxy.js';
import { trustOptions } from './tls.js';

/** undici's Agent: one pool of connections per origin. */
export const Agent = AgentModule as typeof AgentType;

/**
 * How a client uses its connections to one deployment. By default, one request on a connection at a time, on up to
 * CONNECTIONS of them: a slow reply (a big list, a deployment under load) never holds up another request, which the
 * terminal UI and a script running several commands rely on. A client of many requests at once (`bulk`: kb apply, kb
 * import, kb export) keeps to BULK_CONNECTIONS instead, several requests on each before their replies (HTTP/1.1
 * pipelining): a request that is safe to send again (a GET, a write under an Idempotency-Key) may go on a connection
 * whose replies are still to come, once the deployment has shown it keeps connections open (the client decides:
 * `pipelined`); any other waits for a connection of its own. kb apply sends 64 changes at a time (src/sync/plan.ts):
 * on two connections, each read from the socket brings several replies, and both the client and kb serve spent about
 * half the CPU per change they did with one request a connection on 16. undici gives a request to the first
 * connection that is not full, and opens one only when all are: the bound is what keeps them few.
 */
export const CONNECTIONS = 16;
export const BULK_CONNECTIONS = 2;
export const PIPELINING = 32;
/**
 * Connections to each proxy at most, one request on each at a time: what a forward proxy does with pipelined
 * requests is its own affair, and undici's pools to a proxy are otherwise unbounded (kb apply opened one a change).
 */
export const PROXY_CONNECTIONS = 16;

/**
 * The dispatcher a client sends through: undici's Agent, or, for proxies (from HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and
 * NO_PROXY, as src/config/proxy.ts reads them), a router that sends each request directly or through undici's
 * ProxyAgent, as proxyFor decides it (curl's rules: src/client/proxy.ts). undici's own EnvHttpProxyAgent reads
 * NO_PROXY otherwise than curl (no CIDR ranges) and knows no ALL_PROXY.
 *
 * The proxy agent comes from undici's index, loaded only then: its CONNECT tunnels call `Dispatcher#connect`,
 * which the index installs on every dispatcher (`Object.assign(Dispatcher.prototype, api)`), and which undici's
 * internal modules alone lack. Plain http goes to the proxy in absolute form (`GET http://host/path`), as curl and
 * Go send it; https goes through a CONNECT tunnel.
 */
export async function defaultDispatcher(
  connectTimeoutMs: number,
  proxy: ProxySettings | undefined,
  bulk = false,
  ca?: readonly string[],
): Promise<Dispatcher> {
  // CAs of the user's, on top of the system's (tls.ts): to the deployment, directly or through a proxy's tunnel.
  const trust = await trustOptions(ca);
  const connect = { timeout: connectTimeoutMs, ...trust };
  const pool = bulk ? { connections: BULK_CONNECTIONS, pipelining: PIPELINING } : { connections: CONNECTIONS, pipelining: 1 };
  if (proxy === undefined) return new Agent({ connect, ...pool });
  const undici = await import('undici');
  // Bundled, undici (CommonJS) arrives as the default export only; from node_modules, with named exports too.
  const { Dispatcher: DispatcherBase, Pool, ProxyAgent } = (undici as unknown as { default?: typeof undici }).default ?? undici;
  const direct = new Agent({ connect, ...pool });
  const agents = new Map<string, Dispatcher>();
  const through = (via: Proxy): Dispatcher => {
    let agent = agents.get(via.url);
    if (agent === undefined) {
      // The pools of the proxy agent: to the proxy itself (plain http, in absolute form) and through its tunnels (https).
      const factory = (origin: string | URL, options: object) => new Pool(origin, { ...options, connections: PROXY_CONNECTIONS });
      agent = new ProxyAgent({ uri: via.url, connect, proxyTunnel: false, factory, ...(trust === undefined ? {} : { requestTls: trust }) });
      agents.set(via.url, agent);
    }
    return agent;
  };
  const all = (): Dispatcher[] => [direct, ...agents.values()];

  class ProxyRouter extends DispatcherBase {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const via = proxyFor(proxy as ProxySettings, String(options.origin));
      return (via === undefined ? direct : through(via)).dispatch(options, handler);
    }

    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | void {
      const closed = Promise.all(all().map((dispatcher) => dispatcher.close())).then(() => undefined);
      if (callback === undefined) return closed;
      void closed.then(callback);
    }

    override destroy(): Promise<void>;
    override destroy(error: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(error: Error | null, callback: () => void): void;
    override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
      const error = typeof first === 'function' ? null : (first ?? null);
      const callback = typeof first === 'function' ? first : second;
      const destroyed = Promise.all(all().map((dispatcher) => dispatcher.destroy(error))).then(() => undefined);
      if (callback === undefined) return destroyed;
      void destroyed.then(callback);
    }
  }
  return new ProxyRouter();
}

/** A reply read whole: its status, its headers (names in lower case, repeated ones as arrays), its body as text. */
export interface ExchangeReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface ExchangeOptions {
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /**
   * May be pipelined behind requests still unanswered (a bulk client, above): only for a request safe to send again (a GET,
   * or a write under an Idempotency-Key), since undici sends it again on another connection if its own closes before
   * its turn.
   */
  pipelined: boolean;
  /** A reply announced or grown past this many bytes ends the exchange (and its connection) with `tooLarge`'s error. */
  maxBytes: number;
  tooLarge: (headers: ExchangeReply['headers']) => Error;
}

/** An exchange under way: its reply, and how to end it early (the reply then rejects with the reason). */
export interface Exchange {
  reply: Promise<ExchangeReply>;
  abort(reason: Error): void;
}

/**
 * One request and its whole reply through undici's handler interface (`Dispatcher#dispatch`). undici's `request`
 * would wrap each reply in a Readable stream, an AsyncResource and the listeners of an abort signal, a third of what a
 * request cost the client in CPU (kb apply sends hundreds). Ending an exchange, as reading its reply past the limit
 * does, destroys its connection, as destroying `request`'s body did.
 */
export function exchange(dispatcher: Dispatcher, target: { origin: string; path: string }, options: ExchangeOptions): Exchange {
  const { origin, path } = target;
  let controller: Dispatcher.DispatchController | undefined;
  let abortedEarly: Error | undefined;
  let fail: (reason: Error) => void = () => undefined;
  const abort = (reason: Error) => {
    if (controller !== undefined) return controller.abort(reason);
    // Still waiting for a connection: the reply fails now, and the request is dropped as soon as it would start.
    abortedEarly ??= reason;
    fail(reason);
  };
  const reply = new Promise<ExchangeReply>((resolve, reject) => {
    fail = reject;
    let status = 0;
    let headers: ExchangeReply['headers'] = {};
    const chunks: Buffer[] = [];
    let size = 0;
    dispatcher.dispatch(
      {
        origin, path, method: options.method as Dispatcher.HttpMethod, headers: options.headers, body: options.body,
        // undici pipelines only what it may repeat, and nothing behind a `blocking` request (by default, all but HEAD).
        ...(options.pipelined ? { idempotent: true, blocking: false } : { idempotent: false }),
      },
      {
        onRequestStart(started) {
          controller = started;
          if (abortedEarly !== undefined) started.abort(abortedEarly);
        },
        onResponseStart(started, statusCode, replyHeaders) {
          // 1xx replies (100 Continue) come before the one that counts.
          if (statusCode < 200) return;
          status = statusCode;
          headers = replyHeaders as ExchangeReply['headers'];
          const announced = headers['content-length'];
          if (Number(Array.isArray(announced) ? announced[0] : announced) > options.maxBytes) started.abort(options.tooLarge(headers));
        },
        onResponseData(started, chunk) {
          size += chunk.length;
          if (size <= options.maxBytes) chunks.push(chunk);
          else started.abort(options.tooLarge(headers));
        },
        onResponseEnd() {
          resolve({ status, headers, text: Buffer.concat(chunks, size).toString('utf8') });
        },
        onResponseError(_controller, error) {
          reject(error);
        },
      },
    );
  });
  return { reply, abort };
}
