import { afterAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { openWatch, proveChurn } from '../helpers/watch.js';

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
    const { head, events } = await proveChurn(expect, [a.url, b.url], token, otherToken);
    // Both replicas give the same cursor to the same change.
    const fromA = await openWatch(a.url, token, '?since=0');
    const fromB = await openWatch(b.url, token, '?since=0');
    await Promise.all([fromA.until((seen) => seen.length === head), fromB.until((seen) => seen.length === head)]);
    fromA.close();
    fromB.close();
    expect(fromA.events).toEqual(fromB.events);
    expect(fromA.events).toEqual(events);
  }, 180_000);
});
