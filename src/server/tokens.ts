import { hash, randomBytes } from 'node:crypto';

/** Tokens read `kbt_` and 43 base64url characters (32 random bytes); the store keeps only their SHA-256. */
export const TOKEN_PREFIX = 'kbt_';

export function generateToken(): { id: string; token: string; hash: Buffer } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { id: `tok_${randomBytes(6).toString('hex')}`, token, hash: hashToken(token) };
}

export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
