import { ServeProfileTakenError } from './errors.js';
import { checkName, checkProfile, ProfileStore, toStored } from './profiles.js';

/** The profile `kb serve` saves on its first start, and the prefix of the one it falls back to. */
export const SERVE_PROFILE = 'local';

export interface ServeProfileOptions {
  /** The server's base URL, without /v1. */
  url: string;
  /** The token created on the first start. */
  token: string;
  /** With TLS: the certificate file, saved as the profile's CA. */
  ca?: string | undefined;
  /** The port the server listens on: names the fallback profile `local-<port>`. */
  port: number;
  /** From `kb serve --profile NAME`: the only name tried. */
  name?: string | undefined;
  /** Whether a token belongs to the server being started, i.e. a profile holding it points at this server. */
  ownsToken: (token: string) => Promise<boolean>;
  /** The store in the config dir by default. */
  store?: ProfileStore | undefined;
}

export interface ServeProfileResult {
  /** The profile saved. */
  name: string;
  /** Whether it is the default profile: only when there was no default before. */
  isDefault: boolean;
}

/**
 * `kb serve`'s first start saves its URL and token as a profile (docs/contract.md, First start): `name` when given, else
 * `local`, else `local-<port>`; the first of them that is absent, or that holds a token of this very server (or, named
 * with --profile, no token at all), is written. A profile holding another instance's token is never overwritten: when every candidate holds one, this
 * throws ServeProfileTakenError and writes nothing. Decided and written under the config lock, so two servers
 * starting at once do not both take `local`.
 */
export async function saveServeProfile(options: ServeProfileOptions): Promise<ServeProfileResult> {
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535) {
    throw new RangeError(`saveServeProfile needs the port the server listens on, not ${options.port}`);
  }
  const candidates = options.name === undefined ? [SERVE_PROFILE, `${SERVE_PROFILE}-${options.port}`] : [options.name];
  for (const name of candidates) checkName(name);
  const profile = { url: options.url, token: options.token, ...(options.ca === undefined ? {} : { ca: options.ca }) };
  checkProfile(profile);

  const store = options.store ?? new ProfileStore();
  return await store.update(async (draft) => {
    for (const name of candidates) {
      const saved = draft.profiles.get(name);
      // A profile with no token (logged out) has nothing to lose, but may be the user's own for another deployment:
      // it is taken when its name is given (--profile), never as `local` or `local-<port>`.
      const free =
        saved === undefined || (saved.token === undefined ? options.name !== undefined : await options.ownsToken(saved.token));
      if (!free) continue;
      // A new token for a TLS server's profile (`kb serve token create --save`) keeps the CA it had for that URL.
      const ca = profile.ca ?? (saved?.url === options.url ? saved.ca : undefined);
      draft.profiles.set(name, toStored(ca === undefined ? profile : { ...profile, ca }));
      draft.defaultProfile ??= name;
      return { name, isDefault: draft.defaultProfile === name };
    }
    throw new ServeProfileTakenError(candidates);
  });
}

/**
 * Whether a profile's URL names a server on this machine as kb serve saves it: http, or https with --tls-cert, to a
 * loopback address. Only such a profile follows its server to another port; any other (a proxy's name, a path) was
 * set up by a person.
 */
export function isLocalServerUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && loopback && parsed.pathname === '/' && parsed.search === '' && parsed.username === '';
}

export interface FollowOptions {
  /** The profile. */
  name: string;
  /** The URL and token it was found with: it is changed only if it still has both. */
  from: string;
  token: string;
  /** The server's URL now. */
  to: string;
  /** The store in the config dir by default. */
  store?: ProfileStore | undefined;
}

/**
 * Points a profile holding a token of a local server at the URL that server has now (served again on another port):
 * its URL changes, its token and anything else stay. Under the config lock, and only if the profile still has the
 * URL and token it was found with; returns whether it was changed.
 */
export async function followServeProfile(options: FollowOptions): Promise<boolean> {
  checkProfile({ url: options.to });
  const store = options.store ?? new ProfileStore();
  return await store.update((draft) => {
    const saved = draft.profiles.get(options.name);
    if (saved === undefined || saved.url !== options.from || saved.token !== options.token) return false;
    draft.profiles.set(options.name, { ...saved, url: options.to });
    return true;
  });
}

/**
 * For a profile as kb serve saves it (`local` or `local-<port>`, at a local server URL): the command that gets it a new
 * token from that server, since its first token is shown only once. Undefined for any other profile.
 */
export function localServerLoginHint(name: string, url: string | undefined): string | undefined {
  if (url === undefined || !isLocalServerUrl(url)) return undefined;
  if (name !== SERVE_PROFILE && !new RegExp(`^${SERVE_PROFILE}-\\d+$`).test(name)) return undefined;
  const base = url.replace(/\/$/, '');
  return `kb serve token create --org local --save --profile ${name}${base === 'http://127.0.0.1:8080' ? '' : ` --url ${base}`}`;
}
