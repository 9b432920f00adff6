/**
 * The parts of undici the client uses. Without a proxy, undici's Agent and `request` are imported from their own
 * modules: undici's index also loads fetch, WebSocket, the cache and the mocks, which would double what `kb ns list`
 * pays to start (README, "Performance"). These paths are undici's internals, so package.json pins undici to one
 * minor version.
 */
import type { Agent as AgentType, Dispatcher } from 'undici';
// @ts-expect-error undici ships no types for its internal modules; their types are the public ones below.
import AgentModule from 'undici/lib/dispatcher/agent.js';
import { type Proxy, proxyFor, type ProxySettings } from './proxy.js';
// @ts-expect-error as above.
import apiRequest from 'undici/lib/api/api-request.js';

/** undici's Agent: one pool of connections per origin. */
export const Agent = AgentModule as typeof AgentType;

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
export async function defaultDispatcher(connectTimeoutMs: number, proxy: ProxySettings | undefined): Promise<Dispatcher> {
  const connect = { timeout: connectTimeoutMs };
  if (proxy === undefined) return new Agent({ connect });
  const undici = await import('undici');
  // Bundled, undici (CommonJS) arrives as the default export only; from node_modules, with named exports too.
  const { Dispatcher: DispatcherBase, ProxyAgent } = (undici as unknown as { default?: typeof undici }).default ?? undici;
  const direct = new Agent({ connect });
  const agents = new Map<string, Dispatcher>();
  const through = (via: Proxy): Dispatcher => {
    let agent = agents.get(via.url);
    if (agent === undefined) {
      agent = new ProxyAgent({ uri: via.url, connect, proxyTunnel: false });
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

type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

/** undici's `request(url, options)`, sent through the given dispatcher. */
export function request(dispatcher: Dispatcher, url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  const send = apiRequest as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  return send.call(dispatcher, { ...options, origin, path: `${pathname}${search}` });
}
