import { createHash } from 'node:crypto';

/**
 * Opens the main server's store (kb's own sources, by way of tsx) beside the running kb serve, for an organization of
 * its own with a freshly minted token, and runs `write(store, orgId)` there: as `kb serve token create` writes beside
 * a running server, one transaction and seconds where as many HTTP creates take minutes on a small machine. Resolves
 * with the token and what `write` resolved with.
 */
export async function seedThroughStore(ctx, tokenName, write) {
  const { main } = ctx;
  const token = await main.mintToken(tokenName);
  const { tsImport } = await import('tsx/esm/api');
  const { openStore } = await tsImport('../../../src/store/open.ts', import.meta.url);
  const [flag, where] = main.storeArgs;
  const store = await openStore(flag === '--data-dir' ? { engine: 'sqlite', dataDir: where } : { engine: 'postgres', url: where });
  try {
    const principal = await store.authenticate(createHash('sha256').update(token).digest());
    if (principal === null) throw new Error(`the token minted for ${tokenName} does not authenticate`);
    return { token, result: await write(store, principal.orgId) };
  } finally {
    await store.close();
  }
}
