import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import type { ProfileStore } from '../config/profiles.js';
import type { Store } from '../store/store.js';
import { shellQuote } from '../os/shell.js';
import type { Context } from './context.js';
import { UsageError } from './errors.js';

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
  options: { url: string; token: string; name?: string | undefined; ca?: string | undefined },
): Promise<{ name: string; isDefault: boolean }> {
  const { saveServeProfile } = await import('../config/serve-profile.js');
  const { port, protocol } = new URL(options.url);
  return saveServeProfile({
    url: options.url,
    token: options.token,
    ca: options.ca,
    port: Number(port || (protocol === 'https:' ? 443 : 80)),
    name: options.name,
    ownsToken: ownsToken(store),
    store: profiles,
  });
}

/** Who holds a working token of the server being started, and where that token's profile points. */
export type TokenHolder =
  /** KB_TOKEN. */
  | { kind: 'env' }
  /** A profile that points at this server. */
  | { kind: 'here'; name: string }
  /** A profile that pointed at this server's old URL, and now points here. */
  | { kind: 'moved'; name: string; from: string }
  /** A profile that points elsewhere and was left so: not a local URL, or something else answers at it. */
  | { kind: 'elsewhere'; name: string; url: string; why: string }
  /** No one, also when the config cannot be read (then no profile can be used either). */
  | { kind: 'none' };

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/**
 * Whether anything listens at a URL: only a refused connection says that nothing does. A TCP connection is enough to
 * tell (Node's fetch would load its own copy of undici for it, a twelfth of a start's CPU).
 */
async function somethingListens(url: string): Promise<boolean> {
  const { connect } = await import('node:net');
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || (protocol === 'https:' ? 443 : 80)), timeout: 2000 });
    const answer = (listens: boolean) => {
      socket.destroy();
      resolve(listens);
    };
    socket.once('connect', () => answer(true));
    socket.once('timeout', () => answer(true));
    socket.once('error', (error: NodeJS.ErrnoException) => answer(error.code !== 'ECONNREFUSED'));
  });
}

/**
 * On a later start: who holds a working token of this server. A profile holding one that points at the server's
 * old URL (a data dir served again on another port) follows it here, when that is safe: its URL is a local one, as
 * kb serve saves it, and nothing listens there any more (not another server, nor this one's other replica).
 */
export async function findTokenHolder(store: Store, context: Pick<Context, 'env' | 'profiles'>, url: string): Promise<TokenHolder> {
  const owns = ownsToken(store);
  const { token } = context.env;
  if (token !== undefined && (await owns(token))) return { kind: 'env' };
  let config: Awaited<ReturnType<ProfileStore['read']>>;
  try {
    config = await context.profiles().read();
  } catch {
    return { kind: 'none' };
  }
  const holders: Array<{ name: string; url: string; token: string }> = [];
  for (const [name, profile] of config.profiles) {
    if (profile.token !== undefined && (await owns(profile.token))) holders.push({ name, url: profile.url, token: profile.token });
  }
  const here = holders.find((holder) => sameUrl(holder.url, url));
  if (here) return { kind: 'here', name: here.name };
  const holder = holders.find((candidate) => candidate.name === config.defaultProfile) ?? holders[0];
  if (holder === undefined) return { kind: 'none' };
  const { followServeProfile, isLocalServerUrl } = await import('../config/serve-profile.js');
  if (!isLocalServerUrl(holder.url)) return { kind: 'elsewhere', name: holder.name, url: holder.url, why: 'not a local URL' };
  if (await somethingListens(holder.url)) return { kind: 'elsewhere', name: holder.name, url: holder.url, why: 'something listens there' };
  const moved = await followServeProfile({ name: holder.name, from: holder.url, token: holder.token, to: url, store: context.profiles() });
  if (moved) return { kind: 'moved', name: holder.name, from: holder.url };
  return { kind: 'elsewhere', name: holder.name, url: holder.url, why: 'it changed while kb serve started' };
}

/** The absolute path of the CA file --cacert names, once it is known to be readable: a usage error before anything is made. */
export function readableCaFile(file: string): string {
  const path = resolve(file);
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw new UsageError(`--cacert ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'cannot be read'}. Nothing was created.`);
  }
  return path;
}

/** The command that saves a token as a profile by hand, the token given on stdin (never in argv). */
export function loginCommand(url: string, ca: string | undefined): string {
  return `kb auth login --url ${shellQuote(url)}${ca === undefined ? '' : ` --cacert ${shellQuote(ca)}`} --with-token`;
}
