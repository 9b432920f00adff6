import { afterEach, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';

const CYCLES = Number(process.env.KB_CRASH_CYCLES ?? 10);
const WRITERS = 16;

const running: ServeProcess[] = [];
afterEach(() => {
  for (const server of running.splice(0)) server.child.kill('SIGKILL');
});

async function create(url: string, token: string, key: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/v1/base_create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: 'crash', key }),
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

describe('durability under kill -9', () => {
  it(`keeps every acknowledged write through ${CYCLES} crashes under ${WRITERS} concurrent writers`, async () => {
    const env = isolatedEnv();
    const tokenRun = await runKb(['serve', 'token', 'create', '--org', 'crash'], { env });
    const token = tokenRun.stdout.trim();
    const acknowledged = new Set<string>();
    let attempted = 0;

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const server = await startServe([], env);
      running.push(server);
      let stop = false;
      const writers = Array.from({ length: WRITERS }, async (_, writer) => {
        for (let n = 0; !stop; n++) {
          const key = `c${cycle}-w${writer}-n${n}`;
          attempted++;
          if (await create(server.url, token, key)) acknowledged.add(key);
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 350));
      server.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await server.exited;
    }

    const server = await startServe([], env);
    running.push(server);
    const response = await fetch(`${server.url}/v1/base_list?namespace=crash`, { headers: { authorization: `Bearer ${token}` } });
    const stored = new Set(((await response.json()) as { data: Array<{ key: string }> }).data.map((base) => base.key));
    const lost = [...acknowledged].filter((key) => !stored.has(key));
    expect(acknowledged.size).toBeGreaterThan(CYCLES * 10);
    expect(lost).toEqual([]);
    expect(attempted).toBeGreaterThanOrEqual(acknowledged.size);
  }, 180_000);
});
