import { describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import { rows, selected, tuiFixture } from './fixture.js';
import { KEY, orgClient, type Screen } from './harness.js';

const tui = tuiFixture('tui-bases');

async function keys(client: KbClient, namespace: string): Promise<{ key: string; description: string | null }[]> {
  return (await client.baseList(namespace)).map(({ key, description }) => ({ key, description }));
}

/** The app opened on namespace "books", which holds bases alpha and beta. */
async function insideKb(org: string): Promise<{ client: KbClient; screen: Screen }> {
  const { client } = await orgClient(tui.server, org);
  await client.baseCreate({ namespace: 'books', key: 'alpha', description: 'First' });
  await client.baseCreate({ namespace: 'books', key: 'beta', description: 'Second' });
  const screen = tui.open({ client });
  await screen.waitFor('books');
  await screen.press(KEY.enter);
  await screen.waitFor('books › bases (2)');
  return { client, screen };
}

describe('kb tui: the bases of a namespace, through base_list, against a real server', () => {
  it('creates a base with n; the list shows it at once, selected, and the server has it', async () => {
    const { client, screen } = await insideKb('bases-create');
    await screen.press('n');
    expect(screen.frame()).toContain('New base in namespace books');
    await screen.type('gamma');
    await screen.press(KEY.tab);
    await screen.type('Third');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('Created base gamma.');
    expect(rows(frame)).toEqual([
      expect.stringMatching(/^ {2}alpha +First$/),
      expect.stringMatching(/^ {2}beta +Second$/),
      expect.stringMatching(/^> gamma +Third$/),
    ]);
    expect(await keys(client, 'books')).toEqual([
      { key: 'alpha', description: 'First' },
      { key: 'beta', description: 'Second' },
      { key: 'gamma', description: 'Third' },
    ]);
  });

  it('deletes a base only after y on a question that names it; any other key cancels', async () => {
    const { client, screen } = await insideKb('bases-delete');
    await screen.press('j', KEY.ctrlD);
    let frame = screen.frame();
    expect(frame).toContain('Delete base beta in namespace books, with all its data?');
    expect(frame).toContain('y confirms, any other key cancels');

    await screen.press('n');
    frame = screen.frame();
    expect(frame).toContain('Cancelled: base beta was not deleted.');
    expect(frame).not.toContain('New base');
    expect(await keys(client, 'books')).toHaveLength(2);

    await screen.press(KEY.ctrlD, KEY.enter);
    expect(screen.frame()).toContain('Cancelled: base beta was not deleted.');
    expect(await keys(client, 'books')).toHaveLength(2);

    await screen.press(KEY.ctrlD, 'y');
    frame = await screen.waitFor('Deleted base beta.');
    expect(rows(frame)).toEqual([expect.stringMatching(/^> alpha +First$/)]);
    expect(frame).toContain('books › bases (1)');
    expect(await keys(client, 'books')).toEqual([{ key: 'alpha', description: 'First' }]);
  });

  it('opens a base with enter, edits and clears its description there, and esc goes back to the updated list', async () => {
    const { client, screen } = await insideKb('bases-detail');
    await screen.press(KEY.enter);
    let frame = screen.frame();
    expect(frame).toContain('books › base alpha');
    expect(frame).toMatch(/^description +First$/m);

    await screen.press('e', KEY.ctrlU);
    await screen.type('Premier');
    await screen.press(KEY.enter);
    frame = await screen.waitFor('Saved the description of base alpha.');
    expect(frame).toMatch(/^description +Premier$/m);
    expect(await keys(client, 'books')).toContainEqual({ key: 'alpha', description: 'Premier' });

    await screen.press('e', KEY.ctrlU, KEY.enter);
    frame = await screen.waitFor('Cleared the description of base alpha.');
    expect(frame).toMatch(/^description +\(none\)$/m);
    expect(await keys(client, 'books')).toContainEqual({ key: 'alpha', description: null });

    await screen.press(KEY.escape);
    frame = screen.frame();
    expect(rows(frame)[0]).toMatch(/^> alpha *$/);
  });

  it('deletes from the base view, back to the list without it', async () => {
    const { client, screen } = await insideKb('bases-detail-delete');
    await screen.press('j', KEY.enter, KEY.ctrlD);
    expect(screen.frame()).toContain('Delete base beta in namespace books, with all its data?');
    await screen.press('y');
    const frame = await screen.waitFor('Deleted base beta.');
    expect(frame).toContain('books › bases (1)');
    expect(selected(frame)).toBe('alpha');
    expect((await keys(client, 'books')).map((base) => base.key)).toEqual(['alpha']);
  });

  it('keys typed while a delete runs wait for it, then apply in order', async () => {
    const { client, screen } = await insideKb('bases-typeahead');
    // Nothing holds the focus while the delete runs: the n waits for it, and nothing after it comes to fetch it.
    await screen.press('j', KEY.ctrlD, 'y', 'n');
    const frame = await screen.waitFor('New base in namespace books');
    expect(frame).toContain('books › bases (1)');
    expect((await keys(client, 'books')).map((base) => base.key)).toEqual(['alpha']);
  });

  it('r refreshes: a base created elsewhere appears, one deleted elsewhere goes', async () => {
    const { client, screen } = await insideKb('bases-refresh');
    await client.baseCreate({ namespace: 'books', key: 'from-elsewhere', description: 'made by a script' });
    await client.baseDelete({ namespace: 'books', base: 'beta' });
    expect(screen.frame()).toContain('beta');
    await screen.press('r');
    const frame = await screen.waitFor((f) => f.includes('from-elsewhere') && !f.includes('beta'));
    expect(rows(frame).map((line) => line.split(/\s+/)[1])).toEqual(['alpha', 'from-elsewhere']);
  });

  it('a base deleted elsewhere: delete answers 404 in place, and the list stops showing it', async () => {
    const { client, screen } = await insideKb('bases-gone');
    await client.baseDelete({ namespace: 'books', base: 'beta' });
    await screen.press('j', KEY.ctrlD, 'y');
    const frame = await screen.waitFor('(404)');
    expect(frame).toMatch(/Error: .*beta.* \(404\)/);
    await screen.waitFor((f) => rows(f).length === 1);
    expect(selected(screen.frame())).toBe('alpha');
  });
});
