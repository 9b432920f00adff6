import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, ROOT, runKb } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * The sources a run loaded. dist/ is bundled (scripts/build.mjs), so a loaded dist file stands for the sources
 * it holds, as listed in dist/bundle-inputs.json; anything else (an unbundled package) is listed as itself.
 */
async function sourcesLoaded(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const log = join(tempDir('kb-imports-'), 'imports.log');
  const result = await runKb(args, {
    env: { ...env, KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')}` },
  });
  expect(result.code, result.stderr).toBe(0);
  const bundles = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
  const dist = join(ROOT, 'dist') + '/';
  const files = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((entry) => (entry.startsWith('file:') ? fileURLToPath(entry) : entry));
  const sources = files.flatMap((file) => {
    if (!file.startsWith(dist)) return [file];
    const inputs = bundles[file.slice(dist.length)];
    if (inputs === undefined) throw new Error(`${file} is not in dist/bundle-inputs.json: is the build stale?`);
    return inputs;
  });
  return [...new Set(sources)];
}

const HEAVY = /node_modules\/(ink|react|react-reconciler|yoga-layout|fastify|better-sqlite3|pg|pg-pool|pg-protocol|conf|yaml)\/|^src\/(server|store|tui)\//;

describe('the start-up path loads only what the command needs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('kb --version loads no command, no client, no server, no TUI', async () => {
    const loaded = await sourcesLoaded(['--version'], isolatedEnv());
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((source) => HEAVY.test(source) || /node_modules\/(undici|zod|@oclif)\/|^src\/commands\//.test(source))).toEqual([]);
  });

  it('kb ns list loads the client but not the server, the store, conf, YAML, Ink or React', async () => {
    const loaded = await sourcesLoaded(['ns', 'list', '--json'], isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token }));
    expect(loaded).toContain('src/commands/ns/list.ts');
    expect(loaded).toContain('src/client/client.ts');
    expect(loaded.filter((source) => HEAVY.test(source))).toEqual([]);
    // Nor the built-ins that bundled modules require only on first use (scripts/build.mjs, LAZY_MODULES): built-ins
    // are recorded when required, bundled modules only as the chunk that holds them.
    expect(loaded.filter((source) => /^node:(http2|perf_hooks|readline)$/.test(source))).toEqual([]);
    // Without a proxy variable, no proxy agent and not undici's index (fetch, WebSocket, the mocks).
    expect(loaded.filter((source) => /node_modules\/undici\/(index\.js|lib\/dispatcher\/(env-http-)?proxy-agent\.js)$/.test(source))).toEqual([]);
  });

  it('kb ns list with HTTPS_PROXY set loads undici\'s proxy agent (through its index)', async () => {
    const loaded = await sourcesLoaded(
      ['ns', 'list', '--json'],
      isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token, HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' }),
    );
    expect(loaded).toContain('node_modules/undici/index.js');
    expect(loaded).toContain('node_modules/undici/lib/dispatcher/env-http-proxy-agent.js');
  });

  it('kb serve is bundled apart: its command file does not carry the server', () => {
    const bundles = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
    expect(bundles['commands/serve/index.js']?.some((source) => source.startsWith('src/server/serve'))).toBe(false);
    expect(Object.values(bundles).some((inputs) => inputs.includes('src/server/serve.ts'))).toBe(true);
  });
});

describe('kb --version without oclif', () => {
  it('prints what oclif would print', async () => {
    const { Config } = await import('@oclif/core');
    const config = await Config.load({ root: ROOT });
    for (const flag of ['--version', '-v']) {
      const result = await runKb([flag], { env: isolatedEnv() });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${config.userAgent}\n`);
    }
  });
});
