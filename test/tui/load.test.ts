import { expect, it, vi } from 'vitest';
import { loadTui } from '../../src/tui/load.js';

// Its own file, so that Ink and yoga-layout load here for the first time (each test file runs in a process of its own):
// nothing else may import them first.
it('loads Ink without calling fetch (yoga-layout would load Node\'s own undici for it), and puts fetch back', async () => {
  const fetch = vi.fn(globalThis.fetch);
  vi.stubGlobal('fetch', fetch);
  try {
    const { runTui } = await loadTui();
    expect(runTui).toBeTypeOf('function');
    expect(fetch).not.toHaveBeenCalled();
    expect(globalThis.fetch).toBe(fetch);
  } finally {
    vi.unstubAllGlobals();
  }
});
