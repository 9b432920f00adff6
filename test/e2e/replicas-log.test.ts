import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/database.js';
import { freePort, load, logEntries, requestLinesOnce, type ServerWithLog, serveWithLog } from '../helpers/serve-with-log.js';
import { tempDir } from '../helpers/temp.js';

// Replicas of one PostgreSQL database often log to one file. Each kb serve writes its log in whole-line batches
// (src/server/logger.ts); these run two built replicas whose stderr is one file, the two ways a shell makes it:
// `kb serve ... 2>>serve.log` in each (two opens, each appending), and `{ kb serve ... & kb serve ... & } 2>serve.log`
// (one open shared by both). Either way no line may be spliced into another, lost or written twice.

type Sharing = 'each appends' | 'one open file';


async function twoReplicasLoggingTo(logFile: string, sharing: Sharing): Promise<{ replicas: ServerWithLog[]; close: () => Promise<void> }> {
  const database = await createTestDatabase('postgres');
  const url = (database.storage as { url: string }).url;
  const env = isolatedEnv();
  const fd = sharing === 'one open file' ? openSync(logFile, 'w') : undefined;
  const options = { args: ['--database', url] };
  // One after the other: the first creates the schema.
  const first = await serveWithLog(fd ?? logFile, await freePort(), env, options);
  const second = await serveWithLog(fd ?? logFile, await freePort(), env, options);
  return {
    replicas: [first, second],
    close: async () => {
      for (const replica of [first, second]) {
        if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
        await replica.exited;
      }
      if (fd !== undefined) closeSync(fd);
      await database.drop();
    },
  };
}

describe.each<Sharing>(['each appends', 'one open file'])('two kb serve replicas logging to one file (%s)', (sharing) => {
  it('write every line whole and once, long lines and both replicas\' own lines included', async () => {
    const logFile = join(tempDir('kb-replicas-log-'), 'serve.log');
    const { replicas, close } = await twoReplicasLoggingTo(logFile, sharing);
    try {
      const total = 3000;
      // Every 500th path is long: 6,000 characters fit a batch's buffer, 9,000 do not (logger.ts). Short segments: a
      // run of 43 word characters would be redacted as token-shaped.
      const long = (length: number) => `/v1/${'segment-/'.repeat(length / 9)}`;
      const pathOf = (i: number) => (i % 1000 === 499 ? long(9000) : i % 500 === 249 ? long(6003) : '/v1/health');
      const replicaOf = (i: number) => replicas[i % 2] as ServerWithLog;
      const statuses = await load(total, 48, (i) => fetch(`${replicaOf(i).url}${pathOf(i)}`, { headers: { 'x-request-id': `both-${i}` } }));
      expect(statuses.filter((status, i) => status !== (pathOf(i) === '/v1/health' ? 200 : 404))).toEqual([]);
      for (const replica of replicas) replica.child.kill('SIGTERM');
      expect(await Promise.all(replicas.map((replica) => replica.exited))).toEqual([0, 0]);

      const text = readFileSync(logFile, 'utf8');
      const entries = logEntries(text);
      for (const [i, entry] of requestLinesOnce(entries, 'both-', total).entries()) {
        expect(entry.path?.length, `both-${i}`).toBe(pathOf(i).length);
        expect(entry.status, `both-${i}`).toBe(statuses[i]);
      }
      // Each replica's own lines: where it listens, and that it stopped.
      expect(entries.filter((entry) => entry.msg?.startsWith('listening on '))).toHaveLength(2);
      expect(entries.filter((entry) => entry.msg === 'stopped')).toHaveLength(2);
      // Many batches of each replica met in the file.
      expect(text.length).toBeGreaterThan(20 * 16_384);
    } finally {
      await close();
    }
  });
});
