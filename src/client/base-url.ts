import { API_PREFIX } from '../api/route-table.js';
import { ClientOptionsError } from './errors.js';

/**
 * The deployment's base URL as the client uses it: http or https, no credentials, query or fragment, no trailing
 * slash. A URL that ends in the API's own prefix (/v1) is taken without it, and `withoutApiPrefix` says so.
 */
export function normalizeBaseUrl(url: string): { url: string; withoutApiPrefix: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ClientOptionsError(`not a URL: ${JSON.stringify(url)} (expected e.g. http://127.0.0.1:8080)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ClientOptionsError(`the URL must start with http:// or https://, not ${parsed.protocol}//`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new ClientOptionsError('the URL must not carry a user name or password; the token authenticates');
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new ClientOptionsError('the URL must not carry a query string or fragment');
  }
  const href = parsed.href.replace(/\/+$/, '');
  const prefix = new RegExp(`${API_PREFIX}$`);
  return prefix.test(href) ? { url: href.replace(prefix, ''), withoutApiPrefix: true } : { url: href, withoutApiPrefix: false };
}
