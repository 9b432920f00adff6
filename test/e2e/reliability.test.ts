import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../helpers/server.js';

const running: ServeProcess[] = [];
afterEach(() => {
  for (const server of running.splice(0)) server.child.kill('SIGKILL');
});

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

function canMountTmpfs(dir: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `cannot mount a small tmpfs here (${(error as Error).message.split('\n')[0]}): needs root`;
  }
}

describe('a full disk', () => {
  it('fails writes with 507, keeps serving reads, and writes again once space is freed', async (context) => {
    const dir = tempDir('kb-full-');
    const why = canMountTmpfs(dir);
    if (why) {
      console.warn(`SKIPPED disk-full test: ${why}`);
      context.skip(why);
    }
    try {
      const env = isolatedEnv({ KB_DATA_DIR: join(dir, 'data') });
      mkdirSync(join(dir, 'data'));
      const token = (await runKb(['serve', 'token', 'create', '--org', 'full'], { env })).stdout.trim();
      const server = await serve([], env);
      expect((await request(server.url, token, 'POST', '/base_create', { namespace: 'full', key: 'before' })).status).toBe(200);
      // Fill what is left, keeping a ballast file to free later.
      writeFileSync(join(dir, 'ballast'), Buffer.alloc(512 * 1024));
      const description = 'x'.repeat(1024);
      let status = 200;
      let n = 0;
      for (; status === 200 && n < 20_000; n++) {
        const response = await request(server.url, token, 'POST', '/base_create', { namespace: 'full', key: `fill-${n}`, description });
        status = response.status;
        if (status !== 200) {
          const body = (await response.json()) as { success: boolean; message: string };
          expect(body.success).toBe(false);
          expect(body.message).toMatch(/disk/i);
        }
      }
      expect(status).toBe(507);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
      const listed = await request(server.url, token, 'GET', '/base_list?namespace=full');
      expect(listed.status).toBe(200);
      const keys = ((await listed.json()) as { data: Array<{ key: string }> }).data.map((base) => base.key);
      expect(keys).toContain('before');
      expect(keys).not.toContain(`fill-${n - 1}`);

      rmSync(join(dir, 'ballast'));
      expect((await request(server.url, token, 'POST', '/base_create', { namespace: 'full', key: 'after' })).status).toBe(200);
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
