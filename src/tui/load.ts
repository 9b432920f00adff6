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
  const fetch = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (fetch?.configurable !== true) return import('./index.js');
  Reflect.deleteProperty(globalThis, 'fetch');
  try {
    return await import('./index.js');
  } finally {
    Object.defineProperty(globalThis, 'fetch', fetch);
  }
}
