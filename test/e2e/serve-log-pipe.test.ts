import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../helpers/cli.js';
import { freePort, load, type ServedToFile, serveToFile } from '../helpers/serve-to-file.js';
import { tempDir } from '../helpers/temp.js';

// Two kb serve processes (replicas, or servers of one script) often share one pipe for their logs:
// `{ kb serve ... & kb serve ... & } 2>&1 | collector`. A write to a pipe is whole only up to PIPE_BUF (4 KB); a larger
// one may be cut where the pipe is full and another process's write put in the cut. kb serve writes to a pipe in
// batches of whole lines of at most 4 KB (src/server/logger.ts). This runs two built kb serve with their stderr one
// FIFO, read slowly so that it is full most of the time, and checks that no line was spliced into another.

/** Reads the FIFO a little at a time, slowly, until every writer has closed it; resolves with all it read. */
async function readSlowly(fifo: string): Promise<Buffer> {
  // Opening a FIFO to read waits for a writer: the handle comes once the servers' end is open.
  const handle = await open(fifo, 'r');
  const chunks: Buffer[] = [];
  try {
    for (;;) {
      const buffer = Buffer.alloc(2048);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks);
      chunks.push(buffer.subarray(0, bytesRead));
      await sleep(2);
    }
  } finally {
    await handle.close();
  }
}

describe('two kb serve processes logging to one pipe', () => {
  it('never splice a line of one into a line of the other, even while the pipe is full', async () => {
    const fifo = join(tempDir('kb-log-pipe-'), 'log.fifo');
    execFileSync('mkfifo', [fifo]);
    const read = readSlowly(fifo);
    // Waits for the reader's open above, which waits for this one.
    const fd = openSync(fifo, 'w');
    const servers: ServedToFile[] = [];
    try {
      for (let i = 0; i < 2; i++) servers.push(await serveToFile(fifo, await freePort(), isolatedEnv(), { fd }));
      closeSync(fd);
      const total = 4000;
      // Every 400th line is long: 3,000 characters, under the 4 KB a write to a pipe keeps whole.
      const pathOf = (i: number) => (i % 400 === 199 ? `/v1/${'segment-/'.repeat(333)}` : '/v1/health');
      const statuses = await load(total, 32, (i) => fetch(`${(servers[i % 2] as ServedToFile).url}${pathOf(i)}`, { headers: { 'x-request-id': `pipe-${i}` } }));
      expect(statuses.filter((status, i) => status !== (pathOf(i) === '/v1/health' ? 200 : 404))).toEqual([]);
      for (const server of servers) server.child.kill('SIGTERM');
      expect(await Promise.all(servers.map((server) => server.exited))).toEqual([0, 0]);

      const text = (await read).toString('utf8');
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.slice(0, -1).split('\n');
      const spliced = lines.filter((line) => {
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      });
      expect(spliced.slice(0, 3).map((line) => line.slice(0, 200))).toEqual([]);
      const entries = lines.map((line) => JSON.parse(line) as { reqId?: string; path?: string; msg?: string });
      const seen = new Map<string, number>();
      for (const entry of entries) if (entry.reqId?.startsWith('pipe-')) seen.set(entry.reqId, (seen.get(entry.reqId) ?? 0) + 1);
      expect(seen.size).toBe(total);
      expect([...seen.values()].filter((count) => count !== 1)).toEqual([]);
      expect(entries.filter((entry) => entry.path !== undefined && entry.path.length > 2000)).toHaveLength(total / 400);
      expect(entries.filter((entry) => entry.msg === 'stopped')).toHaveLength(2);
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    }
  });
});
