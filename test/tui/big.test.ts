import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Namespace } from '../../src/api/schemas.js';
import type { TuiClient } from '../../src/tui/types.js';
import { KEY, renderApp, type Screen } from './harness.js';

/** How many table rows are on screen (mounted) now, and how many times a row has rendered in all. */
const rowsDrawn = vi.hoisted(() => ({ mounted: 0, renders: 0 }));

// Each row the table renders goes through this wrapper of the real TableRow, which counts it.
vi.mock(import('../../src/tui/components/TableRow.js'), async (importOriginal) => {
  const real = await importOriginal();
  const { createElement, useLayoutEffect } = await import('react');
  function CountedRow(props: Parameters<typeof real.TableRow>[0]) {
    rowsDrawn.renders++;
    useLayoutEffect(() => {
      rowsDrawn.mounted++;
      return () => {
        rowsDrawn.mounted--;
      };
    }, []);
    return createElement(real.TableRow, props);
  }
  return { ...real, TableRow: CountedRow as unknown as typeof real.TableRow };
});

const COUNT = 100_000;
const key = (i: number) => `ns-${String(i).padStart(6, '0')}`;
const NAMESPACES: readonly Namespace[] = Array.from({ length: COUNT }, (_, i) => ({ key: key(i), description: `namespace number ${i}` }));

/** A deployment with 100,000 namespaces, answered from memory: what is measured is the UI, not the server. */
const client = {
  auth: async () => 'big',
  nsList: async () => NAMESPACES,
} as unknown as TuiClient;

// 24 rows: the header, a title, the column header, the list, two status lines, the key help, one row spare (see appHeight).
const LIST_ROWS = 24 - 1 - 1 - 1 - 1 - 2 - 1;

const screens: Screen[] = [];
afterEach(() => {
  for (const screen of screens.splice(0)) screen.unmount();
  vi.restoreAllMocks();
});

/** The keys of the rows on screen, in order. */
function keysOnScreen(frame: string): string[] {
  return frame
    .split('\n')
    .filter((line) => /^[> ] ns-\d{6}\b/.test(line))
    .map((line) => line.slice(2, 11));
}

describe('kb tui: a list of 100,000 namespaces renders the rows that fit, and no others', () => {
  it('mounts only the visible rows, and renders no more than a screenful for a key, from the first frame to the last row', async () => {
    const toLocaleString = vi.spyOn(Number.prototype, 'toLocaleString');
    const screen = renderApp({ client, rows: 24 });
    screens.push(screen);
    const frame = await screen.waitFor('namespaces (100,000)');
    expect(keysOnScreen(frame)).toEqual(Array.from({ length: LIST_ROWS }, (_, i) => key(i)));
    expect(rowsDrawn.mounted).toBe(LIST_ROWS);
    // The first frame: each visible row once or twice (a render React repeats), never the list.
    expect(rowsDrawn.renders).toBeLessThanOrEqual(2 * LIST_ROWS);

    const steps: [keys: string[], first: number, check: string][] = [
      [[KEY.end], COUNT - LIST_ROWS, '100,000/100,000'],
      [[KEY.home], 0, '1/100,000'],
      [[KEY.pageDown], 1, `${LIST_ROWS + 1}/100,000`],
      [['G'], COUNT - LIST_ROWS, '100,000/100,000'],
    ];
    for (const [keys, first, check] of steps) {
      const before = rowsDrawn.renders;
      await screen.press(...keys);
      expect(screen.frame()).toContain(check);
      expect(keysOnScreen(screen.frame())[0]).toBe(key(first));
      expect(rowsDrawn.mounted).toBe(LIST_ROWS);
      expect(rowsDrawn.renders - before).toBeLessThanOrEqual(2 * LIST_ROWS);
    }

    // A filter that matches 11,111 rows (the namespaces whose number starts with 7), typed a key at a time: still a screenful.
    await screen.press('/');
    const before = rowsDrawn.renders;
    await screen.type('ber 7');
    expect(screen.frame()).toMatch(/namespaces \(11,111\/100,000\)/);
    expect(rowsDrawn.mounted).toBe(LIST_ROWS);
    expect(rowsDrawn.renders - before).toBeLessThanOrEqual(5 * 2 * LIST_ROWS);
    expect(toLocaleString).not.toHaveBeenCalled();
  });
});
