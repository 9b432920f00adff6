import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, runKb, startServe } from '../helpers/cli.js';

const running = killedAfterEach();

async function status(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/v1/ns_list`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

/**
 * kb serve keeps known tokens and list answers until a write commits, and reads SQLite's data_version once per
 * turn of its event loop to see other processes' commits. Under a steady stream of requests, a revocation made by
 * another process must hold for every request sent after that process has finished.
 */
describe('answers kept between writes, against another process', () => {
  it('a token revoked by kb serve token revoke is refused by every request sent afterwards, under load', async () => {
    const env = isolatedEnv();
    const server = await startServe([], env);
    running.push(server);
    const created = await runKb(['serve', 'token', 'create', '--org', 'acme', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    const token = (JSON.parse(created.stdout) as { token: string }).token;
    const id = (JSON.parse((await runKb(['serve', 'token', 'list', '--json'], { env })).stdout) as Array<{ id: string; org: string }>)
      .find((entry) => entry.org === 'acme')?.id as string;

    let revoked = false;
    const late: number[] = [];
    let before = 0;
    let after = 0;
    const load = Array.from({ length: 8 }, async () => {
      // Until 25 requests of this worker have been sent after the revocation (or 2,000 in all).
      for (let i = 0, sentAfter = 0; i < 2000 && sentAfter < 25; i++) {
        const sentAfterRevoke = revoked;
        const code = await status(server.url, token);
        // Refused is 401, or 429 once this address has failed 20 times.
        if (sentAfterRevoke) {
          sentAfter++;
          after++;
          if (code !== 401 && code !== 429) late.push(code);
        } else if (code === 200) before++;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const revoke = await runKb(['serve', 'token', 'revoke', id], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    revoked = true;
    await Promise.all(load);
    expect(before).toBeGreaterThan(0);
    expect(after).toBe(8 * 25);
    expect(late).toEqual([]);
  });

  it('a namespace created by another process is listed by the next request', async () => {
    const env = isolatedEnv();
    const server = await startServe([], env);
    running.push(server);
    const token = (await runKb(['serve', 'token', 'create', '--org', 'acme'], { env })).stdout.trim();
    const list = async () => {
      const response = await fetch(`${server.url}/v1/ns_list`, { headers: { authorization: `Bearer ${token}` } });
      return ((await response.json()) as { data: Array<{ key: string }> }).data.map((ns) => ns.key);
    };
    expect(await list()).toEqual([]);
    expect(await list()).toEqual([]);
    // A second kb serve on the same data dir is another process writing to the same database.
    const other = await startServe([], { ...env });
    running.push(other);
    const create = await fetch(`${other.url}/v1/ns_create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'from-elsewhere' }),
    });
    expect(create.status).toBe(200);
    expect(await list()).toEqual(['from-elsewhere']);
  });
});
