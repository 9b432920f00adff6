import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { acknowledged, check, type Op } from '../helpers/history.js';
import { onConnectionsOfTheirOwn, pipelined, type WireRequest } from '../helpers/wire.js';

/** Two built `kb serve` processes, each on its own port, over one PostgreSQL database. */
interface Replicas {
  database: TestDatabase;
  url: string;
  env: NodeJS.ProcessEnv;
  a: ServeProcess;
  b: ServeProcess;
  token: string;
  stop(): Promise<void>;
}

async function startReplicas(org: string): Promise<Replicas> {
  const database = await createTestDatabase('postgres');
  const url = (database.storage as { url: string }).url;
  const env = isolatedEnv();
  const created = await runKb(['serve', 'token', 'create', '--org', org, '--database', url], { env });
  expect(created.code, created.stderr).toBe(0);
  const [a, b] = await Promise.all([startServe(['--database', url], env), startServe(['--database', url], env)]);
  return {
    database, url, env, a, b,
    token: created.stdout.trim(),
    async stop() {
      for (const replica of [a, b]) {
        replica.child.kill('SIGKILL');
        await replica.exited;
      }
      await database.drop();
    },
  };
}

interface Reply { status: number; headers: Headers; text: string; body: { success: boolean; data?: unknown; message?: string } }

async function send(base: string, token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(`${base}/v1${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as Reply['body'] };
}

describe('two kb serve replicas over one PostgreSQL behave as one server', () => {
  let replicas: Replicas;
  let a: string;
  let b: string;
  let token: string;
  /** Spreads requests over both replicas: even indexes to one, odd to the other. */
  const either = (i: number) => (i % 2 === 0 ? a : b);

  beforeAll(async () => {
    replicas = await startReplicas('replicas');
    ({ token } = replicas);
    a = replicas.a.url;
    b = replicas.b.url;
  });
  afterAll(async () => {
    await replicas?.stop();
  });

  it('listen on two ports, and name the database with its password masked', () => {
    expect(a).not.toBe(b);
    const password = new URL(replicas.url).password;
    for (const replica of [replicas.a, replicas.b]) {
      expect(replica.stderr()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(database: postgres:\/\/kb:\*\*\*@127\.0\.0\.1:\d+\/kb_test_\w+\)/);
      expect(replica.stderr() + replica.stdout()).not.toContain(password);
    }
  });

  it('give exactly one 200 and 39 409s to 40 simultaneous creates of one namespace key spread across both', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send(either(i), token, 'POST', '/ns_create', { key: 'only-once', description: `r${i}` })),
    );
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(39);
    for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body).toEqual({ success: false, message: 'Namespace only-once already exists' });
    const winner = replies.find((reply) => reply.status === 200)?.body.data;
    for (const replica of [a, b]) {
      const listed = (await send(replica, token, 'GET', '/ns_list')).body.data as Array<{ key: string }>;
      expect(listed.filter((ns) => ns.key === 'only-once')).toEqual([winner]);
    }
  });

  it('give exactly one 200 to 40 simultaneous creates of one base key in a new namespace, and create the namespace once', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => send(either(i), token, 'POST', '/base_create', { namespace: 'race', key: 'one' }).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(39);
    const listed = (await send(b, token, 'GET', '/ns_list')).body.data as Array<{ key: string }>;
    expect(listed.filter((ns) => ns.key === 'race')).toHaveLength(1);
  });

  it('read at once through one replica what was written through the other', async () => {
    for (let i = 0; i < 20; i++) {
      const created = await send(either(i), token, 'POST', '/base_create', { namespace: 'seen', key: `k-${i}`, description: `d${i}` });
      expect(created.status).toBe(200);
      const listed = await send(either(i + 1), token, 'GET', '/base_list?namespace=seen');
      expect((listed.body.data as Array<{ key: string }>).map((base) => base.key)).toContain(`k-${i}`);
      const updated = await send(either(i + 1), token, 'POST', '/base_update', { namespace: 'seen', base: `k-${i}`, data: { description: `u${i}` } });
      expect(updated.body.data).toEqual({ namespace: 'seen', key: `k-${i}`, description: `u${i}` });
      const deleted = await send(either(i), token, 'DELETE', '/base_delete', { namespace: 'seen', base: `k-${i}` });
      expect(deleted.body.data).toEqual({ namespace: 'seen', key: `k-${i}`, description: `u${i}` });
    }
    expect((await send(a, token, 'GET', '/base_list?namespace=seen')).body.data).toEqual([]);
  });

  it('never serve through one replica a kept list older than a write the other acknowledged', async () => {
    const keys = (reply: Reply) => (reply.body.data as Array<{ key: string }>).map((ns) => ns.key);
    for (let i = 0; i < 60; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      // Read twice first, so that the reader keeps its answer.
      await send(reader, token, 'GET', '/ns_list');
      expect(keys(await send(reader, token, 'GET', '/ns_list'))).not.toContain(`fresh-${i}`);
      const created = await send(writer, token, 'POST', '/ns_create', { key: `fresh-${i}`, description: null });
      expect(created.status).toBe(200);
      expect(keys(await send(reader, token, 'GET', '/ns_list')), `write ${i}`).toContain(`fresh-${i}`);
      const updated = await send(writer, token, 'POST', '/ns_update', { namespace: `fresh-${i}`, data: { description: `v${i}` } });
      expect(updated.status).toBe(200);
      const listed = (await send(reader, token, 'GET', '/ns_list')).body.data as Array<{ key: string; description: string | null }>;
      expect(listed.find((ns) => ns.key === `fresh-${i}`)?.description, `update ${i}`).toBe(`v${i}`);
    }
  });

  it('refuse through both a token revoked with kb serve token revoke --database', async () => {
    const created = await runKb(['serve', 'token', 'create', '--org', 'replicas', '--json', '--database', replicas.url], { env: replicas.env });
    const { token: doomed } = JSON.parse(created.stdout) as { token: string };
    for (const replica of [a, b]) {
      expect((await send(replica, doomed, 'GET', '/auth')).status).toBe(200);
      // Writes of data since leave the token known (no lookup), until a change of tokens.
      expect((await send(replica, doomed, 'POST', '/base_create', { namespace: 'doomed', description: null })).status).toBe(200);
      expect((await send(replica, doomed, 'GET', '/auth')).status).toBe(200);
    }
    const listed = await runKb(['serve', 'token', 'list', '--json', '--database', replicas.url], { env: replicas.env });
    expect(listed.code, listed.stderr).toBe(0);
    const tokens = JSON.parse(listed.stdout) as Array<{ id: string; createdAt: string; revokedAt: string | null }>;
    expect(tokens).toHaveLength(2);
    const newest = tokens.at(-1) as { id: string };
    const revoked = await runKb(['serve', 'token', 'revoke', newest.id, '--database', replicas.url], { env: replicas.env });
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const replica of [a, b]) {
      const refused = await send(replica, doomed, 'GET', '/auth');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect((await send(replica, doomed, 'POST', '/base_create', { namespace: 'doomed', description: null })).status).toBe(401);
      expect((await send(replica, token, 'GET', '/auth')).status).toBe(200);
    }
  });

  it('replay an Idempotency-Key through the other replica, and refuse it with another body', async () => {
    const key = { 'idempotency-key': 'across-replicas' };
    const first = await send(a, token, 'POST', '/base_create', { namespace: 'idem', description: 'generated key' }, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send(b, token, 'POST', '/base_create', { description: 'generated key', namespace: 'idem' }, key);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await send(b, token, 'POST', '/base_create', { namespace: 'idem', description: 'another' }, key);
    expect(other.status).toBe(422);
    expect((await send(a, token, 'GET', '/base_list?namespace=idem')).body.data).toHaveLength(1);
  });

  it('answer concurrent base creates each with its own outcome under its own Idempotency-Key, and replay each through the other', async () => {
    expect((await send(a, token, 'POST', '/base_create', { namespace: 'mixed', key: 'taken' })).status).toBe(200);
    // Most keys are new; every tenth is taken already; two requests race for 'twice'.
    const keyOf = (i: number) => (i % 10 === 5 ? 'taken' : i === 20 || i === 21 ? 'twice' : `mixed-${i}`);
    const request = (i: number, replica: string) =>
      send(replica, token, 'POST', '/base_create', { namespace: 'mixed', key: keyOf(i), description: `request ${i}` }, { 'idempotency-key': `mixed-request-${i}` });
    const first = await Promise.all(Array.from({ length: 40 }, (_, i) => request(i, either(i))));
    first.forEach((reply, i) => {
      if (keyOf(i) === 'taken') expect({ i, status: reply.status, message: reply.body.message }).toEqual({ i, status: 409, message: 'Base taken already exists in namespace mixed' });
      else if (keyOf(i) !== 'twice') expect({ i, status: reply.status, data: reply.body.data }).toEqual({ i, status: 200, data: { namespace: 'mixed', key: keyOf(i), description: `request ${i}` } });
    });
    const raced = [first[20], first[21]].map((reply) => reply?.status).sort();
    expect(raced).toEqual([200, 409]);
    const winner = first[20]?.status === 200 ? 20 : 21;
    expect(first[winner]?.body.data).toEqual({ namespace: 'mixed', key: 'twice', description: `request ${winner}` });

    // Each key replays its own first reply, through the other replica.
    const again = await Promise.all(Array.from({ length: 40 }, (_, i) => request(i, either(i + 1))));
    again.forEach((reply, i) => {
      expect({ i, status: reply.status, text: reply.text, replayed: reply.headers.get('idempotent-replayed') }).toEqual({
        i,
        status: first[i]?.status,
        text: first[i]?.text,
        replayed: 'true',
      });
    });
    const listed = (await send(b, token, 'GET', '/base_list?namespace=mixed')).body.data as Array<{ key: string; description: string | null }>;
    const expected = [
      { key: 'taken', description: null },
      { key: 'twice', description: `request ${winner}` },
      ...Array.from({ length: 40 }, (_, i) => i).filter((i) => !['taken', 'twice'].includes(keyOf(i))).map((i) => ({ key: `mixed-${i}`, description: `request ${i}` })),
    ].sort((x, y) => (x.key < y.key ? -1 : 1));
    expect(listed.map(({ key, description }) => ({ key, description }))).toEqual(expected);
  });

  it('run a write once when its Idempotency-Key arrives at both replicas at once', async () => {
    const key = { 'idempotency-key': 'at-once' };
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(either(i), token, 'POST', '/ns_create', { description: 'once' }, key)),
    );
    const ran = replies.filter((reply) => reply.status === 200 && reply.headers.get('idempotent-replayed') === null);
    expect(ran).toHaveLength(1);
    // Every other copy waited for the one that ran (on its replica or the other) and got its reply: never a 409.
    for (const reply of replies) expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: ran[0]?.text });
    const created = (ran[0]?.body.data as { key: string }).key;
    const listed = (await send(b, token, 'GET', '/ns_list')).body.data as Array<{ key: string; description: string | null }>;
    expect(listed.filter((ns) => ns.description === 'once')).toEqual([{ key: created, description: 'once' }]);
  });
});

describe('two kb serve replicas replay a finished request to every repeat', () => {
  let replicas: Replicas;
  beforeAll(async () => {
    replicas = await startReplicas('repeats');
  });
  afterAll(async () => {
    await replicas?.stop();
  });

  for (const round of [1, 2, 3]) {
    it(`answer 10 repeats at once through both, and 8 pipelined on each, with the first reply (round ${round})`, async () => {
      const { a, b } = replicas;
      const request: WireRequest = {
        method: 'POST',
        path: '/v1/ns_create',
        headers: { authorization: `Bearer ${replicas.token}`, 'content-type': 'application/json', 'idempotency-key': `finished-${round}` },
        body: JSON.stringify({ key: `finished-${round}`, description: 'first' }),
      };
      const [first] = await onConnectionsOfTheirOwn(a.url, [request]);
      expect(first?.status).toBe(200);
      const repeats = (
        await Promise.all([
          onConnectionsOfTheirOwn(a.url, Array.from({ length: 5 }, () => request)),
          onConnectionsOfTheirOwn(b.url, Array.from({ length: 5 }, () => request)),
          pipelined(a.url, Array.from({ length: 8 }, () => request)),
          pipelined(b.url, Array.from({ length: 8 }, () => request)),
        ])
      ).flat();
      expect(repeats.map((reply) => [reply.status, reply.text, reply.headers['idempotent-replayed']])).toEqual(
        repeats.map(() => [200, first?.text, 'true']),
      );
    });
  }
});

describe('two kb serve replicas share the failed-authentication limit', () => {
  let replicas: Replicas;
  beforeAll(async () => {
    replicas = await startReplicas('limits');
  });
  afterAll(async () => {
    await replicas?.stop();
  });

  it('answer 429 on either once 20 failures came from one address through both, and still serve a valid token', async () => {
    const urls = [replicas.a.url, replicas.b.url];
    const statuses: number[] = [];
    for (let i = 0; i < 24; i++) statuses.push((await send(urls[i % 2] as string, `kbt_wrong${i}`, 'GET', '/ns_list')).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(4).fill(429));
    for (const url of urls) {
      const limited = await send(url, undefined, 'GET', '/ns_list');
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await send(url, replicas.token, 'GET', '/ns_list')).status).toBe(200);
    }
  });
});

describe('a replica killed under load', () => {
  let replicas: Replicas;
  beforeAll(async () => {
    replicas = await startReplicas('crash');
  });
  afterAll(async () => {
    await replicas?.stop();
  });

  it('loses no acknowledged write (kill -9 mid-load), and the other replica keeps serving', async () => {
    const { a, b, token } = replicas;
    const history: Op[] = [];
    let killed = false;
    let stop = false;
    let ackedAfterKill = 0;
    const attempt = async (op: Op, method: string, path: string, body: unknown) => {
      history.push(op);
      const replica = !killed && Math.random() < 0.5 ? a.url : b.url;
      op.acked = await acknowledged(replica, token, method, path, body);
      if (op.acked && killed) ackedAfterKill++;
    };
    const writers = Array.from({ length: 16 }, async (_, writer) => {
      const mine: string[] = [];
      for (let n = 0; !stop; n++) {
        const roll = Math.random();
        const target = mine[Math.floor(Math.random() * mine.length)];
        if (roll < 0.6 || target === undefined) {
          const op: Op = { kind: 'create', key: `w${writer}-n${n}`, acked: false };
          await attempt(op, 'POST', '/base_create', { namespace: 'crash', key: op.key });
          if (op.acked) mine.push(op.key);
        } else if (roll < 0.85) {
          const op: Op = { kind: 'update', key: target, value: `v${n}`, acked: false };
          await attempt(op, 'POST', '/base_update', { namespace: 'crash', base: target, data: { description: op.value } });
        } else {
          mine.splice(mine.indexOf(target), 1);
          await attempt({ kind: 'delete', key: target, acked: false }, 'DELETE', '/base_delete', { namespace: 'crash', base: target });
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    a.child.kill('SIGKILL');
    killed = true;
    expect((await a.exited).signal).toBe('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 400));
    stop = true;
    await Promise.all(writers);

    const listed = await send(b.url, token, 'GET', '/base_list?namespace=crash');
    expect(listed.status).toBe(200);
    const stored = new Map((listed.body.data as Array<{ key: string; description: string | null }>).map((base) => [base.key, base.description]));
    const acked = history.filter((op) => op.acked);
    expect(acked.filter((op) => op.kind === 'create').length).toBeGreaterThan(20);
    expect(ackedAfterKill).toBeGreaterThan(0);
    expect(check(history, stored)).toEqual([]);
    expect((await send(b.url, undefined, 'GET', '/health')).status).toBe(200);
    console.info(
      `replica crash test: ${history.length} operations over two replicas, ${acked.length} acknowledged ` +
        `(${ackedAfterKill} by the survivor after the kill -9 of the other), all present as acknowledged`,
    );

    // The survivor still stops cleanly.
    b.child.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });
});
