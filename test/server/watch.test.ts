import { type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { createParser } from 'eventsource-parser';
import type { Base, Namespace } from '../../src/api/schemas.js';
import { hashToken } from '../../src/server/tokens.js';
import { WATCHER_BUFFER_BYTES } from '../../src/server/watch.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fetchCall } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ChurningWatcher, modelOf, openWatch, randomWrites, replay, seeded, type WatchEvent } from '../helpers/watch.js';

// GET /v1/watch (docs/contract.md, Live changes), on the engine under test, through a real port.

const ids = (events: readonly WatchEvent[]) => events.filter((event) => event.event === 'change').map((event) => Number(event.id));

describe('GET /v1/watch', () => {
  let server: TestServer;
  const post = (path: string, json: unknown, headers: Record<string, string> = {}, token = server.token) => fetchCall(server.url, 'POST', `/v1${path}`, { token, json, headers });

  beforeAll(async () => {
    server = await startTestServer({ org: 'watching' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('streams each committed change once, in order, with its cursor; a failed write and a replay are no change', async () => {
    const token = await server.newToken('plain');
    const stream = await openWatch(server.url, token);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-store');
    expect((await post('/ns_create', { key: 'docs' }, {}, token)).status).toBe(200);
    expect((await post('/ns_create', { key: 'docs' }, {}, token)).status).toBe(409);
    expect((await post('/base_create', { namespace: 'docs', key: 'faq', description: 'd' }, { 'idempotency-key': 'one' }, token)).status).toBe(200);
    const replayed = await post('/base_create', { namespace: 'docs', key: 'faq', description: 'd' }, { 'idempotency-key': 'one' }, token);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect((await post('/base_update', { namespace: 'docs', base: 'nope', data: { description: 'x' } }, {}, token)).status).toBe(404);
    expect((await post('/base_create', { namespace: 'implied', key: 'bee' }, {}, token)).status).toBe(200);
    expect((await post('/ns_update', { namespace: 'docs', data: { description: 'about' } }, {}, token)).status).toBe(200);
    expect((await fetchCall(server.url, 'DELETE', '/v1/base_delete', { token, json: { namespace: 'docs', base: 'faq' } })).status).toBe(200);
    await stream.until((events) => events.length >= 6);
    stream.close();
    expect(stream.events).toEqual([
      { id: '1', event: 'change', data: { type: 'created', kind: 'namespace', object: { key: 'docs', description: null } } },
      { id: '2', event: 'change', data: { type: 'created', kind: 'base', object: { namespace: 'docs', key: 'faq', description: 'd' } } },
      { id: '3', event: 'change', data: { type: 'created', kind: 'namespace', object: { key: 'implied', description: null } } },
      { id: '4', event: 'change', data: { type: 'created', kind: 'base', object: { namespace: 'implied', key: 'bee', description: null } } },
      { id: '5', event: 'change', data: { type: 'updated', kind: 'namespace', object: { key: 'docs', description: 'about' } } },
      { id: '6', event: 'change', data: { type: 'deleted', kind: 'base', object: { namespace: 'docs', key: 'faq', description: 'd' } } },
    ]);
    // Resumed after a cursor (header or query), narrowed to a namespace.
    const resumed = await openWatch(server.url, token, '', { 'last-event-id': '3' });
    await resumed.until((events) => events.length >= 3);
    resumed.close();
    expect(ids(resumed.events)).toEqual([4, 5, 6]);
    const narrowed = await openWatch(server.url, token, '?since=0&namespace=docs');
    await narrowed.until((events) => events.length >= 4);
    narrowed.close();
    expect(ids(narrowed.events)).toEqual([1, 2, 5, 6]);
  });

  it('?initial=true sends the objects, then synced with the cursor, then live changes, nothing lost between', async () => {
    const token = await server.newToken('initial');
    await post('/base_create', { namespace: 'aaa', key: 'one' }, {}, token);
    const stream = await openWatch(server.url, token, '?initial=true');
    await stream.until((events) => events.some((event) => event.event === 'synced'));
    await post('/base_create', { namespace: 'aaa', key: 'two' }, {}, token);
    await stream.until((events) => events.length >= 4);
    stream.close();
    expect(stream.events.map((event) => [event.id, event.event, event.data])).toEqual([
      [undefined, 'change', { type: 'created', kind: 'namespace', object: { key: 'aaa', description: null } }],
      [undefined, 'change', { type: 'created', kind: 'base', object: { namespace: 'aaa', key: 'one', description: null } }],
      ['2', 'synced', {}],
      ['3', 'change', { type: 'created', kind: 'base', object: { namespace: 'aaa', key: 'two', description: null } }],
    ]);
  });

  it('sends a large ?initial=true snapshot through the watcher’s bound: a reader that reads nothing leaves no more than it unsent, and gets it all once it reads', async () => {
    const { response, served, bases } = await pausedSnapshot(server, await server.newToken('snapshot'));
    expect(served.writableLength).toBeLessThanOrEqual(WATCHER_BUFFER_BYTES);
    // Once it reads, the rest comes, then synced.
    const events: Array<{ event: string | undefined; id: string | undefined }> = [];
    const parser = createParser({ onEvent: (event) => events.push({ event: event.event, id: event.id }) });
    const synced = new Promise<void>((resolve, reject) => {
      response.setEncoding('utf8').on('data', (chunk: string) => {
        parser.feed(chunk);
        if (events.at(-1)?.event === 'synced') resolve();
      });
      response.on('end', () => reject(new Error(`the stream ended after ${events.length} events`)));
    });
    response.resume();
    await synced;
    response.destroy();
    expect(events.length).toBe(1 + bases + 1);
    expect(events.at(-1)).toEqual({ event: 'synced', id: String(1 + bases) });
  });

  it('ends a snapshot’s reader that takes nothing for the stall limit, and lets go of what it held for it', async () => {
    const stalling = await startTestServer({ org: 'stalling', watchStallMs: 1000 });
    let reader: IncomingMessage | undefined;
    try {
      const { response, served } = await pausedSnapshot(stalling, stalling.token);
      reader = response;
      // The server ends it; the reader, which reads nothing, would see it only once it read what came before.
      await expect.poll(() => served.destroyed, { timeout: 20_000 }).toBe(true);
    } finally {
      reader?.destroy();
      await stalling.close();
    }
  });

  it('ends the streams of a token once it is revoked (by another process or replica) or expires, cleanly: the reconnect is 401; another token’s stream goes on', async () => {
    const [revoked, kept] = [await server.newToken('ended'), await server.newToken('ended')];
    const expiring = await server.newToken('ended', { expiresAt: new Date(Date.now() + 5000).toISOString() });
    const streams = { revoked: await openWatch(server.url, revoked), expiring: await openWatch(server.url, expiring, '?initial=true'), kept: await openWatch(server.url, kept) };
    for (const stream of Object.values(streams)) expect(stream.status).toBe(200);
    // Revoked through a store of its own over the same database: another process (SQLite), another replica (PostgreSQL).
    const elsewhere = await server.database.open();
    try {
      const principal = await elsewhere.authenticate(hashToken(revoked));
      expect(await elsewhere.revokeToken(principal?.tokenId as string)).not.toBeNull();
    } finally {
      await elsewhere.close();
    }
    await streams.revoked.ended;
    await streams.expiring.ended;
    expect((await openWatch(server.url, revoked)).status).toBe(401);
    const expired = await openWatch(server.url, expiring);
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ message: expect.stringContaining('expired') as string });
    expect((await post('/ns_create', { key: 'still' }, {}, kept)).status).toBe(200);
    await streams.kept.until((events) => events.length === 1);
    streams.kept.close();
    expect(streams.kept.events.map((event) => event.data.object.key)).toEqual(['still']);
  });

  it('sends a heartbeat comment on a stream with no change to send', async () => {
    const beating = await startTestServer({ org: 'heartbeat', watchHeartbeatMs: 50 });
    try {
      const { port } = new URL(beating.url);
      const watching = httpRequest({ host: '127.0.0.1', port, path: '/v1/watch', headers: { authorization: `Bearer ${beating.token}` } });
      const response = await new Promise<IncomingMessage>((resolve, reject) => watching.on('response', resolve).on('error', reject).end());
      expect(response.statusCode).toBe(200);
      let text = '';
      await new Promise<void>((resolve, reject) => {
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
          if (text.includes(': keep-alive\n\n')) resolve();
        });
        response.on('end', () => reject(new Error(`the stream ended with ${JSON.stringify(text)}`)));
      });
      watching.destroy();
      expect(text).toMatch(/^: watching\n\n(: keep-alive\n\n)+$/);
    } finally {
      await beating.close();
    }
  });

  it('refuses a cursor it does not keep with 410 and the failure envelope, before any event; a malformed one with 400', async () => {
    const token = await server.newToken('gone');
    await post('/ns_create', { key: 'xxx' }, {}, token);
    const future = await openWatch(server.url, token, '?since=5');
    expect(future.status).toBe(410);
    expect(future.body).toEqual({ success: false, message: expect.stringContaining('Cursor 5') as string, help: expect.any(String) as string });
    const bad = await openWatch(server.url, token, '', { 'last-event-id': 'abc' });
    expect(bad.status).toBe(400);
    const badNamespace = await openWatch(server.url, token, '?namespace=Not%20A%20Key');
    expect(badNamespace.status).toBe(400);
    expect((await openWatch(server.url, 'kbt_wrong', '')).status).toBe(401);
  });

  it('DELETE /v1/ns_delete reaches the feed: the namespace deleted, after each of its bases with "cascade": true; ?namespace= keeps to its own', async () => {
    const token = await server.newToken('ns-delete');
    const nsDelete = (json: unknown) => fetchCall(server.url, 'DELETE', '/v1/ns_delete', { token, json });
    await post('/ns_create', { key: 'empty', description: 'Nothing' }, {}, token);
    await post('/base_create', { namespace: 'docs', key: 'faq', description: 'f' }, {}, token);
    await post('/base_create', { namespace: 'docs', key: 'guide' }, {}, token);
    await post('/base_create', { namespace: 'other', key: 'stays' }, {}, token);
    const streams = { all: await openWatch(server.url, token), docs: await openWatch(server.url, token, '?namespace=docs'), empty: await openWatch(server.url, token, '?namespace=empty') };
    expect((await nsDelete({ namespace: 'empty' })).status).toBe(200);
    expect((await nsDelete({ namespace: 'other' })).status).toBe(409);
    expect((await nsDelete({ namespace: 'docs', cascade: true })).status).toBe(200);
    expect((await post('/ns_create', { key: 'last' }, {}, token)).status).toBe(200);
    await streams.all.until((events) => events.length >= 5);
    await streams.docs.until((events) => events.length >= 3);
    await streams.empty.until((events) => events.length >= 1);
    for (const stream of Object.values(streams)) stream.close();
    const seen = (events: readonly WatchEvent[]) => events.map((event) => [event.data.type, event.data.kind, event.data.object]);
    const docs = [
      ['deleted', 'base', { namespace: 'docs', key: 'faq', description: 'f' }],
      ['deleted', 'base', { namespace: 'docs', key: 'guide', description: null }],
      ['deleted', 'namespace', { key: 'docs', description: null }],
    ];
    expect(seen(streams.all.events)).toEqual([['deleted', 'namespace', { key: 'empty', description: 'Nothing' }], ...docs, ['created', 'namespace', { key: 'last', description: null }]]);
    expect(ids(streams.all.events)).toEqual(Array.from({ length: 5 }, (_, n) => (ids(streams.all.events)[0] as number) + n));
    expect(seen(streams.docs.events)).toEqual(docs);
    expect(seen(streams.empty.events)).toEqual([['deleted', 'namespace', { key: 'empty', description: 'Nothing' }]]);
  });

  it('organizations never see each other’s changes', async () => {
    const [one, two] = [await server.newToken('org-one'), await server.newToken('org-two')];
    const streams = [await openWatch(server.url, one, '?since=0'), await openWatch(server.url, two, '?since=0')];
    await post('/ns_create', { key: 'mine' }, {}, one);
    await post('/ns_create', { key: 'theirs' }, {}, two);
    await post('/ns_create', { key: 'mine-too' }, {}, one);
    await streams[0]?.until((events) => events.length >= 2);
    await streams[1]?.until((events) => events.length >= 1);
    for (const stream of streams) stream.close();
    expect(streams[0]?.events.map((event) => [event.id, event.data.object.key])).toEqual([['1', 'mine'], ['2', 'mine-too']]);
    expect(streams[1]?.events.map((event) => [event.id, event.data.object.key])).toEqual([['1', 'theirs']]);
  });

  it('many writers against watchers that drop and resume at random: each replays to exactly the final lists, no cursor twice, none missing', async () => {
    const token = await server.newToken('churn');
    const seed = Date.now();
    const random = seeded(seed);
    const watchers = Array.from({ length: 6 }, () => new ChurningWatcher([server.url], token, random));
    await Promise.all(watchers.map((watcher) => watcher.start()));
    const statuses = await randomWrites([server.url], token, 400, 16, random);
    // Every kind of answer happened: changes, conflicts, misses, replays, refusals.
    expect([...statuses.keys()].sort(), `seed ${seed}`).toEqual(expect.arrayContaining([200, 400, 404, 409]));
    const synced = await openWatch(server.url, token, '?initial=true');
    await synced.until((events) => events.some((event) => event.event === 'synced'));
    synced.close();
    const head = Number(synced.events.find((event) => event.event === 'synced')?.id);
    await Promise.all(watchers.map((watcher) => watcher.finish(head)));
    const lists = modelOf(
      ((await fetchCall(server.url, 'GET', '/v1/ns_list', { token })).body as { data: Namespace[] }).data,
      ((await fetchCall(server.url, 'GET', '/v1/base_list_all', { token })).body as { data: Base[] }).data,
    );
    expect(replay(synced.events)).toEqual(lists);
    for (const watcher of watchers) {
      expect(ids(watcher.events), `seed ${seed}`).toEqual(Array.from({ length: head }, (_, n) => n + 1));
      expect(replay(watcher.events), `seed ${seed}`).toEqual(lists);
      expect(watcher.connections.length).toBeGreaterThan(1);
    }
  });
});

/**
 * 2,000 bases of 4 KB each (4 bytes a character) in `target`'s organization of `token`: 8 MB of snapshot, more than the
 * kernel's buffers and the bound; then a ?initial=true stream whose reader reads nothing, once the server holds some of
 * it unsent. Returns the reader's response and the server's.
 */
async function pausedSnapshot(target: TestServer, token: string): Promise<{ response: IncomingMessage; served: ServerResponse; bases: number }> {
  const description = '\u{1F600}'.repeat(1000);
  const bases = 2000;
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < bases) {
        const { status } = await fetchCall(target.url, 'POST', '/v1/base_create', { token, json: { namespace: 'big', key: `base${next++}`, description } });
        if (status !== 200) throw new Error(`base_create answered ${status}`);
      }
    }),
  );
  const responses: ServerResponse[] = [];
  const seen = (request: IncomingMessage, served: ServerResponse) => {
    if (request.url?.startsWith('/v1/watch') === true) responses.push(served);
  };
  target.app.server.on('request', seen);
  const { port } = new URL(target.url);
  const watching = httpRequest({ host: '127.0.0.1', port, path: '/v1/watch?initial=true', headers: { authorization: `Bearer ${token}` } });
  const response = await new Promise<IncomingMessage>((resolve, reject) => watching.on('response', resolve).on('error', reject).end());
  // The reader reads nothing: what the kernel does not take waits in the server's buffer for it.
  response.pause();
  await vi.waitFor(() => {
    if ((responses[0]?.writableLength ?? 0) === 0) throw new Error('the server holds nothing unsent yet');
  }, { timeout: 60_000 });
  target.app.server.off('request', seen);
  return { response, served: responses[0] as ServerResponse, bases };
}
