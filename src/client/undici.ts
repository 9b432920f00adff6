/**
 * The parts of undici the client uses. Without a proxy, undici's Agent and `request` are imported from their own
 * modules: undici's index also loads fetch, WebSocket, the cache and the mocks, which would double what `kb ns list`
 * pays to start (README, "Performance"). These paths are undici's internals, so package.json pins undici to one
 * minor version.
 */
import type { Agent as AgentType, Dispatcher } from 'undici';
// @ts-expect-error undici ships no types for its internal modules; their types are the public ones below.
import AgentModule from 'undici/lib/dispatcher/agent.js';
import type { ProxySettings } from './proxy.js';
// @ts-expect-error as above.
import apiRequest from 'undici/lib/api/api-request.js';

/** undici's Agent: one pool of connections per origin. */
export const Agent = AgentModule as typeof AgentType;

/**
 * The dispatcher a client sends through: undici's Agent, or, for proxies (from HTTPS_PROXY, HTTP_PROXY and NO_PROXY,
 * as src/config/proxy.ts reads them), undici's own EnvHttpProxyAgent, given them as they were read and checked:
 * it would otherwise read the variables again itself, in its own way.
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
  const { EnvHttpProxyAgent } = (undici as unknown as { default?: typeof undici }).default ?? undici;
  // An empty string, not undefined, for a proxy that is not set: undici reads the variable for an undefined one.
  return new EnvHttpProxyAgent({
    connect,
    proxyTunnel: false,
    httpProxy: proxy.http?.url ?? '',
    httpsProxy: proxy.https?.url ?? '',
    noProxy: proxy.noProxy ?? '',
  });
}

type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

/** undici's `request(url, options)`, sent through the given dispatcher. */
export function request(dispatcher: Dispatcher, url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  const send = apiRequest as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  return send.call(dispatcher, { ...options, origin, path: `${pathname}${search}` });
}
