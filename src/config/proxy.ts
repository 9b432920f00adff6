/**
 * The proxy variables, read as curl reads them (the lower-case name first; docs/contract.md, Network) and checked
 * before anything is sent: a value without a scheme (`proxy.corp:3128`) is taken as http://, one without a port goes
 * to curl's 1080 (443 for https://), and a path, query or fragment is ignored, as curl ignores them; anything that is
 * not an http:// or https:// URL with a host is refused at once, naming the variable, instead of failing every request
 * with undici's "Invalid URL".
 */
import type { ProxySettings } from '../client/proxy.js';
import type { ProxyVariables } from './env.js';
import { ConfigError } from './errors.js';

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Whether the authority of a URL (after its scheme) writes a port: `:80` is written, though URL drops it as the default. */
const WRITTEN_PORT = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]/?#]*\]|[^:/?#]*):/i;
/** curl's port for an http:// proxy whose URL names none (CURLOPT_PROXYPORT). */
const CURL_PROXY_PORT = '1080';

/** A proxy variable's value as the URL undici takes; throws a ConfigError (exit 2) for one that cannot be a proxy. */
export function proxyUrl(variable: string, value: string): string {
  const withScheme = SCHEME.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalid(variable, 'it is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(variable, `kb sends through http:// and https:// proxies, not ${url.protocol}//`);
  }
  if (url.hostname === '') throw invalid(variable, 'it names no host');
  if (url.protocol === 'http:' && !WRITTEN_PORT.test(withScheme)) url.port = CURL_PROXY_PORT;
  url.pathname = '/';
  url.search = '';
  url.hash = '';
  return url.href;
}

function invalid(variable: string, reason: string): ConfigError {
  // The value is not repeated: it may hold a password, and the user can print it with `echo $VARIABLE`.
  return new ConfigError('invalid_url', `invalid proxy in ${variable}: ${reason}`, `Set ${variable} to a URL such as http://proxy.example.com:3128, or unset it.`);
}

/** The proxies the variables name, checked; undefined when none is set. */
export function proxySettings(variables: ProxyVariables | undefined): ProxySettings | undefined {
  if (variables === undefined) return undefined;
  const settings: ProxySettings = { noProxy: variables.noProxy };
  for (const scheme of ['http', 'https', 'all'] as const) {
    const variable = variables[scheme];
    if (variable !== undefined) settings[scheme] = { url: proxyUrl(variable.name, variable.value), variable: variable.name };
  }
  return settings;
}
