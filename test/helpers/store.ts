import { generateToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';

/** Creates a token for `org` and returns the organization's id, as the server's authentication would. */
export async function orgIdOf(store: Store, org: string): Promise<number> {
  const token = generateToken();
  await store.createToken(org, token.id, token.hash);
  const principal = await store.authenticate(token.hash);
  if (!principal) throw new Error('a fresh token did not authenticate');
  return principal.orgId;
}
