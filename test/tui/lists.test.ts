import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { KbClient } from '../../src/client/client.js';
import { helpSections } from '../../src/tui/keymap.js';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-lists');
const { open } = tui;

/** The rows of the table on screen, as their keys, in order. */
function keys(frame: string): string[] {
  return frame
    .split('\n')
    .filter((line) => /^[> ] [A-Za-z0-9_-]{3,63}( |$)/.test(line) && !line.includes('DESCRIPTION'))
    .map((line) => line.slice(2).split(/\s+/)[0] ?? '');
}

function header(frame: string): string | undefined {
  return frame.split('\n').find((line) => line.includes('KEY') && line.includes('DESCRIPTION'));
}

/** alpha, beta, delta, gamma; delta without a description. */
async function fourNamespaces(org: string): Promise<KbClient> {
  const { client } = await orgClient(tui.server, org);
  await client.nsCreate({ key: 'alpha', description: 'first letter' });
  await client.nsCreate({ key: 'beta', description: 'second' });
  await client.nsCreate({ key: 'gamma', description: 'third' });
  await client.nsCreate({ key: 'delta' });
  return client;
}

describe('kb tui: a list has column headers, and sorts with s and S', () => {
  it('s reverses key order and S sorts by description, the header marks the order, the selection stays on its key', async () => {
    const screen = open({ client: await fourNamespaces('sort'), organization: 'sort' });
    let frame = await screen.waitFor('gamma');
    expect(header(frame)).toMatch(/^ {2}KEY↑ +DESCRIPTION$/);
    expect(keys(frame)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    await screen.press('j');

    await screen.press('s');
    frame = screen.frame();
    expect(header(frame)).toMatch(/^ {2}KEY↓ +DESCRIPTION$/);
    expect(keys(frame)).toEqual(['gamma', 'delta', 'beta', 'alpha']);
    expect(selected(frame)).toBe('beta');

    await screen.press('S');
    frame = screen.frame();
    expect(header(frame)).toMatch(/^ {2}KEY +DESCRIPTION↑$/);
    // By description, those without one last.
    expect(keys(frame)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(selected(frame)).toBe('beta');

    await screen.press('S');
    frame = screen.frame();
    expect(header(frame)).toMatch(/^ {2}KEY +DESCRIPTION↓$/);
    expect(keys(frame)).toEqual(['gamma', 'beta', 'alpha', 'delta']);

    await screen.press('s');
    frame = screen.frame();
    expect(header(frame)).toMatch(/^ {2}KEY↑ +DESCRIPTION$/);
    expect(keys(frame)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(selected(frame)).toBe('beta');
    // g and G go to the ends of the list as it is sorted.
    await screen.press('s', 'g');
    expect(selected(screen.frame())).toBe('gamma');
  });

  it('the title counts the rows, and while filtered the matches of all: (2/4)', async () => {
    const screen = open({ client: await fourNamespaces('counts'), organization: 'counts' });
    await screen.waitFor('counts › namespaces (4)');
    await screen.press('/');
    await screen.type('ta');
    expect(screen.frame().split('\n')[1]).toMatch(/^counts › namespaces \(2\/4\) {2}filter "ta" +1\/2$/);
  });
});

describe('kb tui: wide text is measured by display width, cut with "…", and never wraps', () => {
  const wide = '日本語のドキュメントと説明文がここに長く続きます。もっと長く、もっと長く続きます';
  const emoji = '👩‍👩‍👧 family 🇫🇷 flags 🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉 and a tail that is long';
  const combining = 'e\u0301cole cafe\u0301 re\u0301sume\u0301 nai\u0308ve: combining marks that take no column at all';
  const longKey = `k${'x'.repeat(61)}z`;

  /** What a cell of `width` columns should hold: whole graphemes while they fit in width - 1, then "…". */
  function expectedCut(text: string, width: number): string {
    if (stringWidth(text) <= width) return text;
    let kept = '';
    for (const { segment } of new Intl.Segmenter().segment(text)) {
      if (stringWidth(kept + segment) > width - 1) break;
      kept += segment;
    }
    return `${kept}…`;
  }

  it('at 60 columns: every line fits, the columns line up, and each cell is cut where its width ends', async () => {
    const { client } = await orgClient(tui.server, 'wide');
    await client.nsCreate({ key: 'combining', description: combining });
    await client.nsCreate({ key: 'emoji', description: emoji });
    await client.nsCreate({ key: longKey, description: 'the key is longer than its column' });
    await client.nsCreate({ key: 'wide', description: wide });
    const screen = open({ client, organization: 'wide', columns: 60, rows: 20 });
    const frame = await screen.waitFor('wide  ');
    const lines = frame.split('\n');
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(60);

    const head = header(frame) ?? '';
    const at = head.indexOf('DESCRIPTION');
    // The key column is at most 45% of the width: the 63-character key is cut to it.
    expect(at).toBe(2 + Math.floor(58 * 0.45) + 2);
    const rows = lines.filter((line) => /^[> ] [a-z]/.test(line));
    expect(rows).toHaveLength(4);
    const byKey = new Map(rows.map((line) => [line.slice(2, at).trim(), line.slice(at)]));
    // A key too long for its column is elided in the middle: keys differ at both ends.
    const keyWidth = at - 4;
    const elided = `${longKey.slice(0, Math.ceil((keyWidth - 1) / 2))}…${longKey.slice(-Math.floor((keyWidth - 1) / 2))}`;
    expect(elided).toHaveLength(keyWidth);
    expect([...byKey.keys()]).toEqual(['combining', 'emoji', elided, 'wide']);
    for (const line of rows) expect(line.slice(at - 2, at)).toBe('  ');
    expect(byKey.get('wide')).toBe(expectedCut(wide, 60 - at));
    expect(byKey.get('emoji')).toBe(expectedCut(emoji, 60 - at));
    expect(byKey.get('combining')).toBe(expectedCut(combining, 60 - at));
    expect(byKey.get('wide')?.endsWith('…')).toBe(true);
  });

  it('reflows at once when the terminal narrows, still cutting rather than wrapping', async () => {
    const { client } = await orgClient(tui.server, 'reflow');
    await client.nsCreate({ key: 'wide', description: wide });
    const screen = open({ client, organization: 'reflow', columns: 100, rows: 20 });
    await screen.waitFor('wide  ');
    screen.resize(41, 20);
    const frame = await screen.waitFor((f) => f.split('\n').every((line) => stringWidth(line) <= 41), 'every line within 41 columns');
    const row = frame.split('\n').find((line) => line.startsWith('> wide')) ?? '';
    expect(row).toBe(`> wide  ${expectedCut(wide, 41 - 8)}`);
    expect(frame.split('\n').filter((line) => line.includes('日本'))).toHaveLength(1);
  });
});

describe('kb tui: lists refresh by themselves while idle', () => {
  it('picks up a namespace created elsewhere, keeps the selection on the same key, and says how fresh the list is', async () => {
    const client = await fourNamespaces('live');
    const screen = open({ client, organization: 'live', refreshSeconds: 1 });
    await screen.waitFor('gamma');
    // The first row is selected, untouched: a row that comes in above it does not take the selection.
    expect(selected(screen.frame())).toBe('alpha');
    await client.nsCreate({ key: 'aardvark', description: 'made by a script' });
    let frame = await screen.waitFor('aardvark');
    expect(keys(frame)).toEqual(['aardvark', 'alpha', 'beta', 'delta', 'gamma']);
    expect(selected(frame)).toBe('alpha');
    await screen.press('j');
    await client.nsCreate({ key: 'able', description: 'another' });
    frame = await screen.waitFor('able');
    expect(selected(frame)).toBe('beta');
    expect(frame).toContain('live › namespaces (6)');
    await screen.waitFor(/updated (just now|\d+s ago)/);
  });

  it('says the list was updated just now on the first draw, never a count of seconds that reads as stale', async () => {
    const client = await fourNamespaces('fresh-first');
    const screen = open({ client, organization: 'fresh-first', refreshSeconds: 5 });
    const frame = await screen.waitFor((f) => f.includes('gamma') && f.includes('updated'));
    expect(frame).toMatch(/^ +updated just now$/m);
    expect(frame).not.toMatch(/\ds ago/);
  });

  it('shows a server that went away in place, keeps the list, and recovers by itself when it returns', async () => {
    const { client: direct, token } = await orgClient(tui.server, 'outage');
    await direct.nsCreate({ key: 'docs', description: 'Docs' });
    const proxy = await tui.proxy();
    const screen = open({ client: new KbClient({ url: proxy.url, token, retries: 0 }), organization: 'outage', refreshSeconds: 1 });
    await screen.waitFor('> docs');

    proxy.mode = 'down';
    let frame = await screen.waitFor('Error: cannot reach');
    expect(frame).toMatch(/^> docs +Docs$/m);

    await direct.nsCreate({ key: 'later', description: 'made during the outage' });
    proxy.mode = 'forward';
    frame = await screen.waitFor((f) => f.includes('later') && !f.includes('Error:'));
    expect(keys(frame)).toEqual(['docs', 'later']);
  });

  it('does not refresh while a form is open, and starts again when it closes', async () => {
    const client = await fourNamespaces('busy');
    const screen = open({ client, organization: 'busy', refreshSeconds: 1 });
    await screen.waitFor('gamma');
    await screen.press('n');
    // No load under way (the status line says when the last one landed); then a change elsewhere, and time for two refreshes.
    await screen.waitFor(/updated (just now|\d+s ago)/);
    await client.nsCreate({ key: 'zebra' });
    await sleep(2500);
    await screen.press(KEY.escape);
    expect(screen.frame()).not.toContain('zebra');
    await screen.waitFor('zebra');
  });

  it('with --refresh 0 it never refreshes by itself; r still does', async () => {
    const client = await fourNamespaces('manual');
    const screen = open({ client, organization: 'manual', refreshSeconds: 0 });
    await screen.waitFor('gamma');
    await client.nsCreate({ key: 'zebra' });
    await sleep(2500);
    expect(screen.frame()).not.toContain('zebra');
    await screen.press('r');
    await screen.waitFor('zebra');
  });
});

describe('kb tui: help lists the keys of the screen it was asked on, in columns that never run together', () => {
  it('on the namespaces, at 60 columns: every key and what it does, three spaces apart at least', async () => {
    const screen = open({ client: await fourNamespaces('help-ns'), organization: 'help-ns', columns: 60, rows: 60 });
    await screen.waitFor('gamma');
    await screen.press('?');
    const frame = screen.frame();
    expect(frame).toContain('Help: keys (namespaces)');
    for (const line of frame.split('\n')) expect(stringWidth(line), line).toBeLessThanOrEqual(60);
    expect(frame).toMatch(/^ {2}left\/right, Home\/End {3}move in the field$/m);
    for (const keys of ['s', 'S', 'E', 'c', ':', '/', 'PgUp/PgDn', 'g/Home, G/End']) {
      expect(frame).toMatch(new RegExp(`^ {2}${keys.replace(/[/.*+?^${}()|[\]\\]/g, '\\$&')} {3,}\\S`, 'm'));
    }
    expect(frame).not.toContain('open a base by key');
  });

  for (const columns of [60, 120]) {
    it(`at ${columns} columns: every key of the keymap for the screen, in two columns that line up, nothing cut`, async () => {
      const screen = open({ client: await fourNamespaces(`help-${columns}`), organization: `help-${columns}`, columns, rows: 80 });
      await screen.waitFor('gamma');
      await screen.press('?');
      const lines = screen.lines();
      for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
      // An entry: two spaces, its keys, three spaces at least, what they do; what does not fit goes on under it.
      const entries: [string, string][] = [];
      const starts = new Set<number>();
      for (const line of lines) {
        const first = /^ {2}(\S(?:.*?\S)?) {3,}(\S.*)$/.exec(line);
        const more = /^ {5,}(\S.*)$/.exec(line);
        if (more?.[1] !== undefined && entries.length > 0) {
          starts.add(line.length - more[1].length);
          const last = entries.at(-1) as [string, string];
          last[1] += ` ${more[1]}`;
        } else if (first?.[1] !== undefined && first[2] !== undefined) {
          starts.add(line.length - first[2].length);
          entries.push([first[1], first[2]]);
        }
      }
      expect(entries).toEqual(helpSections('namespaces').flatMap((section) => section.keys.map(([keys, does]) => [keys, does])));
      expect([...starts]).toHaveLength(1);
      expect(screen.frame()).not.toContain('…');
    });
  }

  it('on a base: its own keys (back, edit, delete), not those of a list', async () => {
    const { client } = await orgClient(tui.server, 'help-base');
    await client.baseCreate({ namespace: 'books', key: 'alpha' });
    const screen = open({ client, organization: 'help-base', rows: 50 });
    await screen.waitFor('books');
    await screen.press(KEY.enter);
    await screen.waitFor('> alpha');
    await screen.press('?');
    expect(screen.frame()).toMatch(/^ {2}o +open a base by key/m);
    await screen.press(KEY.escape, KEY.enter, '?');
    const frame = screen.frame();
    expect(frame).toContain('Help: keys (a base)');
    expect(frame).toMatch(/^ {2}esc +back to the list$/m);
    expect(frame).toMatch(/^ {2}ctrl-d +delete the base/m);
    expect(frame).not.toContain('sort by key');
  });
});
