// Runs the vendor bundles (scripts/vendor.mjs): dist/vendor/vendor.cjs, the packages every command loads, and
// dist/vendor/vendor-tui.cjs, React and Ink, each compiled from the V8 code cache that the build made
// (scripts/vendor-cache.mjs), each on first use. Bundled into kb's chunks: kb's modules import these packages through
// stand-ins that call `vendored`.
//
// V8 checks a code cache against the source and its own version and flags, and refuses one that does not match
// (another Node, a spoilt file): the script is then compiled from source, which costs time and nothing else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** Each bundle's exports, once it has run. */
const bundles = new Map();
/** ES modules that the bundles' packages import, handed in by kb's stand-ins (scripts/vendor.mjs, PROVIDED). */
const provided = new Map();

function load(bundle) {
  // This module is bundled into a chunk, dist/chunks/*.js (scripts/build.mjs checks): the vendor bundles are in dist/vendor.
  const dir = fileURLToPath(new URL('../vendor', import.meta.url));
  const file = join(dir, `${bundle}.cjs`);
  let cachedData;
  try {
    cachedData = readFileSync(join(dir, `${bundle}.cache`));
  } catch {
    cachedData = undefined;
  }
  const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData });
  // For scripts/vendor-cache-writer.mjs, which saves the caches at exit, and for the start-up test.
  (globalThis[Symbol.for('kb.vendor.scripts')] ??= new Map()).set(bundle, script);
  const module = { exports: {} };
  // As Node calls a CommonJS module, with the import() that oclif uses to load kb's commands, hooks and help, and the
  // ES modules handed in.
  script.runInThisContext()(module.exports, createRequire(file), module, file, dir, (specifier) => import(specifier), (name) => {
    if (!provided.has(name)) throw new Error(`the vendor bundle needs ${name}, which no stand-in has handed in`);
    return provided.get(name);
  });
  return module.exports;
}

/** The package `specifier` (one of scripts/vendor.mjs's VENDORED) from `bundle`, which runs on first use. */
export function vendored(bundle, specifier) {
  if (!bundles.has(bundle)) bundles.set(bundle, load(bundle));
  return bundles.get(bundle)[specifier];
}

/** Hands the vendor bundles an ES module their packages import (Ink's stand-in hands in yoga-layout). */
export function provide(name, value) {
  provided.set(name, value);
}
