import type { ProfileStore } from '../config/profiles.js';
import type { Store } from '../store/store.js';
import type { Context } from './context.js';

/** Whether a token belongs to the server over this store: its hash is the hash of an active token. */
function ownsToken(store: Store): (token: string) => Promise<boolean> {
  return async (token) => {
    const { hashToken } = await import('../server/tokens.js');
    return (await store.authenticate(hashToken(token))) !== null;
  };
}

/**
 * Saves a token of the local server as a CLI profile, docs/contract.md, First start: `local`, or `local-<port>` when `local`
 * holds another server's token, or the name given; a profile that holds another server's token is never replaced
 * (ServeProfileTakenError when every candidate does).
 */
export async function saveLocalProfile(
  store: Store,
  profiles: ProfileStore,
  options: { url: string; token: string; name?: string | undefined },
): Promise<{ name: string; isDefault: boolean }> {
  const { saveServeProfile } = await import('../config/serve-profile.js');
  const { port, protocol } = new URL(options.url);
  return saveServeProfile({
    url: options.url,
    token: options.token,
    port: Number(port || (protocol === 'https:' ? 443 : 80)),
    name: options.name,
    ownsToken: ownsToken(store),
    store: profiles,
  });
}

/**
 * Who holds a working token of this server: the name of a saved profile, or 'KB_TOKEN'; undefined when no one
 * does, also when the config cannot be read (then no profile can be used either).
 */
export async function userHoldsToken(store: Store, context: Pick<Context, 'env' | 'profiles'>): Promise<string | undefined> {
  const owns = ownsToken(store);
  const { token } = context.env;
  if (token !== undefined && (await owns(token))) return 'KB_TOKEN';
  let profiles: Array<[string, string]>;
  try {
    profiles = [...(await context.profiles().read()).profiles].flatMap(([name, profile]) => (profile.token ? [[name, profile.token] as [string, string]] : []));
  } catch {
    return undefined;
  }
  for (const [name, token] of profiles) if (await owns(token)) return name;
  return undefined;
}
