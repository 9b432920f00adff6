/**
 * The two parts of undici the client uses, imported from their own modules: undici's index also loads fetch,
 * WebSocket, the cache and the mocks, which would double what `kb ns list` pays to start (README,
 * "Performance"). These paths are undici's internals, so package.json pins undici to one minor version.
 */
import type { Dispatcher, EnvHttpProxyAgent as EnvHttpProxyAgentType } from 'undici';
// @ts-expect-error undici ships no types for its internal modules; their types are the public ones below.
import EnvHttpProxyAgentModule from 'undici/lib/dispatcher/env-http-proxy-agent.js';
// @ts-expect-error as above.
import apiRequest from 'undici/lib/api/api-request.js';

/** undici's EnvHttpProxyAgent: honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY. */
export const EnvHttpProxyAgent = EnvHttpProxyAgentModule as typeof EnvHttpProxyAgentType;

type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

/** undici's `request(url, options)`, sent through the given dispatcher. */
export function request(dispatcher: Dispatcher, url: string, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  const send = apiRequest as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  return send.call(dispatcher, { ...options, origin, path: `${pathname}${search}` });
}
