import type { Base, Namespace } from '../../src/api/schemas.js';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ChurningWatcher, modelOf, openWatch, randomWrites, replay, seeded, type WatchEvent } from '../helpers/watch.js';

// GET /v1/watch on two built kb serve replicas over one PostgreSQL (docs/contract.md, Live changes): the same changes
// in the same order with the same cursors on both, though their commits race (a later transaction may commit first).

const databases: TestDatabase[] = [];
const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const server of servers) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  for (const database of databases) await database.drop();
});

const ids = (events: readonly WatchEvent[]) => events.filter((event) => event.event === 'change').map((event) => Number(event.id));

describe('GET /v1/watch on two replicas', () => {
  it('writers and watchers on both, watchers dropping and resuming on either: every watcher replays to the final lists, cursors 1..N once each', async () => {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    const url = (database.storage as { url: string }).url;
    const env = isolatedEnv();
    const created = await runKb(['serve', 'token', 'create', '--org', 'replicated', '--database', url], { env });
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim().split('\n').at(-1) as string;
    const other = await runKb(['serve', 'token', 'create', '--org', 'elsewhere', '--database', url], { env });
    const otherToken = other.stdout.trim().split('\n').at(-1) as string;
    const [a, b] = await Promise.all([startServe(['--database', url], env), startServe(['--database', url], env)]);
    servers.push(a, b);
    const urls = [a.url, b.url];
    const seed = Date.now();
    const random = seeded(seed);
    const watchers = Array.from({ length: 6 }, () => new ChurningWatcher(urls, token, random));
    await Promise.all(watchers.map((watcher) => watcher.start()));
    const outsider = await openWatch(b.url, otherToken, '?since=0');
    // Two organizations write at once on both replicas, so that their transactions' commits interleave.
    const [statuses] = await Promise.all([randomWrites(urls, token, 400, 16, random), randomWrites(urls, otherToken, 100, 4, seeded(seed + 1))]);
    expect([...statuses.keys()], `seed ${seed}`).toEqual(expect.arrayContaining([200, 404, 409]));
    const synced = await openWatch(a.url, token, '?initial=true');
    await synced.until((events) => events.some((event) => event.event === 'synced'));
    synced.close();
    const head = Number(synced.events.find((event) => event.event === 'synced')?.id);
    await Promise.all(watchers.map((watcher) => watcher.finish(head)));
    const list = async <T>(path: string) => ((await (await fetch(`${b.url}/v1${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: T }).data;
    const lists = modelOf(await list<Namespace[]>('/ns_list'), await list<Base[]>('/base_list_all'));
    expect(replay(synced.events)).toEqual(lists);
    const expected = Array.from({ length: head }, (_, n) => n + 1);
    for (const watcher of watchers) {
      expect(ids(watcher.events), `seed ${seed}`).toEqual(expected);
      expect(replay(watcher.events), `seed ${seed}`).toEqual(lists);
    }
    // Both replicas give the same cursor to the same change.
    const fromA = await openWatch(a.url, token, '?since=0');
    const fromB = await openWatch(b.url, token, '?since=0');
    await Promise.all([fromA.until((events) => events.length === head), fromB.until((events) => events.length === head)]);
    fromA.close();
    fromB.close();
    expect(fromA.events).toEqual(fromB.events);
    expect(fromA.events).toEqual(watchers[0]?.events);
    // The other organization saw its own changes, all of them, and nothing of the first one's.
    const theirHead = await openWatch(a.url, otherToken, '?initial=true');
    await theirHead.until((events) => events.some((event) => event.event === 'synced'));
    theirHead.close();
    const theirs = Number(theirHead.events.find((event) => event.event === 'synced')?.id);
    await outsider.until((events) => events.length === theirs);
    outsider.close();
    expect(ids(outsider.events)).toEqual(Array.from({ length: theirs }, (_, n) => n + 1));
    expect(replay(outsider.events)).toEqual(replay(theirHead.events));
  }, 180_000);
});
