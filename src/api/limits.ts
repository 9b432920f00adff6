/**
 * The API's limits and rules as plain values and predicates, without zod: what the CLI checks on every call
 * (src/api/quick.ts) loads this, and zod (src/api/schemas.ts) only when a value is refused and must be explained.
 */

/** Tokens read `kbt_` and 43 base64url characters (32 random bytes), however a server makes them. */
export const TOKEN_PREFIX = 'kbt_';
export const TOKEN_SECRET_BYTES = 32;
/** The base64url characters after the prefix: 4 for every 3 bytes, without padding. */
export const TOKEN_SECRET_LENGTH = Math.ceil((TOKEN_SECRET_BYTES * 4) / 3);

/** The limits of docs/contract.md, Limits and Requests and keys, in one place. */
export const LIMITS = {
  keyMin: 3,
  keyMax: 63,
  descriptionMin: 1,
  descriptionMax: 1024,
  bodyBytes: 64 * 1024,
  /** docs/contract.md, Limits: more failed authentications than this from one address within the window give 429. */
  authFailures: 20,
  authFailureWindowMs: 60_000,
} as const;

export const KEY_PATTERN = /^[A-Za-z0-9_-]{3,63}$/;
export const KEY_RULE = 'a key is 3 to 63 characters, each A-Z, a-z, 0-9, dash (-) or underscore (_)';
export const DESCRIPTION_RULE = 'a description is 1 to 1024 characters, or null';

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Counts Unicode code points, so an emoji is one character, as docs/contract.md, Requests and keys, says. */
export function codePointLength(text: string): number {
  // Without a high surrogate there is no pair: one code unit each. Checked first, since a character-by-character walk
  // is most of what checking a description costs while the code is still cold (kb apply checks one a change).
  if (!HIGH_SURROGATE.test(text)) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** An unpaired UTF-16 surrogate: it has no UTF-8 form, so storage would silently turn it into U+FFFD. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** The length rule of a description (Description, and src/api/quick.ts). */
export function descriptionLengthOk(text: string): boolean {
  const length = codePointLength(text);
  return length >= LIMITS.descriptionMin && length <= LIMITS.descriptionMax;
}

/** Whether text has no unpaired surrogate (Description, and src/api/quick.ts). */
export function validUnicode(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
