import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../helpers/server.js';

const running = killedAfterEach();

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const server = await startServe(args, env);
  running.push(server);
  return server;
}

function request(url: string, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('two kb serve processes on one data dir', () => {
  it('work together safely: both serve, one key is created once, each sees the other\'s writes', async () => {
    const env = isolatedEnv();
    const token = (await runKb(['serve', 'token', 'create', '--org', 'pair'], { env })).stdout.trim();
    const [a, b] = await Promise.all([serve([], env), serve([], env)]);
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => request(i % 2 ? a.url : b.url, token, 'POST', '/base_create', { namespace: 'pair', key: 'once' }).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(39);
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => request(i % 2 ? a.url : b.url, token, "POST", "/base_create", { namespace: "pair", key: `key-${i}` }).then(async (r) => `${r.status} ${await r.text()}`)));
    expect(created.filter((line) => !line.startsWith("200"))).toEqual([]);
    for (const server of [a, b]) {
      const listed = (await (await request(server.url, token, 'GET', '/base_list?namespace=pair')).json()) as { data: unknown[] };
      expect(listed.data).toHaveLength(21);
    }
  });
});

/** Mounts a tmpfs of `size` on dir: a real filesystem that really fills. The tests run as root here and in CI. */
function mountTmpfs(dir: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
}

/** Sends one create as the CLI does (with an Idempotency-Key) or without one; resolves the status and the body. */
async function create(url: string, token: string, key: string, keyed: boolean): Promise<{ status: number; body: { success?: boolean; message?: string } }> {
  const response = await fetch(`${url}/v1/base_create`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(keyed ? { 'idempotency-key': `key-${key}` } : {}),
    },
    body: JSON.stringify({ namespace: 'full', key, description: 'x'.repeat(1000) }),
  });
  return { status: response.status, body: (await response.json()) as { success?: boolean; message?: string } };
}

const IS_ROOT = process.getuid?.() === 0;

describe.skipIf(!IS_ROOT)('a full disk (needs root to mount a tmpfs; CI runs as root)', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`keeps every acknowledged write of 16 writers (keyed and not) through a full disk and a ${signal} while full`, async () => {
      const dir = tempDir('kb-full-');
      mountTmpfs(dir, '8m');
      try {
        const env = isolatedEnv({ KB_DATA_DIR: join(dir, 'data') });
        mkdirSync(join(dir, 'data'));
        const token = (await runKb(['serve', 'token', 'create', '--org', 'full'], { env })).stdout.trim();
        // Ballast to free later, so the disk can be emptied without touching the data dir. A start copies the -wal into
        // kb.db, which may grow by as much as the log holds: half the disk freed is room for any log the other half held.
        writeFileSync(join(dir, 'ballast'), Buffer.alloc(4 * 1024 * 1024));
        const server = await serve([], env);

        const acked: string[] = [];
        const refusals: Array<{ status: number; body: { success?: boolean; message?: string } }> = [];
        let sent = 0;
        const writer = async (lane: number) => {
          // Until this writer has been refused five times in a row (the disk is full), or has sent 3,000.
          for (let refusedInARow = 0, n = 0; refusedInARow < 5 && n < 3000; n++) {
            const key = `w${lane}-${n}`;
            const reply = await create(server.url, token, key, lane % 2 === 0);
            sent++;
            if (reply.status === 200) {
              acked.push(key);
              refusedInARow = 0;
            } else {
              refusals.push(reply);
              refusedInARow++;
            }
          }
        };
        await Promise.all(Array.from({ length: 16 }, (_, lane) => writer(lane)));

        expect(refusals.length).toBeGreaterThan(0);
        expect(acked.length).toBeGreaterThan(100);
        for (const refusal of refusals) {
          expect([503, 507]).toContain(refusal.status);
          expect(refusal.body.success).toBe(false);
          expect(refusal.body.message).toMatch(/disk|busy|nothing was written/i);
        }
        // Reads keep working on the full disk.
        expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
        const listed = await request(server.url, token, 'GET', '/base_list?namespace=full');
        expect(listed.status).toBe(200);

        server.child.kill(signal);
        await server.exited;
        running.splice(0);
        rmSync(join(dir, 'ballast'));

        const restarted = await serve([], env);
        const after = (await (await request(restarted.url, token, 'GET', '/base_list?namespace=full')).json()) as { data: Array<{ key: string }> };
        const kept = new Set(after.data.map((base) => base.key));
        expect(acked.filter((key) => !kept.has(key))).toEqual([]);
        // And it writes again, keyed and not.
        expect((await create(restarted.url, token, 'after-keyed', true)).status).toBe(200);
        expect((await create(restarted.url, token, 'after-plain', false)).status).toBe(200);
        console.info(`full disk, ${signal}: ${sent} sent, ${acked.length} acknowledged and all kept, ${refusals.length} refused with 503/507`);
      } finally {
        for (const server of running.splice(0)) {
          server.child.kill('SIGKILL');
          await server.exited;
        }
        execFileSync('umount', [dir], { stdio: 'pipe' });
      }
    }, 180_000);
  }

  it('fails writes with 507, keeps serving reads, and writes again once space is freed, without a restart', async () => {
    const dir = tempDir('kb-full-');
    mountTmpfs(dir, '3m');
    try {
      const env = isolatedEnv({ KB_DATA_DIR: join(dir, 'data') });
      mkdirSync(join(dir, 'data'));
      const token = (await runKb(['serve', 'token', 'create', '--org', 'full'], { env })).stdout.trim();
      const server = await serve([], env);
      writeFileSync(join(dir, 'ballast'), Buffer.alloc(512 * 1024));
      let status = 200;
      for (let n = 0; status === 200 && n < 20_000; n++) status = (await create(server.url, token, `fill-${n}`, n % 2 === 0)).status;
      expect(status).toBe(507);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
      rmSync(join(dir, 'ballast'));
      expect((await create(server.url, token, 'after-keyed', true)).status).toBe(200);
      expect((await create(server.url, token, 'after-plain', false)).status).toBe(200);
    } finally {
      for (const server of running.splice(0)) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      execFileSync('umount', [dir], { stdio: 'pipe' });
    }
  }, 120_000);
});

describe('many idle connections', () => {
  it('1,000 idle connections do not stop new requests', async () => {
    const server = await startTestServer();
    const port = Number(new URL(server.url).port);
    const idle: Socket[] = [];
    try {
      await Promise.all(
        Array.from({ length: 1000 }, () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect(port, '127.0.0.1', () => resolve());
            socket.on('error', reject);
            idle.push(socket);
          }),
        ),
      );
      const statuses = await Promise.all(Array.from({ length: 10 }, () => fetch(`${server.url}/v1/health`).then((r) => r.status)));
      expect(statuses).toEqual(Array(10).fill(200));
      expect(idle.filter((socket) => !socket.destroyed)).toHaveLength(1000);
    } finally {
      for (const socket of idle) socket.destroy();
      await server.close();
    }
  }, 60_000);
});
