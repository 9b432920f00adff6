import { hash, randomBytes } from 'node:crypto';

/** Tokens read `kbt_` and 43 base64url characters (32 random bytes); the store keeps only their SHA-256. */
export const TOKEN_PREFIX = 'kbt_';
const SECRET_BYTES = 32;
/** The base64url characters after the prefix: 4 for every 3 bytes, without padding. */
export const TOKEN_SECRET_LENGTH = Math.ceil((SECRET_BYTES * 4) / 3);

export function generateToken(): { id: string; token: string; hash: Buffer } {
  const token = TOKEN_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
  return { id: `tok_${randomBytes(6).toString('hex')}`, token, hash: hashToken(token) };
}

export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
