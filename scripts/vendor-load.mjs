// Runs dist/vendor/vendor.cjs (scripts/vendor.mjs), the packages every command loads, compiled from the V8 code cache
// that the build made (scripts/vendor-cache.mjs). Bundled into kb's chunks: kb's modules import these packages through
// stand-ins that call `vendored`.
//
// V8 checks a code cache against the source and its own version and flags, and refuses one that does not match
// (another Node, a spoilt file): the script is then compiled from source, which costs time and nothing else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

let vendor;
/** ES modules that the bundle's packages import, handed in by kb's stand-ins (scripts/vendor.mjs, PROVIDED). */
const provided = new Map();

function load() {
  // This module is bundled into a chunk, dist/chunks/*.js (scripts/build.mjs checks): the vendor bundle is in dist/vendor.
  const dir = fileURLToPath(new URL('../vendor', import.meta.url));
  const file = join(dir, 'vendor.cjs');
  let cachedData;
  try {
    cachedData = readFileSync(join(dir, 'vendor.cache'));
  } catch {
    cachedData = undefined;
  }
  const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData });
  // For scripts/vendor-cache-writer.mjs, which saves the cache at exit, and for the start-up test.
  globalThis[Symbol.for('kb.vendor.script')] = script;
  const module = { exports: {} };
  // As Node calls a CommonJS module, with the import() that oclif uses to load kb's commands, hooks and help, and the
  // ES modules handed in.
  script.runInThisContext()(module.exports, createRequire(file), module, file, dir, (specifier) => import(specifier), (name) => {
    if (!provided.has(name)) throw new Error(`the vendor bundle needs ${name}, which no stand-in has handed in`);
    return provided.get(name);
  });
  return module.exports;
}

/** The package `specifier` (one of scripts/vendor.mjs's VENDORED), run on first use. */
export function vendored(specifier) {
  vendor ??= load();
  return vendor[specifier];
}

/** Hands the vendor bundle an ES module its packages import (Ink's stand-in hands in yoga-layout). */
export function provide(name, value) {
  provided.set(name, value);
}
