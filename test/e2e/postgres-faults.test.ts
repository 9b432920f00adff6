import { describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { ownCluster, pgQuery } from '../helpers/database.js';

/**
 * Faults of PostgreSQL itself, against built `kb serve --database` processes. This file stops and starts its own
 * PostgreSQL (the project's shared one serves the other files), as `pg_ctl stop -m fast` would.
 */

const { cluster, freshDatabase } = ownCluster('kb_faults');

interface Replicas {
  url: string;
  token: string;
  servers: ServeProcess[];
  stop(): Promise<void>;
}

async function startReplicas(count: number): Promise<Replicas> {
  const url = await freshDatabase();
  const env = isolatedEnv();
  const created = await runKb(['serve', 'token', 'create', '--org', 'faults', '--database', url], { env });
  expect(created.code, created.stderr).toBe(0);
  const servers = await Promise.all(Array.from({ length: count }, () => startServe(['--database', url], env)));
  return {
    url,
    token: created.stdout.trim(),
    servers,
    async stop() {
      for (const server of servers) {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
        await server.exited;
      }
    },
  };
}

/** What a write got: its status, Retry-After and envelope; or the network error, when no HTTP reply came at all. */
interface Outcome {
  key: string;
  keyed: boolean;
  status?: number;
  retryAfter?: string | null;
  body?: { success?: boolean; message?: string };
  error?: string;
}

/** Longer than kb serve's request timeout (10 s): a write still unanswered by then hangs. */
const HANG_MS = 20_000;

async function create(server: string, token: string, key: string, keyed: boolean): Promise<Outcome> {
  try {
    const response = await fetch(`${server}/v1/ns_create`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(keyed ? { 'idempotency-key': `idem-${key}` } : {}),
      },
      body: JSON.stringify({ key, description: keyed ? 'keyed' : 'plain' }),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const body = (await response.json()) as Outcome['body'];
    return { key, keyed, status: response.status, retryAfter: response.headers.get('retry-after'), body };
  } catch (error) {
    return { key, keyed, error: String(error) };
  }
}

/**
 * Writers that each send one create after another (a new key each, every other one under an Idempotency-Key, as the
 * CLI sends them), spread over the replicas, until stopped.
 */
function load(replicas: Replicas, writers: number) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const running = Array.from({ length: writers }, async (_, writer) => {
    for (let n = 0; !stopped; n++) {
      const server = replicas.servers[(writer + n) % replicas.servers.length] as ServeProcess;
      outcomes.push(await create(server.url, replicas.token, `w${writer}-${n}`, n % 2 === 0));
    }
  });
  return {
    outcomes,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** Every acknowledged create is in the database; nothing but 200 and 503 was answered, and every reply came. */
async function checkOutcomes(replicas: Replicas, outcomes: Outcome[]): Promise<void> {
  expect(outcomes.filter((outcome) => outcome.error !== undefined)).toEqual([]);
  expect(new Set(outcomes.map((outcome) => outcome.status))).toEqual(new Set([200, 503]));
  for (const refused of outcomes.filter((outcome) => outcome.status === 503)) {
    expect(refused.body?.success).toBe(false);
    expect(refused.body?.message).toMatch(/\S/);
    expect(refused.retryAfter).toMatch(/^\d+$/);
  }
  const stored = new Set((await pgQuery(replicas.url, 'SELECT key FROM namespaces')).rows.map((row: { key: string }) => row.key));
  const acknowledged = outcomes.filter((outcome) => outcome.status === 200);
  expect(acknowledged.filter((outcome) => outcome.keyed).length).toBeGreaterThan(0);
  expect(acknowledged.filter((outcome) => !outcome.keyed).length).toBeGreaterThan(0);
  expect(acknowledged.filter((outcome) => !stored.has(outcome.key)).map((outcome) => outcome.key)).toEqual([]);
}

/** Waits until every replica acknowledges a write again. */
async function recovered(replicas: Replicas, label: string): Promise<void> {
  for (const [i, server] of replicas.servers.entries()) {
    let n = 0;
    await expect
      .poll(async () => (await create(server.url, replicas.token, `${label}-${i}-${n++}`, false)).status, { timeout: 30_000, interval: 200 })
      .toBe(200);
  }
}

describe('kb serve replicas when PostgreSQL stops and comes back', () => {
  it('stay up, answer 503 with Retry-After meanwhile, recover by themselves, and keep every write answered 200', async () => {
    const replicas = await startReplicas(2);
    try {
      const running = load(replicas, 12);
      await expect.poll(() => running.outcomes.filter((outcome) => outcome.status === 200).length, { timeout: 10_000 }).toBeGreaterThan(50);
      await cluster().stop();
      const stoppedAt = Date.now();
      const atStop = running.outcomes.length;
      // Writes sent while the database is down: each answered, with 503.
      await expect
        .poll(() => running.outcomes.slice(atStop).filter((outcome) => outcome.status === 503).length, { timeout: 15_000 })
        .toBeGreaterThan(20);
      for (const server of replicas.servers) {
        const health = await fetch(`${server.url}/v1/health`);
        expect(health.status).toBe(200);
        const down = await create(server.url, replicas.token, `while-down-${server.url.split(':').at(-1)}`, true);
        expect(down.status).toBe(503);
      }
      // Down for a few seconds, under load all along.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 3000 - (Date.now() - stoppedAt))));
      await cluster().start();
      await recovered(replicas, 'after-restart');
      const atRestart = running.outcomes.length;
      await expect.poll(() => running.outcomes.slice(atRestart).filter((outcome) => outcome.status === 200).length, { timeout: 10_000 }).toBeGreaterThan(50);
      await running.stop();

      for (const server of replicas.servers) expect(server.child.exitCode, server.stderr()).toBeNull();
      await checkOutcomes(replicas, running.outcomes);
      // What was written before the stop, and after it, is read through either replica.
      for (const server of replicas.servers) {
        const listed = await fetch(`${server.url}/v1/ns_list`, { headers: { authorization: `Bearer ${replicas.token}` } });
        const keys = new Set(((await listed.json()) as { data: Array<{ key: string }> }).data.map((ns) => ns.key));
        for (const outcome of running.outcomes.filter((o) => o.status === 200)) expect(keys.has(outcome.key)).toBe(true);
      }
    } finally {
      await replicas.stop();
    }
  }, 120_000);
});

describe('kb serve replicas whose connections are cut', () => {
  it('never die, whichever connection breaks (pooled, in a transaction, LISTENing), and keep every write answered 200', async () => {
    const replicas = await startReplicas(2);
    try {
      const running = load(replicas, 12);
      const cut = async () => {
        const { rows } = await pgQuery(
          replicas.url,
          `SELECT application_name, pg_terminate_backend(pid) AS ended FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'kb serve%'`,
        );
        return rows as Array<{ application_name: string; ended: boolean }>;
      };
      const ended: Array<{ application_name: string; ended: boolean }> = [];
      for (let round = 0; round < 8; round++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        ended.push(...(await cut()));
      }
      // Both kinds of connection were cut, more than once each: the pool's and the LISTEN ones.
      expect(ended.filter((row) => row.ended && row.application_name === 'kb serve').length).toBeGreaterThan(4);
      expect(ended.filter((row) => row.ended && row.application_name === 'kb serve (listen)').length).toBeGreaterThan(4);
      await recovered(replicas, 'after-cuts');
      await running.stop();
      for (const server of replicas.servers) expect(server.child.exitCode, server.stderr()).toBeNull();
      await checkOutcomes(replicas, running.outcomes);
    } finally {
      await replicas.stop();
    }
  }, 120_000);
});

describe('a kb serve replica killed with SIGKILL in the middle of group commits', () => {
  it('loses none of the writes it acknowledged, keyed or not, and the other replica keeps serving', async () => {
    const replicas = await startReplicas(2);
    try {
      const [victim, survivor] = replicas.servers as [ServeProcess, ServeProcess];
      const running = load(replicas, 16);
      await expect.poll(() => running.outcomes.filter((outcome) => outcome.status === 200).length, { timeout: 10_000 }).toBeGreaterThan(200);
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      const atKill = running.outcomes.length;
      await expect
        .poll(() => running.outcomes.slice(atKill).filter((outcome) => outcome.status === 200).length, { timeout: 10_000 })
        .toBeGreaterThan(100);
      await running.stop();

      expect(survivor.child.exitCode).toBeNull();
      // Writes sent to the killed replica fail at the network; every write either replica acknowledged is kept.
      const answered = running.outcomes.filter((outcome) => outcome.error === undefined);
      expect(new Set(answered.map((outcome) => outcome.status))).toEqual(new Set([200]));
      const stored = new Set((await pgQuery(replicas.url, 'SELECT key FROM namespaces')).rows.map((row: { key: string }) => row.key));
      const acknowledged = answered.filter((outcome) => outcome.status === 200);
      expect(acknowledged.filter((outcome) => outcome.keyed).length).toBeGreaterThan(50);
      expect(acknowledged.filter((outcome) => !stored.has(outcome.key)).map((outcome) => outcome.key)).toEqual([]);
      // A keyed write is replayed through the survivor from what the killed one committed.
      const replayable = acknowledged.find((outcome) => outcome.keyed) as Outcome;
      const again = await fetch(`${survivor.url}/v1/ns_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${replicas.token}`, 'content-type': 'application/json', 'idempotency-key': `idem-${replayable.key}` },
        body: JSON.stringify({ key: replayable.key, description: 'keyed' }),
      });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await replicas.stop();
    }
  }, 120_000);
});

describe('replicas starting together on an empty database', () => {
  it('migrate it once: every table, trigger and kb_schema row comes from one transaction, and each replica serves', async () => {
    const url = await freshDatabase();
    const env = isolatedEnv();
    const servers = await Promise.all(Array.from({ length: 4 }, () => startServe(['--database', url], env)));
    try {
      const { rows } = await pgQuery(
        url,
        `SELECT count(DISTINCT xmin::text)::int AS transactions, count(*)::int AS objects FROM (
           SELECT xmin FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
           UNION ALL SELECT xmin FROM pg_trigger WHERE NOT tgisinternal
           UNION ALL SELECT xmin FROM kb_schema) created`,
      );
      expect(rows[0]).toEqual({ transactions: 1, objects: 9 + 11 + 1 });
      const tokens = await pgQuery(url, 'SELECT count(*)::int AS n FROM tokens');
      expect(tokens.rows[0].n).toBe(1);
      for (const server of servers) expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    } finally {
      for (const server of servers) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
  });
});

describe('kb serve --admin-port when PostgreSQL stops and comes back', () => {
  it('answers /ready 503 (and /live 200) while the database is down, and 200 again once it is back, without a restart', async () => {
    const url = await freshDatabase();
    const server = await startServe(['--database', url, '--admin-port', '0'], isolatedEnv());
    try {
      const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
      const probe = async (path: string) => {
        const response = await fetch(`${admin}${path}`);
        return { status: response.status, text: await response.text() };
      };
      expect(await probe('/ready')).toEqual({ status: 200, text: 'ready\n' });
      expect((await probe('/metrics')).text).toMatch(/^kb_pg_listen_up 1$/m);
      await cluster().stop();
      await expect.poll(async () => (await probe('/ready')).status, { timeout: 15_000 }).toBe(503);
      expect((await probe('/ready')).text).toMatch(/^not ready: /);
      expect((await probe('/live')).status).toBe(200);
      expect((await probe('/metrics')).text).toMatch(/^kb_pg_listen_up 0$/m);
      await cluster().start();
      await expect.poll(async () => (await probe('/ready')).status, { timeout: 30_000, interval: 200 }).toBe(200);
      expect((await probe('/metrics')).text).toMatch(/^kb_pg_listen_up 1$/m);
      expect(server.child.exitCode, server.stderr()).toBeNull();
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  }, 90_000);

  it('answers /ready 503 while only its LISTEN connection is down (cut, and kept from reconnecting), and 200 once it listens again', async () => {
    const url = await freshDatabase();
    const name = new URL(url).pathname.slice(1);
    const server = await startServe(['--database', url, '--admin-port', '0'], isolatedEnv());
    try {
      const admin = /admin port: (http:\/\/\S+)\/live/.exec(server.stderr())?.[1] as string;
      const probe = async (path: string) => {
        const response = await fetch(`${admin}${path}`);
        return { status: response.status, text: await response.text() };
      };
      expect((await probe('/ready')).status).toBe(200);
      await pgQuery(cluster().url, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      const cut = await pgQuery(
        cluster().url,
        `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = $1 AND application_name = 'kb serve (listen)'`,
        [name],
      );
      expect(cut.rows).toEqual([{ cut: true }]);
      await expect.poll(async () => (await probe('/ready')).text, { timeout: 15_000 }).toBe('not ready: the LISTEN connection to the database is down\n');
      expect((await probe('/ready')).status).toBe(503);
      expect((await probe('/metrics')).text).toMatch(/^kb_pg_listen_up 0$/m);
      await pgQuery(cluster().url, `ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await expect.poll(async () => (await probe('/ready')).status, { timeout: 30_000, interval: 200 }).toBe(200);
      expect((await probe('/metrics')).text).toMatch(/^kb_pg_listen_up 1$/m);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  }, 90_000);
});
