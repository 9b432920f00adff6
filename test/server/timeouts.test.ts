import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { tolerateStalls } from '../../src/server/stalls.js';
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
    // A header timeout long enough that a loaded machine answers the others well inside it, short enough for a test.
    app = buildApp({ store, logger: createLogger('silent'), headersTimeoutMs: 3000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await database?.drop();
  });

  it('is cut off with a 408 envelope, and the requests sent meanwhile are answered before it', async () => {
    const events: string[] = [];
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve(void events.push('dribbler cut off'))));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: localhost\r\n');
    // One byte of a header every 100 ms, forever: only the server's header timeout can end this.
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('X');
    }, 100);
    try {
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          fetch(`http://127.0.0.1:${port}/v1/health`).then((reply) => void events.push(`other ${i}: ${reply.status}`)),
        ),
      );
      await closed;
    } finally {
      clearInterval(drip);
    }
    // Every other request answered, and all of them before the dribbler was cut off: it held no one up.
    expect(events).toHaveLength(6);
    expect(events.slice(0, 5).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `other ${i}: 200`));
    expect(events[5]).toBe('dribbler cut off');
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

describe('an idle kept-alive connection, with stalls tolerated (stalls.ts)', () => {
  it('is still ended by the server once its keep-alive timeout passes without a stall', async () => {
    const database = await createTestDatabase();
    const store = await database.open();
    const app = buildApp({ store, logger: createLogger('silent') });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const stop = tolerateStalls(app.server);
    // Short, so that the test does not wait the product's 5 s.
    app.server.keepAliveTimeout = 300;
    try {
      const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1');
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      const closed = new Promise<boolean>((resolve) => socket.on('close', (hadError) => resolve(hadError)));
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
      // Nothing more is sent: only the server can end the connection.
      expect(await closed).toBe(false);
      expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"success":true,"data":"alive"\}$/);
    } finally {
      stop();
      await app.close();
      await store.close();
      await database.drop();
    }
  });
});
