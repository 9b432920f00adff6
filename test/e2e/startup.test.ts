import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, ROOT, runKb } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/** Runs kb with a loader hook that records every module it imports, and returns their URLs. */
async function importsOf(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const log = join(tempDir('kb-imports-'), 'imports.log');
  const result = await runKb(args, {
    env: { ...env, KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')}` },
  });
  expect(result.code, result.stderr).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const HEAVY = /\/node_modules\/(ink|react|react-reconciler|fastify|better-sqlite3|pg|pg-pool|pg-protocol|conf)\/|\/dist\/(server|store|tui)\//;

describe('the start-up path loads only what the command needs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('kb --version loads no command, no client, no server, no TUI', async () => {
    const loaded = await importsOf(['--version'], isolatedEnv());
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((url) => HEAVY.test(url) || /\/node_modules\/(undici|zod)\/|\/dist\/commands\//.test(url))).toEqual([]);
  });

  it('kb ns list loads the client but not the server, the store, conf, Ink or React', async () => {
    const loaded = await importsOf(['ns', 'list', '--json'], isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token }));
    expect(loaded.some((url) => url.endsWith('/dist/commands/ns/list.js'))).toBe(true);
    expect(loaded.filter((url) => HEAVY.test(url))).toEqual([]);
  });
});
