/**
 * The proxies a client sends through, as HTTPS_PROXY, HTTP_PROXY and NO_PROXY give them (src/config/proxy.ts reads
 * and checks the variables), and how a failure to reach one is told apart from a failure to reach the deployment.
 */

/** One proxy: its URL as undici takes it, and the variable that set it (HTTPS_PROXY, http_proxy...). */
export interface Proxy {
  url: string;
  variable: string;
}

/** As undici's EnvHttpProxyAgent takes them: https goes through `https`, else through `http`. */
export interface ProxySettings {
  http?: Proxy | undefined;
  https?: Proxy | undefined;
  /** NO_PROXY's value: hosts reached directly. */
  noProxy?: string | undefined;
}

/** A proxy URL as it may be shown: its password, if it has one, is not. */
export function shownProxyUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href.replace(/\/$/, '');
}

/**
 * The proxy a request to `url` goes through, NO_PROXY aside (undici decides that; a request it sends directly fails
 * at the deployment's own endpoint, which failedAtProxy tells apart).
 */
export function proxyFor(settings: ProxySettings, url: string): Proxy | undefined {
  return new URL(url).protocol === 'https:' ? (settings.https ?? settings.http) : settings.http;
}

/** The first of an error and its causes that names where a connection went: an address and port, or a host name. */
function endpoint(error: unknown): { address?: unknown; port?: unknown; hostname?: unknown } | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const { address, port, hostname, cause, errors } = current as Record<string, unknown>;
    if (address !== undefined || hostname !== undefined) return { address, port, hostname };
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** Host names in a URL keep IPv6 brackets; an error's address has none. */
function bare(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Whether a connection failure was the proxy's: a request that goes through a proxy connects to the proxy only, so
 * a failure that names another endpoint than the deployment's (refused at the proxy's port, the proxy's host name not
 * found) is the proxy's. Undecidable cases (same host and port) are the deployment's.
 */
export function failedAtProxy(proxy: Proxy, url: string, error: unknown): boolean {
  const where = endpoint(error);
  if (where === undefined) return false;
  const proxyUrl = new URL(proxy.url);
  const target = new URL(url);
  const proxyHost = bare(proxyUrl.hostname);
  const targetHost = bare(target.hostname);
  if (typeof where.hostname === 'string') return where.hostname === proxyHost && proxyHost !== targetHost;
  if (where.port === portOf(proxyUrl) && where.port !== portOf(target)) return true;
  return where.address === proxyHost && proxyHost !== targetHost;
}
