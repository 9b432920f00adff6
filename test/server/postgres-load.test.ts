import pg from 'pg';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_CHANNEL } from '../../src/store/postgres.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** kb serve over PostgreSQL under load, in this process: what a request costs the pool, and what a flood does. */

let server: TestServer;
beforeAll(async () => {
  // The flood's lists are held by a lock for as long as the test needs: longer than kb's bound on a round trip (5 s),
  // which with PostgreSQL's statement timeout below it would end them while the test looks at what was shed.
  server = await startTestServer({ org: 'load', roundTripMs: 60_000 });
});
afterAll(async () => {
  await server?.close();
});

const pool = () => (server.store as unknown as { connections: { pool: pg.Pool } }).connections.pool;

async function get(path: string, token: string | undefined = server.token): Promise<{ status: number; retryAfter: string | null; body: { success: boolean; message?: string } }> {
  const response = await fetch(`${server.url}/v1${path}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { success: boolean; message?: string } };
}

describe('a request on PostgreSQL', () => {
  it('takes one pool connection when its answer is not kept, none when it is, and none to authenticate a known token', async () => {
    await fetch(`${server.url}/v1/ns_create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'counted' }),
    });
    expect((await get('/auth')).status).toBe(200);
    let checkouts = 0;
    const count = () => checkouts++;
    subscribe(CHECKOUT_CHANNEL, count);
    try {
      expect((await get('/auth')).status).toBe(200);
      expect(checkouts).toBe(0);
      expect((await get('/base_list?namespace=counted')).status).toBe(200);
      expect(checkouts).toBe(1);
      expect((await get('/base_list?namespace=counted')).status).toBe(200);
      expect((await get('/auth')).status).toBe(200);
      expect(checkouts).toBe(1);
    } finally {
      unsubscribe(CHECKOUT_CHANNEL, count);
    }
  });
});

describe('a flood of 500 slow list requests', () => {
  it('never starves health or an authenticated request, and what cannot wait for a connection gets a fast 503', async () => {
    for (let i = 0; i < 5; i++) {
      await fetch(`${server.url}/v1/base_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: `flood-${i}`, key: 'faq' }),
      });
    }
    expect((await get('/auth')).status).toBe(200);
    // The lists are slow: another session holds the bases table, so each waits on its connection until it lets go.
    const blocker = new pg.Client({ connectionString: (server.database.storage as { url: string }).url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE bases IN ACCESS EXCLUSIVE MODE');
    const replies: Array<Awaited<ReturnType<typeof get>>> = [];
    const flood = Array.from({ length: 500 }, (_, i) => get(`/base_list?namespace=flood-${i % 5}`).then((reply) => void replies.push(reply)));
    try {
      const size = pool().options.max;
      // All but the pool's connections and the requests allowed to wait for one are refused at once, while the
      // database still holds the others.
      await expect.poll(() => replies.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(500 - size * 9);
      expect(replies.length).toBeLessThan(500);
      for (const shed of replies) {
        expect(shed.status).toBe(503);
        expect(shed.body).toEqual({ success: false, message: 'The server is busy with other requests', help: 'Retry in a moment.' });
        expect(shed.retryAfter).toMatch(/^\d+$/);
      }
      // Meanwhile health and an authenticated request are answered, within 5 s.
      for (const path of ['/health', '/auth']) {
        const started = performance.now();
        expect((await get(path)).status).toBe(200);
        expect(performance.now() - started).toBeLessThan(5000);
      }
      expect(replies.length).toBeLessThan(500);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    await Promise.all(flood);
    const statuses = replies.map((reply) => reply.status);
    expect(new Set(statuses)).toEqual(new Set([200, 503]));
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(pool().options.max);
  });
});
