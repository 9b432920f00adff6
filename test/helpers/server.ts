import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { generateToken } from '../../src/server/tokens.js';
import type { Store, TokenOptions } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export { tempDir } from './temp.js';

export interface TestServer {
  app: FastifyInstance;
  store: Store;
  /** The fresh database under the store, of the engine under test. */
  database: TestDatabase;
  /** The base URL without /v1, e.g. http://127.0.0.1:40123 */
  url: string;
  /** A token of organization `org`. */
  token: string;
  org: string;
  /** Creates a further token, for the same or another organization. */
  newToken(org: string, options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real kb server listening on a free loopback port, in this process, over a fresh database of the engine under
 * test (KB_TEST_ENGINE, set by the vitest project: SQLite in a temp dir, or a new database in the test PostgreSQL).
 */
export async function startTestServer(options: { org?: string; listen?: boolean; roundTripMs?: number; watchHeartbeatMs?: number; watchStallMs?: number } = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const store = await database.open(options.roundTripMs === undefined ? {} : { roundTripMs: options.roundTripMs });
  const app = buildApp({ store, logger: createLogger('silent'), watchHeartbeatMs: options.watchHeartbeatMs, watchStallMs: options.watchStallMs });
  const newToken = async (org: string, tokenOptions?: TokenOptions) => {
    const token = generateToken();
    await store.createToken(org, token.id, token.hash, tokenOptions);
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
    app, store, database, url, token, org, newToken,
    async close() {
      await app.close();
      await store.close();
      await database.drop();
    },
  };
}
