import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isolatedEnv, ROOT, runKb, runProcess, startServe } from '../helpers/cli.js';
import { runRecordingSources } from '../helpers/imports.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';

/** The sources a successful run loaded (test/helpers/imports.ts maps the bundle back to them). */
async function sourcesLoaded(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const { result, sources } = await runRecordingSources(args, env);
  expect(result.code, result.stderr).toBe(0);
  return sources;
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
    // Nor what only writes need (node:crypto, for idempotency keys), nor oclif's WSL probe beyond is-wsl itself
    // (wsl-utils, with node:child_process: scripts/build.mjs, wslLean).
    expect(loaded.filter((source) => /^node:(crypto|child_process)$|node_modules\/wsl-utils\//.test(source))).toEqual([]);
    // Nor ICU's collator, which oclif's sort of the commands by localeCompare would build (scripts/build.mjs).
    expect(loaded).not.toContain('intl:collator');
    // Without a proxy variable, no proxy agent and not undici's index (fetch, WebSocket, the mocks).
    expect(loaded.filter((source) => /node_modules\/undici\/(index\.js|lib\/dispatcher\/(env-http-)?proxy-agent\.js)$/.test(source))).toEqual([]);
  });

  it('kb ns list --query loads jmespath, which kb ns list --json does not', async () => {
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token });
    const queried = await sourcesLoaded(['ns', 'list', '--query', '[].key'], env);
    expect(queried).toContain('node_modules/jmespath/jmespath.js');
  });

  it('kb export, kb apply and kb import load the yaml package only for a file their own reader and writer cannot handle', async () => {
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token });
    const yaml = (sources: string[]) => sources.filter((source) => /node_modules\/yaml\//.test(source));
    const dir = tempDir('kb-startup-');
    const json = join(dir, 'kb.json');
    writeFileSync(json, '{"version": 1, "namespaces": [{"key": "startup-docs", "description": "Docs", "bases": [{"key": "faq"}]}]}\n');
    const block = join(dir, 'kb.yaml');
    writeFileSync(block, 'version: 1\nnamespaces:\n  - key: startup-docs\n    description: Docs\n    bases:\n      - key: faq\n');
    const flow = join(dir, 'flow.yaml');
    writeFileSync(flow, 'version: 1\nnamespaces: [{key: startup-docs, description: Docs, bases: [{key: faq}]}]\n');
    expect(yaml(await sourcesLoaded(['export', '--format', 'json'], env))).toEqual([]);
    expect(yaml(await sourcesLoaded(['export'], env))).toEqual([]);
    expect(yaml(await sourcesLoaded(['apply', '-f', json, '--dry-run'], env))).toEqual([]);
    expect(yaml(await sourcesLoaded(['import', block, '--dry-run'], env))).toEqual([]);
    // Flow style is beyond the fast reader: the package reads it.
    expect(yaml(await sourcesLoaded(['apply', '-f', flow, '--dry-run'], env))).not.toEqual([]);
  });

  it('kb ns list, export, apply and import of valid values load no zod (src/api/quick.ts checks them); what it refuses loads zod to say why', async () => {
    const zod = (sources: string[]) => sources.filter((source) => /node_modules\/zod\/|^src\/(api\/(zod|schemas|routes)|client\/explain|config\/schema-check|sync\/resources-check)\.ts$/.test(source));
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token });
    const dir = tempDir('kb-startup-zod-');
    const file = join(dir, 'kb.json');
    writeFileSync(file, '{"version": 1, "namespaces": [{"key": "startup-zod", "description": "Docs", "bases": [{"key": "faq"}]}]}\n');
    const configDir = join(dir, 'config');
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const config = join(configDir, 'config.json');
    writeFileSync(config, JSON.stringify({ profiles: { local: { url: server.url, token: server.token } }, defaultProfile: 'local' }), { mode: 0o600 });
    for (const [args, runEnv] of [
      [['ns', 'list', '--json'], env],
      [['ns', 'list', '--json'], isolatedEnv({ KB_CONFIG_DIR: configDir })],
      [['ns', 'view', 'no-such-ns', '--json'], env],
      [['export', '--format', 'json'], env],
      [['apply', '-f', file, '--dry-run'], env],
      [['import', file, '--dry-run'], env],
    ] as const) {
      const { result, sources } = await runRecordingSources([...args], runEnv);
      // kb ns view of a namespace that is not there: the server's failure envelope, read without zod too.
      expect(result.code, result.stderr).toBe(args[1] === 'view' ? 3 : 0);
      expect(sources).toContain('src/api/quick.ts');
      expect(zod(sources), args.join(' ')).toEqual([]);
    }
    // A key the rules refuse: zod says why, and nothing is sent.
    const refused = await runRecordingSources(['ns', 'create', 'a b'], env);
    expect(refused.result.code).toBe(2);
    expect(refused.result.stderr).toContain('invalid key "a b": a key is 3 to 63 characters');
    expect(zod(refused.sources)).toContain('src/client/explain.ts');
    // A broken config file: zod says what is wrong with it, for a read and for a change alike.
    writeFileSync(config, JSON.stringify({ profiles: { local: { url: 'ftp://x' } } }), { mode: 0o600 });
    for (const args of [['ns', 'list'], ['auth', 'switch', 'local']]) {
      const broken = await runRecordingSources(args, isolatedEnv({ KB_CONFIG_DIR: configDir }));
      expect(broken.result.code, args.join(' ')).toBe(1);
      expect(broken.result.stderr).toContain(`the config file ${config} is not a valid kb config: profiles.local.url: must be an http:// or https:// URL`);
      expect(zod(broken.sources)).toContain('src/config/schema-check.ts');
    }
  });

  it('kb ns list runs oclif and undici from the vendor bundle, compiled from its code cache (scripts/vendor.mjs)', async () => {
    // NODE_ENV=development would have oclif look for kb's TypeScript sources and load tsx to run them.
    const loaded = await sourcesLoaded(['ns', 'list', '--json'], isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token, NODE_ENV: 'development' }));
    expect(loaded.filter((source) => /node_modules\/(typescript|tsx|ts-node)\//.test(source))).toEqual([]);
    // The vendor bundle reports its modules as they run: without that, the checks above would see none of them.
    expect(loaded).toContain('node_modules/@oclif/core/lib/config/config.js');
    expect(loaded).toContain('node_modules/undici/lib/dispatcher/agent.js');
    expect(loaded).toContain('vendor-cache:vendor:accepted');
    // The TUI's bundle (React, Ink) is neither read nor run.
    expect(loaded.filter((line) => line.startsWith('vendor-cache:vendor-tui'))).toEqual([]);
    // One copy of each: kb's own modules take them from the vendor bundle, never from node_modules.
    expect(loaded.filter((source) => source.startsWith('/') && /node_modules\/(@oclif\/core|undici|conf)\//.test(source))).toEqual([]);
  });

  it('kb serve runs fastify and pino from their vendor bundle, compiled from its code cache, and never loads fastify\'s schema compilers', async () => {
    const log = join(tempDir('kb-imports-'), 'imports.log');
    const serve = await startServe([], isolatedEnv({ KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')}` }));
    serve.child.kill('SIGTERM');
    expect((await serve.exited).code, serve.stderr()).toBe(0);
    const loaded = readFileSync(log, 'utf8').split('\n');
    expect(loaded).toContain('bundled:node_modules/fastify/fastify.js');
    expect(loaded).toContain('bundled:node_modules/pino/pino.js');
    // The build's code cache, made by starting kb serve once (scripts/vendor-cache.mjs), is taken.
    expect(loaded).toContain('vendor-cache:vendor-server:accepted');
    // One copy of each, the bundle's; and kb's routes declare no JSON schema, so neither ajv nor fast-json-stringify.
    expect(loaded.filter((line) => /node_modules\/(fastify|pino|@fastify\/(ajv|fast-json-stringify)-compiler|ajv)\//.test(line) && !line.startsWith('bundled:node_modules/fastify/') && !line.startsWith('bundled:node_modules/pino/'))).toEqual([]);
  });

  it('the vendor bundle compiled from its code cache is named where it is installed (stack traces, profiles)', async () => {
    // V8 keeps in a code cache the file name the script had when the cache was made: a cache made before the build
    // was swapped into dist/ named dist.new-PID, a directory gone by then, in every stack trace and profile.
    const profile = join(tempDir('kb-startup-profile-'), 'kb.cpuprofile');
    const { result, sources } = await runRecordingSources(
      ['ns', 'list', '--json'],
      isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token, KB_CPU_PROFILE: profile }),
      `--import ${join(ROOT, 'test/fixtures/cpu-profile.mjs')}`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(sources).toContain('vendor-cache:vendor:accepted');
    const { nodes } = JSON.parse(readFileSync(profile, 'utf8')) as { nodes: Array<{ callFrame: { url: string } }> };
    const named = new Set(nodes.map((node) => node.callFrame.url).filter((url) => url.endsWith('/vendor.cjs')));
    expect([...named]).toEqual([`file://${join(ROOT, 'dist/vendor/vendor.cjs')}`]);
  });

  it('kb ns list sets its V8 flag for the compile of llhttp only, and nothing loads meanwhile', async () => {
    // While a V8 flag differs from Node's start, V8 refuses the code caches made under the old flags, Node's own for its
    // built-in modules among them: every built-in loaded meanwhile is compiled from source (scripts/vendor.mjs).
    const loaded = await sourcesLoaded(['ns', 'list', '--json'], isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token }));
    const set = loaded.indexOf('v8-flags:--liftoff-only --no-wasm-lazy-compilation');
    const reset = loaded.indexOf('v8-flags:--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering --wasm-lazy-compilation');
    expect(set).toBeGreaterThan(0);
    expect(reset).toBeGreaterThan(set);
    expect(loaded.slice(set + 1, reset)).toEqual(['node_modules/undici/lib/llhttp/llhttp_simd-wasm.js']);
  });

  it('kb ns list with a saved profile reads it with conf from the vendor bundle, from its code cache', async () => {
    const home = tempDir('kb-startup-profile-');
    const dir = join(home, 'config', 'kb');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { local: { url: server.url, token: server.token } }, defaultProfile: 'local' }), { mode: 0o600 });
    const loaded = await sourcesLoaded(['ns', 'list', '--json'], isolatedEnv({ KB_CONFIG_DIR: dir }));
    expect(loaded).toContain('node_modules/conf/dist/source/index.js');
    expect(loaded).toContain('vendor-cache:vendor:accepted');
    // semver is bundled with conf, for migrations kb never asks for.
    expect(loaded.filter((source) => /node_modules\/semver\//.test(source))).toEqual([]);
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

describe('the vendor bundle\'s code cache', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  /** A copy of the built kb (bin, dist, manifest; node_modules linked), whose vendor code cache a test may spoil. */
  function copyOfKb(): string {
    const dir = tempDir('kb-copy-');
    for (const entry of ['bin', 'dist', 'package.json', 'oclif.manifest.json']) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    return dir;
  }

  /** Runs `kb ns list --json` from a copy, recording what it loads; returns the result and the recorded lines. */
  async function listFrom(kb: string, extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; log: string[] }> {
    const log = join(tempDir('kb-imports-'), 'imports.log');
    const env = isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token, KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')}`, ...extra });
    const result = await runProcess(process.execPath, [join(kb, 'bin/run.js'), 'ns', 'list', '--json'], { env });
    return { ...result, log: readFileSync(log, 'utf8').split('\n') };
  }

  /** The files under `dir`, at any depth. */
  function filesUnder(dir: string): string[] {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  }

  /** A copy of kb whose build says its code caches were made by another V8 (another Node built it). */
  function copyBuiltByAnotherNode(): string {
    const kb = copyOfKb();
    const caches = join(kb, 'dist/vendor/caches.json');
    writeFileSync(caches, JSON.stringify({ ...(JSON.parse(readFileSync(caches, 'utf8')) as object), v8: '1.0.0-another' }));
    return kb;
  }

  it('is taken by a copy of kb in another directory (the cache does not depend on where kb is installed)', async () => {
    const copy = await listFrom(copyOfKb());
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.log).toContain('vendor-cache:vendor:accepted');
  });

  const spoilt: Array<[string, string, (cache: string) => void]> = [
    ['missing', 'none', (cache) => rmSync(cache)],
    ['corrupt', 'rejected', (cache) => writeFileSync(cache, Buffer.alloc(readFileSync(cache).length, 0x5a))],
    ['truncated', 'rejected', (cache) => writeFileSync(cache, readFileSync(cache).subarray(0, 1000))],
  ];
  it.each(spoilt)('a %s cache costs time, never the answer', async (_, outcome, spoil) => {
    const kb = copyOfKb();
    spoil(join(kb, 'dist/vendor/vendor.cache'));
    const copy = await listFrom(kb);
    const built = await runKb(['ns', 'list', '--json'], { env: isolatedEnv({ KB_URL: server.url, KB_TOKEN: server.token }) });
    expect(copy.log).toContain(`vendor-cache:vendor:${outcome}`);
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.stderr).toBe('');
    expect(copy.stdout).toBe(built.stdout);
  });

  it('made by another V8 is not even read (V8 would refuse it)', async () => {
    const copy = await listFrom(copyBuiltByAnotherNode(), { NODE_COMPILE_CACHE: tempDir('kb-compile-cache-') });
    expect(copy.code, copy.stderr).toBe(0);
    expect(copy.log).toContain('vendor-cache:vendor:none');
    expect(copy.log).not.toContain('vendor-cache:vendor:rejected');
  });

  // Node 22.1+ has a compile cache directory for kb to keep its own cache in; Node 20 has none. Each Node gets the test
  // of what it does (defined for that Node only, never skipped).
  if (!('getCompileCacheDir' in module)) {
    it('made by another V8, on a Node without a compile cache (20): every run goes without one and writes none', async () => {
      const kb = copyBuiltByAnotherNode();
      const compileCache = tempDir('kb-compile-cache-');
      for (let run = 0; run < 2; run++) {
        const result = await listFrom(kb, { NODE_COMPILE_CACHE: compileCache });
        expect(result.code, result.stderr).toBe(0);
        expect(result.log).toContain('vendor-cache:vendor:none');
      }
      expect(filesUnder(compileCache)).toEqual([]);
    });
  }
  if ('getCompileCacheDir' in module) it(
    'made by another V8: this Node makes its own in its compile cache directory at the first run, and takes it after (Node 22.1+)',
    async () => {
      const kb = copyBuiltByAnotherNode();
      const compileCache = tempDir('kb-compile-cache-');
      const first = await listFrom(kb, { NODE_COMPILE_CACHE: compileCache });
      expect(first.code, first.stderr).toBe(0);
      expect(first.log).toContain('vendor-cache:vendor:none');
      const digest = (JSON.parse(readFileSync(join(kb, 'dist/vendor/caches.json'), 'utf8')) as { bundles: Record<string, string> }).bundles.vendor;
      expect(filesUnder(compileCache).filter((file) => file.endsWith(`/kb-vendor-${digest}.cache`))).toHaveLength(1);
      const second = await listFrom(kb, { NODE_COMPILE_CACHE: compileCache });
      expect(second.code, second.stderr).toBe(0);
      expect(second.log).toContain('vendor-cache:vendor:accepted');
      expect(second.stdout).toBe(first.stdout);
      // No half-written file is left behind.
      expect(filesUnder(compileCache).filter((file) => file.endsWith('.tmp'))).toEqual([]);
    },
  );
  if ('getCompileCacheDir' in module) it(
    'made by kb serve as the first run, under the V8 flag it sets: taken by the next kb ns list (Node 22.1+)',
    async () => {
      // kb serve turns incremental marking off (src/commands/serve/index.ts), and V8 stamps a cache with its flags: a
      // cache written under that flag would be refused by every other command.
      const kb = copyBuiltByAnotherNode();
      const compileCache = tempDir('kb-compile-cache-');
      const env = isolatedEnv({ NODE_COMPILE_CACHE: compileCache, KB_DATA_DIR: tempDir('kb-serve-data-') });
      const serve = spawn(process.execPath, [join(kb, 'bin/run.js'), 'serve', '--port', '0', '--log-level', 'warn'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      serve.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      serve.stdout.resume();
      const exited = new Promise<number | null>((resolve) => serve.on('exit', (code) => resolve(code)));
      await vi.waitFor(() => expect(stderr).toMatch(/listening on http/), { timeout: 20_000 });
      serve.kill('SIGTERM');
      expect(await exited, stderr).toBe(0);
      const next = await listFrom(kb, { NODE_COMPILE_CACHE: compileCache });
      expect(next.code, next.stderr).toBe(0);
      expect(next.log).toContain('vendor-cache:vendor:accepted');
    },
  );
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

describe('kb from a checkout that was never built', () => {
  it('says in one line that it is not built and how to build it, exit 1; --version needs no build', async () => {
    // `npm ci --ignore-scripts`: the package and its dependencies, no dist.
    const dir = tempDir('kb-unbuilt-');
    for (const entry of ['bin', 'package.json']) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const result = await runProcess(process.execPath, [join(dir, 'bin/run.js'), 'ns', 'list'], { env: isolatedEnv() });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`Error: kb is not built (${join(dir, 'dist/cli/run.js')} is missing): run \`npm run build\` in ${dir}\n`);
    const version = await runProcess(process.execPath, [join(dir, 'bin/run.js'), '--version'], { env: isolatedEnv() });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^kb\/\d+\.\d+\.\d+ /);
  });
});
