import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminServer } from '../../src/server/admin.js';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { WARM_UP_REQUESTS, WarmUp } from '../../src/server/warm-up.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

interface Line {
  level: string;
  reqId?: string;
  path?: string;
  status?: number;
  msg: string;
}

/** The value of one sample of a scrape, by its name and labels as written; 0 when absent. */
function sample(metrics: string, name: string, labels = ''): number {
  const line = metrics.split('\n').find((text) => text.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe("the server's warm-up", () => {
  let database: TestDatabase;
  let store: Store;
  let admin: AdminServer;
  let adminUrl = '';
  let app: ReturnType<typeof buildApp>;
  const raw: string[] = [];
  const lines = () => raw.map((line) => JSON.parse(line) as Line);
  let served = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await database.open();
    admin = new AdminServer();
    // At info, with metrics on: what a warm-up must stay out of.
    app = buildApp({ store, logger: createLogger('info', { format: 'json', sink: (line) => raw.push(line) }), observer: admin.observer });
    await app.listen({ host: '127.0.0.1', port: 0 });
    adminUrl = await admin.start({ host: '127.0.0.1', port: 0 });
    admin.serving(store);
    app.server.on('request', () => served++);
    // fastify's own line of listening.
    raw.length = 0;
  });
  afterAll(async () => {
    await app?.close();
    await admin?.close();
    await store?.close();
    await database?.drop();
  });

  it('sends the server its requests, and none of them is logged or counted; the server then serves as before', async () => {
    // A limit no machine reaches: the count is what is checked.
    await app.warmUp.run(app.server.address() as AddressInfo, WARM_UP_REQUESTS, 120_000);
    // Every one of them reached the server.
    expect(served).toBe(WARM_UP_REQUESTS);
    expect(lines().filter((line) => line.msg === 'request'), raw.join('\n')).toEqual([]);
    expect(raw).toEqual([]);
    const before = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(before).not.toMatch(/^kb_http_requests_total\{/m);
    expect(before).not.toMatch(/^kb_http_request_duration_seconds_count\{/m);

    // A client's request after it: answered, logged with the app's first request id, counted once.
    const reply = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/health`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ success: true, data: 'alive' });
    const id = reply.headers.get('x-request-id') as string;
    expect(id).toMatch(/^[0-9a-f]{8}-1$/);
    const logged = lines().filter((line) => line.msg === 'request');
    expect(logged).toEqual([expect.objectContaining({ level: 'info', reqId: id, path: '/v1/health', status: 200 })]);
    const after = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(sample(after, 'kb_http_requests_total', '{route="health",method="GET",status="200"}')).toBe(1);
    expect(sample(after, 'kb_http_request_duration_seconds_count', '{route="health"}')).toBe(1);
  });

  it('gives up at its limit on a server that takes connections and never answers: the start is not held', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      // Without the cut, this would wait for ever (and the test time out).
      await new WarmUp().run(silent.address() as AddressInfo, 50, 200);
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
