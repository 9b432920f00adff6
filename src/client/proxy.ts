/**
 * The proxies a client sends through, as HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY give them
 * (src/config/proxy.ts reads and checks the variables), which of them a request takes, as curl picks it, and how a
 * failure to reach one is told apart from a failure to reach the deployment.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** One proxy: its URL as undici takes it, and the variable that set it (HTTPS_PROXY, http_proxy...). */
export interface Proxy {
  url: string;
  variable: string;
}

/** As curl takes them: an https URL goes through `https`, an http one through `http`, either through `all` if its own is unset. */
export interface ProxySettings {
  http?: Proxy | undefined;
  https?: Proxy | undefined;
  /** ALL_PROXY: the lowest precedence. */
  all?: Proxy | undefined;
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
 * The proxy a request to `url` goes through, or undefined to go directly, as curl decides: NO_PROXY first, then the
 * scheme's own variable (an https URL never takes HTTP_PROXY), then ALL_PROXY.
 */
export function proxyFor(settings: ProxySettings, url: string): Proxy | undefined {
  const { protocol, hostname } = new URL(url);
  if (noProxyMatches(settings.noProxy ?? '', hostname)) return undefined;
  return (protocol === 'https:' ? settings.https : settings.http) ?? settings.all;
}

/** Whether an address lies in a NO_PROXY entry (an address, or a range as `10.0.0.0/8`), as curl compares them. */
function inRange(address: string, family: 'ipv4' | 'ipv6', entry: string): boolean {
  const slash = entry.indexOf('/');
  const network = slash === -1 ? entry : entry.slice(0, slash);
  const bits = slash === -1 ? 0 : Number.parseInt(entry.slice(slash + 1), 10) || 0;
  if (!(family === 'ipv4' ? isIPv4(network) : isIPv6(network))) return false;
  // curl's rule: no prefix (or /0) compares the whole address.
  const prefix = bits === 0 ? (family === 'ipv4' ? 32 : 128) : bits;
  if (prefix > (family === 'ipv4' ? 32 : 128)) return false;
  const range = new BlockList();
  range.addSubnet(network, prefix, family);
  return range.check(address, family);
}

/** The entries of NO_PROXY as curl walks them: separated by commas, blanks around each; a blank inside one ends the list. */
function noProxyEntries(value: string): string[] {
  const entries: string[] = [];
  for (const part of value.split(',')) {
    const entry = part.replace(/^[ \t]+|[ \t]+$/g, '');
    const blank = entry.search(/[ \t]/);
    if (blank !== -1) {
      entries.push(entry.slice(0, blank));
      break;
    }
    entries.push(entry);
  }
  return entries.filter((entry) => entry !== '');
}

/**
 * Whether NO_PROXY sends a host directly, read as curl reads it (its lib/noproxy.c): `*` alone is every host; entries
 * are separated by commas; a name matches itself and every name below it (`corp` and `.corp` alike match `kb.corp`),
 * ignoring case and a trailing dot; an IP address (v4, or v6 in brackets in the URL) matches an entry that is the same
 * address or a CIDR range holding it. Nothing is resolved: `localhost` never matches 127.0.0.1, and an entry with a
 * port matches nothing.
 */
export function noProxyMatches(noProxy: string, hostname: string): boolean {
  if (noProxy === '') return false;
  if (noProxy === '*') return true;
  const bracketed = /^\[(.*)\]$/.exec(hostname);
  const host = (bracketed?.[1] ?? hostname).toLowerCase();
  const family = bracketed !== null ? 'ipv6' : isIPv4(host) ? 'ipv4' : undefined;
  const name = host.replace(/\.$/, '');
  for (const entry of noProxyEntries(noProxy)) {
    if (family !== undefined) {
      if (inRange(host, family, entry)) return true;
      continue;
    }
    const domain = entry.toLowerCase().replace(/\.$/, '').replace(/^\./, '');
    if (domain !== '' && (name === domain || name.endsWith(`.${domain}`))) return true;
  }
  return false;
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
