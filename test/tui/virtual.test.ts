import { beforeAll, describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import { tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const COUNT = 10_000;
const key = (i: number) => `ns-${String(i).padStart(5, '0')}`;

const tui = tuiFixture('tui-virtual');
let client: KbClient;
beforeAll(async () => {
  const org = await orgClient(tui.server, 'ten-thousand');
  client = org.client;
  // Through the store, in one batch (one transaction): 10,000 requests would take most of a minute.
  await Promise.all(Array.from({ length: COUNT }, (_, i) => tui.server.store.nsCreate(org.orgId, { key: key(i), description: `namespace number ${i}` })));
});

/** The rows of the list on screen, as [key, selected]. */
function rows(frame: string): [string, boolean][] {
  return frame
    .split('\n')
    .filter((line) => /^[> ] ns-\d{5}\b/.test(line))
    .map((line) => [line.slice(2, 10), line.startsWith('> ')]);
}

function selected(frame: string): string | undefined {
  return rows(frame).find(([, isSelected]) => isSelected)?.[0];
}

// 24 rows: the header, a title, the column header, the list, two status lines, the key help, one row spare (see appHeight).
const LIST_ROWS = 24 - 1 - 1 - 1 - 1 - 2 - 1;

describe('kb tui: a list of 10,000 namespaces renders only the rows that fit', () => {
  it('draws exactly the rows that fit, and keeps the selection in view from the first row to the last', async () => {
    const screen = tui.open({ client, rows: 24 });
    let frame = await screen.waitFor('namespaces (10,000)');
    expect(frame.split('\n')).toHaveLength(23);
    expect(rows(frame).map(([k]) => k)).toEqual(Array.from({ length: LIST_ROWS }, (_, i) => key(i)));
    expect(selected(frame)).toBe(key(0));

    // G (or End) goes to the last row: the window follows, still no more rows than fit.
    await screen.press('G');
    frame = screen.frame();
    expect(rows(frame).map(([k]) => k)).toEqual(Array.from({ length: LIST_ROWS }, (_, i) => key(COUNT - LIST_ROWS + i)));
    expect(selected(frame)).toBe(key(COUNT - 1));
    expect(frame).toContain(`10,000/10,000`);

    // Up within the window does not scroll it.
    await screen.press('k', 'k', 'k');
    expect(rows(screen.frame())[0]?.[0]).toBe(key(COUNT - LIST_ROWS));
    expect(selected(screen.frame())).toBe(key(COUNT - 4));

    await screen.press(KEY.home);
    expect(selected(screen.frame())).toBe(key(0));
    await screen.press(KEY.end);
    expect(selected(screen.frame())).toBe(key(COUNT - 1));
    await screen.press('g');

    // Many j: the selection walks past the bottom edge and the window scrolls one row at a time.
    for (let i = 0; i < 30; i++) await screen.press('j');
    frame = screen.frame();
    expect(selected(frame)).toBe(key(30));
    expect(rows(frame)).toHaveLength(LIST_ROWS);
    expect(rows(frame).at(-1)).toEqual([key(30), true]);

    await screen.press(KEY.pageDown);
    expect(selected(screen.frame())).toBe(key(30 + LIST_ROWS));
    expect(rows(screen.frame())).toHaveLength(LIST_ROWS);
    await screen.press(KEY.pageUp);
    expect(selected(screen.frame())).toBe(key(30));
    expect(rows(screen.frame())[0]?.[0]).toBe(key(30));
  });

  it('keeps the selection in view when the terminal shrinks, and shows more rows when it grows', async () => {
    const screen = tui.open({ client, rows: 24 });
    await screen.waitFor('namespaces (10,000)');
    await screen.press('G');
    screen.resize(100, 10);
    let frame = await screen.waitFor((f) => f.split('\n').length === 9);
    expect(rows(frame)).toHaveLength(10 - 1 - 1 - 1 - 1 - 2 - 1);
    expect(selected(frame)).toBe(key(COUNT - 1));

    screen.resize(100, 50);
    frame = await screen.waitFor((f) => f.split('\n').length === 49);
    expect(rows(frame)).toHaveLength(50 - 7);
    expect(selected(frame)).toBe(key(COUNT - 1));
  });

  it('filters 10,000 rows live and draws only the matches that fit', async () => {
    const screen = tui.open({ client, rows: 24 });
    await screen.waitFor('namespaces (10,000)');
    await screen.press('/');
    await screen.type('number 99');
    // "number 99" matches 99 and 990-999 and 9900-9999: 1 + 10 + 100.
    let frame = screen.frame();
    expect(frame).toContain('111 matches');
    expect(rows(frame)).toHaveLength(LIST_ROWS);
    await screen.press(KEY.enter, 'G');
    frame = screen.frame();
    expect(selected(frame)).toBe(key(9999));
    expect(frame).toContain('111/111');
  });
});
