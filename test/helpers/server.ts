import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/log.js';
import { generateToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite.js';

export function tempDir(prefix = 'kb-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer {
  app: FastifyInstance;
  store: SqliteStore;
  dataDir: string;
  /** The base URL without /v1, e.g. http://127.0.0.1:40123 */
  url: string;
  /** A token of organization `org`. */
  token: string;
  org: string;
  /** Creates a further token, for the same or another organization. */
  newToken(org: string): Promise<string>;
  close(): Promise<void>;
}

/** A real kb server (SQLite in a temp dir) listening on a free loopback port, in this process. */
export async function startTestServer(options: { org?: string; listen?: boolean } = {}): Promise<TestServer> {
  const dataDir = tempDir('kb-data-');
  const store = SqliteStore.open(dataDir);
  const app = buildApp({ store, logger: createLogger('silent') });
  const newToken = async (org: string) => {
    const token = generateToken();
    await store.createToken(org, token.id, token.hash);
    return token.token;
  };
  const org = options.org ?? 'acme';
  const token = await newToken(org);
  let url = '';
  if (options.listen !== false) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    url = `http://127.0.0.1:${address.port}`;
  } else {
    await app.ready();
  }
  return {
    app, store, dataDir, url, token, org, newToken,
    async close() {
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
