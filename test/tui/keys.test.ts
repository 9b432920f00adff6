import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient, pasted } from './harness.js';

const tui = tuiFixture('tui-keys');
const { open } = tui;

const PASTE_START = '\u001B[200~';
const PASTE_END = '\u001B[201~';

/** ns01 ... ns30, each with a description. */
async function thirtyNamespaces(org: string): Promise<KbClient> {
  const { client } = await orgClient(tui.server, org);
  for (let i = 1; i <= 30; i++) await client.nsCreate({ key: `ns${String(i).padStart(2, '0')}`, description: `number ${i}` });
  return client;
}

/** Waits until the app has drawn what the keys did and nothing more comes: a few quiet turns after the last frame. */
async function settled(screen: ReturnType<typeof open>): Promise<string> {
  let last = '';
  let quiet = 0;
  while (quiet < 20) {
    await sleep(5);
    const now = screen.frame();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

describe('kb tui: every keystroke counts', () => {
  it('moves three rows on jjj read at once, and one net on j, j, k sent without waiting', async () => {
    const screen = open({ client: await thirtyNamespaces('burst'), organization: 'burst' });
    await screen.waitFor((f) => selected(f) === 'ns01');
    screen.burst('jjj');
    await screen.waitFor((f) => selected(f) === 'ns04', 'jjj to move three rows');
    screen.burst('j', 'j', 'k');
    await screen.waitFor((f) => selected(f) === 'ns05', 'j j k to move one row');
    expect(selected(await settled(screen))).toBe('ns05');
  });

  it('moves twenty rows on twenty j sent at once, as separate writes and as one', async () => {
    const screen = open({ client: await thirtyNamespaces('twenty'), organization: 'twenty' });
    await screen.waitFor((f) => selected(f) === 'ns01');
    screen.burst(...Array.from({ length: 20 }, () => 'j'));
    await screen.waitFor((f) => selected(f) === 'ns21', 'twenty separate j');
    screen.burst('k'.repeat(20));
    await screen.waitFor((f) => selected(f) === 'ns01', 'twenty k in one write');
    expect(selected(await settled(screen))).toBe('ns01');
  });

  it('runs nothing for a bracketed paste on a list, also one split across reads', async () => {
    const { client } = await orgClient(tui.server, 'paste-list');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'base-01' });
    await client.baseCreate({ namespace: 'docs', key: 'base-02' });
    const screen = open({ client, organization: 'paste-list' });
    await screen.waitFor('docs');
    await screen.press(KEY.enter);
    await screen.waitFor((f) => selected(f) === 'base-01');
    screen.burst(pasted('dd'));
    screen.burst(PASTE_START, 'j', 'dy', `q${PASTE_END}`);
    // A key after the pastes shows they are read: it moves, and no question was asked.
    screen.burst('j');
    const frame = await screen.waitFor((f) => selected(f) === 'base-02');
    expect(frame).not.toContain('Delete base');
    expect(selected(await settled(screen))).toBe('base-02');
    expect((await client.baseList('docs')).map((base) => base.key)).toEqual(['base-01', 'base-02']);
  });

  it('a form takes a bracketed paste whole, in the field that has the focus', async () => {
    const { client } = await orgClient(tui.server, 'paste-form');
    const screen = open({ client, organization: 'paste-form' });
    await screen.waitFor('No namespaces yet');
    await screen.press('n');
    await screen.waitFor('New namespace');
    screen.burst(pasted('docs'), KEY.tab, pasted('Product\ndocs, for q and'), KEY.enter);
    await screen.waitFor('Created namespace docs.');
    expect(await client.nsList()).toEqual([{ key: 'docs', description: 'Product docs, for q and' }]);
  });
});
