import { setFlagsFromString } from 'node:v8';
import type * as Tui from './index.js';

/**
 * Loads the terminal UI (Ink, React and yoga-layout, Ink's layout engine in WebAssembly), for `kb tui` to run.
 *
 * yoga-layout reads its WebAssembly, which it carries as a data: URL, through fetch() whenever there is a global
 * fetch. Node's fetch loads Node's own copy of undici on its first call (kb's client bundles its own and never calls
 * it): some 30 to 60 ms of the first screen, spent on reading a string yoga-layout decodes just as well by itself
 * when there is no fetch. So fetch is hidden while the UI's modules load, and put back as it was.
 */
export async function loadTui(): Promise<typeof Tui> {
  // React and Ink come from the TUI's vendor bundle, compiled from its code cache (scripts/vendor.mjs), which V8 takes
  // only under the flags it was made with: it is compiled before --liftoff-only is set. (Its modules run later.)
  await import('react');
  baselineWasmOnly();
  const fetch = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (fetch?.configurable !== true) return import('./index.js');
  Reflect.deleteProperty(globalThis, 'fetch');
  try {
    return await import('./index.js');
  } finally {
    Object.defineProperty(globalThis, 'fetch', fetch);
  }
}

/**
 * yoga-layout, like undici's HTTP parser, is WebAssembly. V8 would optimise its hot functions on background threads,
 * which on a small machine compete with drawing the first screen for the CPU, and which a process waits for at exit.
 * The baseline compiler alone (`--liftoff-only`) is plenty for both: set here for the rest of the process, before Ink
 * loads, and marked so that the client's HTTP parser leaves it set (scripts/vendor.mjs, baselineLlhttp).
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
  Reflect.set(globalThis, Symbol.for('kb.wasm.baselineOnly'), true);
}
