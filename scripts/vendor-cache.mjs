// Makes dist/vendor/vendor.cache and vendor-tui.cache, the V8 code caches of the vendor bundles (scripts/vendor.mjs).
//
// V8 caches the bytecode of the functions that have run, so the cache is taken at the exit of a real `kb ns list
// --json`, the command scripts call most, with a saved profile (conf reads it) and a stand-in server that answers with
// one namespace; before it exits, the same process draws the TUI's first screen on a stand-in terminal
// (scripts/vendor-cache-writer.mjs). Every other command shares most of that path (oclif's start, the profile, flag
// parsing, the client), and compiles the rest as it would without a cache.
//
// V8 takes a cache only from its own version: dist/vendor/caches.json says which V8 made these, and names each bundle
// by a digest of its text, under which another Node keeps a cache of its own (scripts/vendor-load.mjs).
//
// Without a cache kb works, only slower to start: if making it fails, the build says why and goes on. (The start-up
// test fails then, so CI does not miss it.)
import { execFile } from 'node:child_process';
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
  const bundles = ['vendor', 'vendor-tui'];
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
    await promisify(execFile)(process.execPath, ['--import', fileURLToPath(new URL('./vendor-cache-writer.mjs', import.meta.url)), join(pkg, 'bin/run.js'), 'ns', 'list', '--json'], {
      env: { PATH: process.env.PATH, HOME: home, KB_CONFIG_DIR: join(home, 'config/kb'), KB_DATA_DIR: join(home, 'data'), KB_VENDOR_CACHE: dir },
      timeout: 60_000,
    });
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

if (process.argv[1] === fileURLToPath(import.meta.url)) await makeVendorCaches(fileURLToPath(new URL('..', import.meta.url)));
