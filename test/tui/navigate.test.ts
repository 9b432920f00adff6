import { describe, expect, it, vi } from 'vitest';
import { KbClient } from '../../src/client/client.js';
import { rows, selected, tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-navigate');
const { open } = tui;

/** An organization with namespaces alpha, beta, delta, gamma (listed by key) and a base in beta. */
async function fourNamespaces(org: string) {
  const { client } = await orgClient(tui.server, org);
  await client.nsCreate({ key: 'alpha', description: 'first letter' });
  await client.nsCreate({ key: 'beta', description: 'second' });
  await client.nsCreate({ key: 'gamma', description: 'third' });
  await client.nsCreate({ key: 'delta' });
  await client.baseCreate({ namespace: 'beta', key: 'beta-base', description: 'lives in beta' });
  return client;
}

describe('kb tui: browsing namespaces against a real server', () => {
  it('shows profile, URL and organization on the top line, the namespaces with their descriptions, and the key help', async () => {
    const client = await fourNamespaces('browse-header');
    const screen = open({ client, deployment: { profile: 'staging', url: tui.server.url } });

    const frame = await screen.waitFor((f) => f.includes('org browse-header') && f.includes('gamma'));
    const lines = frame.split('\n');
    expect(lines[0]).toBe(`kb  profile staging  url ${tui.server.url}  org browse-header`);
    expect(lines[1]).toMatch(/^browse-header › namespaces \(4\) +1\/4$/);
    expect(lines[2]).toMatch(/^ {2}KEY↑ +DESCRIPTION$/);
    expect(rows(frame)).toEqual([
      expect.stringMatching(/^> alpha +first letter$/),
      expect.stringMatching(/^ {2}beta +second$/),
      expect.stringMatching(/^ {2}delta *$/),
      expect.stringMatching(/^ {2}gamma +third$/),
    ]);
    // At 100 columns the key help keeps what matters most: j/k (move) and r (refresh) make room for s/S, E, c and :.
    expect(lines.at(-1)).toBe('enter open  n new  e edit  E $EDITOR  / filter  s/S sort  c copy  : command  ? help  q quit');
  });

  it('moves with j/k and the arrows, jumps with G and g, and keeps the selection marked by ">"', async () => {
    const screen = open({ client: await fourNamespaces('browse-move') });
    await screen.waitFor('gamma');
    expect(selected(screen.frame())).toBe('alpha');
    await screen.press('j');
    expect(selected(screen.frame())).toBe('beta');
    await screen.press(KEY.down);
    expect(selected(screen.frame())).toBe('delta');
    await screen.press('k');
    expect(selected(screen.frame())).toBe('beta');
    await screen.press(KEY.up, KEY.up);
    expect(selected(screen.frame())).toBe('alpha');
    await screen.press('G');
    expect(selected(screen.frame())).toBe('gamma');
    expect(screen.frame()).toContain('4/4');
    await screen.press('j');
    expect(selected(screen.frame())).toBe('gamma');
    await screen.press('g');
    expect(selected(screen.frame())).toBe('alpha');
  });

  it('opens a namespace with enter, lists its bases, and esc comes back with the same namespace selected', async () => {
    const screen = open({ client: await fourNamespaces('browse-open') });
    await screen.waitFor('gamma');
    await screen.press('j', KEY.enter);
    const inside = await screen.waitFor('beta-base');
    expect(inside.split('\n')[1]).toMatch(/^browse-open › beta › bases \(1\)/);
    expect(rows(inside)).toEqual([expect.stringMatching(/^> beta-base +lives in beta$/)]);
    expect(inside.split('\n').at(-1)).toContain('esc back');

    await screen.press(KEY.escape);
    const back = await screen.waitFor((f) => /^browse-open › namespaces/.test(f.split('\n')[1] ?? ''));
    expect(selected(back)).toBe('beta');
  });

  it('a namespace whose bases are slow to come holds up no other: esc, and the next one opens at once', async () => {
    const { client: direct, token } = await orgClient(tui.server, 'browse-slow');
    await direct.nsCreate({ key: 'big', description: 'slow to list' });
    await direct.nsCreate({ key: 'docs' });
    await direct.baseCreate({ namespace: 'docs', key: 'guide', description: 'in docs' });
    const proxy = await tui.proxy({ hold: (url) => url.includes('base_list') && url.includes('namespace=big') });
    const screen = open({ client: new KbClient({ url: proxy.url, token, retries: 0 }), deployment: { profile: 'work', url: proxy.url } });
    await screen.waitFor('> big');
    await screen.press(KEY.enter);
    await vi.waitFor(() => expect(proxy.held).toBe(1));
    await screen.press(KEY.escape);
    await screen.waitFor((f) => /^browse-slow › namespaces/.test(f.split('\n')[1] ?? ''));
    await screen.press('j', KEY.enter);
    // On a connection of its own: behind big's unanswered list, it would wait for it.
    const inside = await screen.waitFor('guide');
    expect(rows(inside)).toEqual([expect.stringMatching(/^> guide +in docs$/)]);
    proxy.release();
  });

  it('filters live with /, keeps the filter with enter (first match selected), and esc clears it', async () => {
    const screen = open({ client: await fourNamespaces('browse-filter') });
    await screen.waitFor('gamma');
    await screen.press('G');
    expect(selected(screen.frame())).toBe('gamma');

    await screen.press('/');
    await screen.type('t');
    // "t" is in beta, delta, and in the descriptions of alpha ("first letter") and gamma ("third").
    expect(rows(screen.frame())).toHaveLength(4);
    await screen.type('a');
    let frame = screen.frame();
    expect(rows(frame).map((line) => line.split(/\s+/)[1])).toEqual(['beta', 'delta']);
    expect(frame).toContain('/ta');
    expect(frame).toContain('2 matches (regex, ! first inverts): enter keeps the filter, esc clears it');

    await screen.press(KEY.enter);
    frame = screen.frame();
    expect(frame).toContain('namespaces (2/4)  filter "ta"');
    expect(selected(frame)).toBe('beta');
    await screen.press('j');
    expect(selected(screen.frame())).toBe('delta');

    // Back in the filter, esc clears it; the selected namespace stays selected.
    await screen.press('/', KEY.escape);
    frame = screen.frame();
    expect(frame).not.toContain('filter "');
    expect(rows(frame)).toHaveLength(4);
    expect(selected(frame)).toBe('delta');

    // A filter matches descriptions too; esc on the list clears a kept filter before it goes back.
    await screen.press('/');
    await screen.type('third');
    await screen.press(KEY.enter);
    expect(rows(screen.frame()).map((line) => line.split(/\s+/)[1])).toEqual(['gamma']);
    await screen.press(KEY.escape);
    expect(rows(screen.frame())).toHaveLength(4);
    expect(selected(screen.frame())).toBe('gamma');

    await screen.press('/');
    await screen.type('nothing-like-it');
    expect(screen.frame()).toContain('No namespace matches "nothing-like-it": esc clears the filter.');
  });

  it('shows the full help with ?, which lists G/End, and esc closes it', async () => {
    const screen = open({ client: await fourNamespaces('browse-help'), rows: 40 });
    await screen.waitFor('gamma');
    await screen.press('?');
    const help = screen.frame();
    expect(help).toContain('Help: keys');
    expect(help).toMatch(/g\/Home, G\/End +go to the first \/ the last row/);
    expect(help).toMatch(/ctrl-d +delete the namespace \(asks first/);
    expect(help).toMatch(/shift-tab +previous field/);
    await screen.press(KEY.escape);
    expect(screen.frame()).toContain('namespaces (4)');
  });

  it('reflows when the terminal is resized: fewer rows, narrower lines, key help still on the last line', async () => {
    const screen = open({ client: await fourNamespaces('browse-resize'), columns: 100, rows: 24 });
    await screen.waitFor('gamma');
    expect(screen.lines()).toHaveLength(23);

    screen.resize(50, 8);
    const frame = await screen.waitFor((f) => f.split('\n').length === 7);
    const lines = frame.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(50);
    // The header, the title, the column header, one row, two status lines, the key help.
    expect(rows(frame)).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/\? help {2}q quit$/);
    await screen.press('G');
    expect(selected(screen.frame())).toBe('gamma');

    screen.resize(100, 24);
    await screen.waitFor((f) => f.split('\n').length === 23);
    expect(rows(screen.frame())).toHaveLength(4);
  });
});
