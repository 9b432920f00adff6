// Runs the vendor bundles (scripts/vendor.mjs): dist/vendor/vendor.cjs, the packages every command loads, and
// dist/vendor/vendor-tui.cjs, React and Ink, each compiled from a V8 code cache, each on first use. Bundled into kb's
// chunks: kb's modules import these packages through stand-ins that call `vendored`.
//
// V8 takes a code cache only from its own version (and flags), and compiles from source otherwise. The build makes
// the caches with the Node that builds (scripts/vendor-cache.mjs), and says in dist/vendor/caches.json which V8 that
// was: another Node does not read them. From Node 22.1, where bin/run.js turns on Node's compile cache (which covers
// ES and CommonJS modules but not a vm.Script), another V8 keeps caches of its own in that cache's directory: the
// first run that finds none makes them as it exits, with what that command ran, and later runs take them.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** node:module, with what Node 22 added (@types/node is Node 20's). */
const nodeModule = /** @type {typeof module & { getCompileCacheDir?: () => string | undefined }} */ (module);

/** What kb sets on globalThis for the vendor bundles and the start-up test, by symbol. */
const shared = /** @type {Record<symbol, unknown>} */ (/** @type {unknown} */ (globalThis));

/** Each bundle's exports, once it has run. @type {Map<string, Record<string, unknown>>} */
const bundles = new Map();
/** ES modules that the bundles' packages import, handed in by kb's stand-ins (scripts/vendor.mjs, PROVIDED). @type {Map<string, unknown>} */
const provided = new Map();

/**
 * What dist/vendor/caches.json says: the V8 of the build's caches (null when it made none), and a digest of each
 * bundle, which names a cache made for it elsewhere. Undefined for a build without that file.
 * @type {{ v8: string | null, bundles: Record<string, string> } | undefined | null}
 */
let builtCaches = null;

/**
 * Where `bundle`'s code cache is for this V8: the build's, or one in Node's compile cache directory (`own`: made by
 * this process at exit when it is missing or refused). None when neither fits.
 * @param {string} dir dist/vendor
 * @param {string} bundle
 * @returns {{ path: string, own: boolean } | undefined}
 */
function cacheOf(dir, bundle) {
  if (builtCaches === null) {
    try {
      builtCaches = JSON.parse(readFileSync(join(dir, 'caches.json'), 'utf8'));
    } catch {
      builtCaches = undefined;
    }
  }
  if (builtCaches === undefined || builtCaches === null || builtCaches.v8 === process.versions.v8) return { path: join(dir, `${bundle}.cache`), own: false };
  // Node's directory for this Node version (and its V8 flags), when the compile cache is on (bin/run.js).
  const cacheDir = nodeModule.getCompileCacheDir?.();
  const digest = builtCaches.bundles?.[bundle];
  if (cacheDir === undefined || typeof digest !== 'string') return undefined;
  return { path: join(cacheDir, `kb-${bundle}-${digest}.cache`), own: true };
}

/** The scripts whose code caches this process writes as it exits, by path (see cacheOf). @type {Map<string, Script>} */
const owed = new Map();
let writeAtExit = false;
/**
 * @param {string} path
 * @param {Script} script
 */
function owe(path, script) {
  owed.set(path, script);
  if (writeAtExit) return;
  writeAtExit = true;
  process.on('exit', () => {
    try {
      // V8 stamps a cache with its flags: those the TUI set for good (src/tui/load.ts) go back to Node's, as the build
      // does (scripts/vendor-cache-writer.mjs). The process is ending: nothing runs under them any more.
      if (shared[Symbol.for('kb.wasm.baselineOnly')] === true) {
        createRequire(import.meta.url)('node:v8').setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering');
      }
      // And the one kb serve sets for good (src/commands/serve/index.ts).
      if (shared[Symbol.for('kb.gc.noIncrementalMarking')] === true) createRequire(import.meta.url)('node:v8').setFlagsFromString('--incremental-marking');
      for (const [file, made] of owed) {
        // Whole or not at all: another kb may read it meanwhile.
        const partial = `${file}.${process.pid}.tmp`;
        writeFileSync(partial, made.createCachedData(), { mode: 0o600 });
        renameSync(partial, file);
      }
    } catch {
      // A cache that cannot be written (a read-only or full disk) costs the next run time, never its answer.
    }
  });
}

/**
 * @param {string} bundle
 * @returns {Record<string, unknown>} its exports
 */
function load(bundle) {
  // This module is bundled into a chunk, dist/chunks/*.js (scripts/build.mjs checks): the vendor bundles are in dist/vendor.
  const dir = fileURLToPath(new URL('../vendor', import.meta.url));
  const file = join(dir, `${bundle}.cjs`);
  const cache = cacheOf(dir, bundle);
  let cachedData;
  try {
    if (cache) cachedData = readFileSync(cache.path);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData });
  // For scripts/vendor-cache-writer.mjs, which saves the caches at exit, and for the start-up test.
  const scripts = /** @type {Map<string, Script>} */ ((shared[Symbol.for('kb.vendor.scripts')] ??= new Map()));
  scripts.set(bundle, script);
  if (cache?.own && script.cachedDataRejected !== false) owe(cache.path, script);
  /** @type {{ exports: Record<string, unknown> }} */
  const module = { exports: {} };
  // As Node calls a CommonJS module, with the import() that oclif uses to load kb's commands, hooks and help, and the
  // ES modules handed in.
  script.runInThisContext()(module.exports, createRequire(file), module, file, dir, (/** @type {string} */ specifier) => import(specifier), (/** @type {string} */ name) => {
    if (!provided.has(name)) throw new Error(`the vendor bundle needs ${name}, which no stand-in has handed in`);
    return provided.get(name);
  });
  return module.exports;
}

/**
 * The package `specifier` (one of scripts/vendor.mjs's VENDORED) from `bundle`, which runs on first use.
 * @param {string} bundle
 * @param {string} specifier
 * @returns {any} the package's exports, as its stand-in hands them on
 */
export function vendored(bundle, specifier) {
  let exported = bundles.get(bundle);
  if (exported === undefined) bundles.set(bundle, (exported = load(bundle)));
  return exported[specifier];
}

/**
 * Hands the vendor bundles an ES module their packages import (Ink's stand-in hands in yoga-layout).
 * @param {string} name
 * @param {unknown} value
 */
export function provide(name, value) {
  provided.set(name, value);
}
