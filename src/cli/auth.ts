import { Flags } from '@oclif/core';
import { TOKEN_PREFIX } from '../api/limits.js';

/** Shows enough of a token to tell two apart, never enough to use: `kbt_…x9Qa`. */
export function maskToken(token: string): string {
  const prefix = /^[a-z]+_/.exec(token)?.[0] ?? '';
  return token.length < prefix.length + 12 ? `${prefix}…` : `${prefix}…${token.slice(-4)}`;
}

/**
 * kb's tokens (src/api/schemas.ts) as they may be typed where they do not belong: the prefix and a run of base64url
 * characters, long enough not to take a word for one.
 */
const TOKEN_TEXT = new RegExp(`\\b${TOKEN_PREFIX}[A-Za-z0-9_-]{20,}`, 'g');

/** Whether a word of argv looks like a token. */
export function looksLikeToken(text: string): boolean {
  // search(), unlike test(), neither reads nor moves a global pattern's lastIndex.
  return text.search(TOKEN_TEXT) !== -1;
}

/**
 * A message with any token in it masked: a token typed into argv by mistake (`kb auth login kbt_...`) comes back in
 * "unexpected argument: ..." and the like, and stderr often goes to a CI log.
 */
export function maskTokensIn(text: string): string {
  return text.replace(TOKEN_TEXT, maskToken);
}

/** What to say when argv held a token. */
export const TOKEN_IN_ARGV_HELP = 'That looks like a token: kb never takes one in argv, where other users can read it. Pipe it to `kb auth login --with-token`.';

export const profileFlag = Flags.string({ summary: 'The profile (default: $KB_PROFILE, else the default profile).' });

export const DEFAULT_URL = 'http://127.0.0.1:8080';
