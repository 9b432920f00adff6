import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A TCP proxy that passes the first connection's request to the server, lets the server answer, and then
 * closes the client's socket instead of passing the answer on: the write happened, the client never heard.
 */
async function dropFirstReply(target: URL): Promise<{ url: string; server: Server; dropped: () => number }> {
  let connections = 0;
  let dropped = 0;
  const server = createServer((client) => {
    const first = connections++ === 0;
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream);
    if (first) {
      upstream.once('data', () => {
        dropped++;
        client.destroy();
        upstream.destroy();
      });
    } else {
      upstream.pipe(client);
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, dropped: () => dropped };
}

describe('a write whose reply is lost', () => {
  let kb: TestServer;
  beforeAll(async () => {
    kb = await startTestServer();
  });
  afterAll(() => kb.close());

  it('is retried under its Idempotency-Key: one base is created and the CLI exits 0', async () => {
    const proxy = await dropFirstReply(new URL(kb.url));
    try {
      const result = await runKb(['base', 'create', 'retried', 'once-only', '--create-namespace', '--json', '--verbose'], {
        env: isolatedEnv({ KB_URL: proxy.url, KB_TOKEN: kb.token }),
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ namespace: 'retried', key: 'once-only', description: null });
      expect(proxy.dropped()).toBe(1);
      // Two attempts traced: the lost one and the replayed one.
      expect(result.stderr.match(/^\* POST /gm)).toHaveLength(2);
      const listed = await fetch(`${kb.url}/v1/base_list?namespace=retried`, { headers: { authorization: `Bearer ${kb.token}` } });
      expect(((await listed.json()) as { data: unknown[] }).data).toEqual([{ namespace: 'retried', key: 'once-only', description: null }]);
    } finally {
      proxy.server.close();
    }
  });
});
