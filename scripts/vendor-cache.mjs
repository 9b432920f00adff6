// Makes dist/vendor/vendor.cache, vendor-tui.cache and vendor-server.cache, the V8 code caches of the vendor bundles
// (scripts/vendor.mjs).
//
// V8 caches the bytecode of the functions that have run, so the caches are taken at the exit of real runs of kb: a
// `kb ns list --json`, the command scripts call most, with a saved profile (conf reads it) and a stand-in server that
// answers with one namespace, which before it exits draws the TUI's first screen on a stand-in terminal; and a
// `kb serve` on a new data dir, its warm-up run, asked once for its health, then stopped by SIGTERM
// (scripts/vendor-cache-writer.mjs writes them). Every other command shares most of that path (oclif's start, the
// profile, flag parsing, the client, the server's requests), and compiles the rest as it would without a cache.
//
// V8 takes a cache only from its own version: dist/vendor/caches.json says which V8 made these, and names each bundle
// by a digest of its text, under which another Node keeps a cache of its own (scripts/vendor-load.mjs).
//
// Without a cache kb works, only slower to start: if making it fails, the build says why and goes on. (The start-up
// test fails then, so CI does not miss it.)
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Makes the code caches in `pkg`/dist/vendor, running `pkg`/bin/run.js: `pkg` is the package's root, where
 * scripts/build.mjs has just put the new build (V8 keeps the bundle's file name in its cache: made there, stack traces
 * and profiles name the file where it is). Each file is written whole and renamed in, since a kb may start meanwhile.
 */
export async function makeVendorCaches(pkg) {
  const dir = join(pkg, 'dist/vendor');
  const bundles = ['vendor', 'vendor-tui', 'vendor-server'];
  const caches = bundles.map((name) => join(dir, `${name}.cache`));
  for (const cache of [...caches, join(dir, 'caches.json')]) rmSync(cache, { force: true });
  /** @param {string | null} v8 the V8 that made the caches, null for none */
  const describe = (v8) => {
    const digest = (bundle) => createHash('sha256').update(readFileSync(join(dir, `${bundle}.cjs`))).digest('hex').slice(0, 16);
    const partial = join(dir, `caches.json.${process.pid}.tmp`);
    writeFileSync(partial, `${JSON.stringify({ v8, bundles: Object.fromEntries(bundles.map((bundle) => [bundle, digest(bundle)])) })}\n`);
    renameSync(partial, join(dir, 'caches.json'));
  };

  const server = createServer((request, response) => {
    request.resume();
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ success: true, data: [{ key: 'notes', description: null }] }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const home = mkdtempSync(join(tmpdir(), 'kb-vendor-cache-'));
  try {
    const { port } = server.address();
    const profile = { url: `http://127.0.0.1:${port}`, token: `kbt_${'a'.repeat(43)}` };
    mkdirSync(join(home, 'config/kb'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'config/kb/config.json'), JSON.stringify({ profiles: { local: profile }, defaultProfile: 'local' }), { mode: 0o600 });
    const writer = fileURLToPath(new URL('./vendor-cache-writer.mjs', import.meta.url));
    const env = (made) => ({ PATH: process.env.PATH, HOME: home, KB_CONFIG_DIR: join(home, 'config/kb'), KB_DATA_DIR: join(home, 'data'), KB_VENDOR_CACHE: dir, KB_VENDOR_CACHES: made });
    await promisify(execFile)(process.execPath, ['--import', writer, join(pkg, 'bin/run.js'), 'ns', 'list', '--json'], { env: env('vendor,vendor-tui'), timeout: 60_000 });
    await serveOnce(['--import', writer, join(pkg, 'bin/run.js'), 'serve', '--port', '0', '--data-dir', join(home, 'data')], env('vendor-server'));
    console.log(`vendor code caches: ${caches.map((cache) => `${Math.round(statSync(cache).size / 1024)} KiB`).join(' and ')}`);
    describe(process.versions.v8);
  } catch (error) {
    for (const cache of caches) rmSync(cache, { force: true });
    describe(null);
    const why = error.stderr?.trim() || error.message;
    console.warn(`warning: no code cache for the vendor bundles: kb works, but starts some 30 ms slower.\n${why}`);
  } finally {
    server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Runs a kb serve until it listens, asks it for its health once, and stops it with SIGTERM: it must exit 0.
 * @param {string[]} args node's arguments
 * @param {NodeJS.ProcessEnv} env
 */
async function serveOnce(args, env) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    const url = await new Promise((resolve, reject) => {
      const read = (chunk) => {
        output += chunk;
        const listening = /listening on (https?:\/\/\S+?)[\s"]/.exec(output);
        if (listening) resolve(listening[1]);
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      void exited.then((how) => reject(new Error(`kb serve exited (${how}) before it listened`)));
    });
    await fetch(new URL('/v1/health', url));
    child.kill('SIGTERM');
    const how = await exited;
    if (how !== 0) throw new Error(`kb serve exited (${how}) after SIGTERM`);
  } catch (error) {
    child.kill('SIGKILL');
    throw Object.assign(error, { stderr: output.trim() });
  } finally {
    clearTimeout(timer);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await makeVendorCaches(fileURLToPath(new URL('..', import.meta.url)));
