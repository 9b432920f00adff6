import { hash, randomBytes } from 'node:crypto';
import { TOKEN_PREFIX, TOKEN_SECRET_BYTES } from '../api/schemas.js';

/** Tokens have the form of src/api/schemas.ts; the store keeps only their SHA-256. */
export { TOKEN_PREFIX, TOKEN_SECRET_LENGTH } from '../api/schemas.js';

export function generateToken(): { id: string; token: string; hash: Buffer } {
  const token = TOKEN_PREFIX + randomBytes(TOKEN_SECRET_BYTES).toString('base64url');
  return { id: `tok_${randomBytes(6).toString('hex')}`, token, hash: hashToken(token) };
}

export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
