import { ServeProfileTakenError } from './errors.js';
import { checkName, checkProfile, ProfileStore, toStored } from './profiles.js';

/** The profile `kb serve` saves on its first start, and the prefix of the one it falls back to. */
export const SERVE_PROFILE = 'local';

export interface ServeProfileOptions {
  /** The server's base URL, without /v1. */
  url: string;
  /** The token created on the first start. */
  token: string;
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
 * `local`, else `local-<port>`; the first of them that is absent, or that holds a token of this very server, is
 * written. A profile holding another instance's token is never overwritten: when every candidate holds one, this
 * throws ServeProfileTakenError and writes nothing. Decided and written under the config lock, so two servers
 * starting at once do not both take `local`.
 */
export async function saveServeProfile(options: ServeProfileOptions): Promise<ServeProfileResult> {
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535) {
    throw new RangeError(`saveServeProfile needs the port the server listens on, not ${options.port}`);
  }
  const candidates = options.name === undefined ? [SERVE_PROFILE, `${SERVE_PROFILE}-${options.port}`] : [options.name];
  for (const name of candidates) checkName(name);
  const profile = { url: options.url, token: options.token };
  checkProfile(profile);

  const store = options.store ?? new ProfileStore();
  return await store.update(async (draft) => {
    for (const name of candidates) {
      const saved = draft.profiles.get(name);
      const free = saved === undefined || (saved.token !== undefined && (await options.ownsToken(saved.token)));
      if (!free) continue;
      draft.profiles.set(name, toStored(profile));
      draft.defaultProfile ??= name;
      return { name, isDefault: draft.defaultProfile === name };
    }
    throw new ServeProfileTakenError(candidates);
  });
}
