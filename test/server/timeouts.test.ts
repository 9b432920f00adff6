import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('a client that dribbles its headers', () => {
  let database: TestDatabase;
  let store: Store;
  let app: FastifyInstance;
  let port = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await database.open();
    app = buildApp({ store, logger: createLogger('silent'), headersTimeoutMs: 1000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await database?.drop();
  });

  it('is cut off with a 408 envelope while others are served meanwhile', async () => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: localhost\r\n');
    // One byte of a header every 100 ms, forever: only the server's header timeout can end this.
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('X');
    }, 100);
    try {
      const others = await Promise.all(
        Array.from({ length: 5 }, () => fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.status)),
      );
      expect(others).toEqual([200, 200, 200, 200, 200]);
      expect(socket.destroyed).toBe(false);
      await closed;
    } finally {
      clearInterval(drip);
    }
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('{"success":false,"message":"Request timed out"}');
  }, 15_000);
});

describe('the server defaults', () => {
  it('gives clients at most 5 s for headers and 10 s for a request, checked every second', async () => {
    const database = await createTestDatabase();
    const store = await database.open();
    const app = buildApp({ store, logger: createLogger('silent') });
    try {
      expect(app.server.headersTimeout).toBe(5000);
      expect(app.server.requestTimeout).toBe(10_000);
      // Node keeps connectionsCheckingInterval private; its effect is what the dribble test above shows.
      expect(app.server.keepAliveTimeout).toBe(5000);
    } finally {
      await app.close();
      await store.close();
      await database.drop();
    }
  });
});
