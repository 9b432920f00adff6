import { Flags } from '@oclif/core';

/** Shows enough of a token to tell two apart, never enough to use: `kbt_…x9Qa`. */
export function maskToken(token: string): string {
  const prefix = /^[a-z]+_/.exec(token)?.[0] ?? '';
  return token.length < prefix.length + 12 ? `${prefix}…` : `${prefix}…${token.slice(-4)}`;
}

export const profileFlag = Flags.string({ summary: 'The profile (default: $KB_PROFILE, else the default profile).' });

export const DEFAULT_URL = 'http://127.0.0.1:8080';
