import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { complete } from '../../src/tui/history.js';
import { tempDir } from '../helpers/server.js';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-habits');
const { open } = tui;

function keyLine(frame: string): string {
  return frame.split('\n').at(-1) ?? '';
}

describe('kb tui: k9s habits', () => {
  it('starts in the namespace it is given (kb tui NS)', async () => {
    const { client } = await orgClient(tui.server, 'habit-start');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    const screen = open({ client, organization: 'habit-start', namespace: 'docs' });
    const frame = await screen.waitFor('habit-start › docs › bases (1)');
    expect(selected(frame)).toBe('faq');
    await screen.press(KEY.escape);
    await screen.waitFor('habit-start › namespaces (1)');
  });

  it('--readonly offers no create, edit or delete, in the key line, the help or the keys', async () => {
    const { client } = await orgClient(tui.server, 'habit-readonly');
    await client.nsCreate({ key: 'docs', description: 'Docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    const screen = open({ client, organization: 'habit-readonly', readonly: true, columns: 160 });
    let frame = await screen.waitFor('docs');
    for (const hint of ['n new', 'e edit', 'E $EDITOR']) expect(keyLine(frame)).not.toContain(hint);
    await screen.press('n', 'e');
    frame = screen.frame();
    expect(frame).not.toContain('New namespace');
    expect(frame).not.toContain('Description of namespace');
    await screen.press(KEY.enter);
    frame = await screen.waitFor((f) => selected(f) === 'faq');
    expect(keyLine(frame)).not.toContain('ctrl-d delete');
    await screen.press(KEY.ctrlD);
    expect(screen.frame()).not.toContain('Delete base');
    await screen.press('?');
    frame = await screen.waitFor('Help: keys');
    expect(frame).not.toMatch(/new base|delete the base|edit the description/);
    await screen.press(KEY.escape);
    expect((await client.baseList('docs')).map((base) => base.key)).toEqual(['faq']);
  });

  it('filters with a regular expression, ignoring case, and inverts with ! first', async () => {
    const { client } = await orgClient(tui.server, 'habit-filter');
    for (const key of ['alpha', 'alphabet', 'beta', 'gamma']) await client.nsCreate({ key });
    const screen = open({ client, organization: 'habit-filter' });
    await screen.waitFor('gamma');
    await screen.press('/');
    await screen.type('^ALPHA$');
    let frame = await screen.waitFor('(1/4)');
    expect(frame).toContain('1 match');
    await screen.press(KEY.ctrlU);
    await screen.type('!^alp');
    frame = await screen.waitFor('(2/4)');
    expect(selected(frame)).toBe('beta');
    await screen.press(KEY.ctrlU);
    await screen.type('[alp');
    frame = await screen.waitFor('invalid regular expression');
    expect(frame).toContain('(0/4)');
  });

  it(':help opens the help; :profile NAME (and :ctx) switches to another profile in place', async () => {
    const first = await orgClient(tui.server, 'habit-profile-a');
    await first.client.nsCreate({ key: 'from-a' });
    const second = await orgClient(tui.server, 'habit-profile-b');
    await second.client.nsCreate({ key: 'from-b' });
    const asked: string[] = [];
    const screen = open({
      client: first.client,
      deployment: { profile: 'a', url: tui.server.url },
      connect: async (profile) => {
        asked.push(profile);
        return { client: second.client, deployment: { profile, url: tui.server.url } };
      },
    });
    await screen.waitFor('from-a');
    await screen.press(':');
    await screen.type('help');
    await screen.press(KEY.enter);
    await screen.waitFor('Help: keys (namespaces)');
    await screen.press(KEY.escape);
    await screen.press(':');
    await screen.type('ctx b');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('from-b');
    expect(frame.split('\n')[0]).toMatch(/^kb {2}profile b {2}url .* {2}org habit-profile-b$/);
    expect(frame).not.toContain('from-a');
    expect(asked).toEqual(['b']);
  });
});

describe('kb tui: the command line completes with Tab and remembers with Up/Down, across runs', () => {
  it('completes command words, then namespace keys after :ns', () => {
    expect(complete('na', [])).toBe('namespaces ');
    // ns and namespaces agree on n only: nothing to add.
    expect(complete('n', [])).toBeUndefined();
    expect(complete('pro', [])).toBe('profile ');
    expect(complete('he', [])).toBe('help ');
    expect(complete('ns do', ['docs', 'docs-old', 'other'])).toBe('ns docs');
    expect(complete('ns o', ['docs', 'other'])).toBe('ns other');
    expect(complete('ns x', ['docs'])).toBeUndefined();
    expect(complete('zz', [])).toBeUndefined();
  });

  it('Tab completes on screen; Up recalls what ran, also in a later run, from a 0600 file in the config dir', async () => {
    const { client } = await orgClient(tui.server, 'habit-history');
    await client.nsCreate({ key: 'docs-one' });
    await client.nsCreate({ key: 'other' });
    const historyFile = join(tempDir('kb-tui-history-'), 'config', 'tui-history');
    const screen = open({ client, organization: 'habit-history', historyFile });
    await screen.waitFor('other');
    await screen.press(':');
    await screen.type('ns ot');
    await screen.press(KEY.tab);
    expect(screen.frame()).toMatch(/^:ns other/m);
    await screen.press(KEY.enter);
    await screen.waitFor('habit-history › other › bases');
    expect(readFileSync(historyFile, 'utf8')).toBe('ns other\n');
    expect(statSync(historyFile).mode & 0o777).toBe(0o600);
    screen.unmount();

    const later = open({ client, organization: 'habit-history', historyFile });
    await later.waitFor('other');
    await later.press(':', KEY.up);
    expect(later.frame()).toMatch(/^:ns other/m);
    await later.press(KEY.down);
    expect(later.frame()).not.toMatch(/^:ns other/m);
    await later.press(KEY.up, KEY.enter);
    await later.waitFor('habit-history › other › bases');
  });
});

describe('kb tui: y shows the selected row as YAML', () => {
  it('for a namespace on its list, and for a base on its screen, in a view that scrolls; esc goes back', async () => {
    const { client } = await orgClient(tui.server, 'habit-yaml');
    await client.nsCreate({ key: 'docs', description: 'Product docs' });
    const long = Array.from({ length: 150 }, (_, i) => `w${i}`).join(' ');
    await client.baseCreate({ namespace: 'docs', key: 'faq', description: long });
    const screen = open({ client, organization: 'habit-yaml', columns: 40, rows: 12 });
    await screen.waitFor('docs');
    await screen.press('y');
    let frame = await screen.waitFor('namespace docs');
    expect(frame).toMatch(/^key: "docs"$/m);
    expect(frame).toMatch(/^description: "Product docs"$/m);
    await screen.press(KEY.escape);
    await screen.waitFor('habit-yaml › namespaces (1)');

    await screen.press(KEY.enter);
    await screen.waitFor((f) => selected(f) === 'faq');
    await screen.press(KEY.enter);
    await screen.waitFor('base faq');
    await screen.press('y');
    frame = await screen.waitFor('j/k scrolls.');
    expect(frame).toMatch(/^namespace: "docs"$/m);
    expect(frame).toMatch(/^key: "faq"$/m);
    expect(frame).toMatch(/^description: "w0 w1 w2/m);
    await screen.press('G');
    frame = screen.frame();
    expect(frame).toMatch(/w149"$/m);
    expect(frame).not.toMatch(/^key: "faq"$/m);
    await screen.press(KEY.escape);
    await screen.waitFor((f) => f.includes('base faq') && !f.includes('j/k scrolls.'));
  });
});

describe('kb tui: space marks several bases, ctrl-d deletes them after one question', () => {
  it('deletes all those marked, and says which were deleted and which failed', async () => {
    const { client } = await orgClient(tui.server, 'habit-mark');
    await client.nsCreate({ key: 'docs' });
    for (const key of ['b01', 'b02', 'b03', 'b04']) await client.baseCreate({ namespace: 'docs', key });
    const screen = open({ client, organization: 'habit-mark', namespace: 'docs', columns: 120 });
    await screen.waitFor((f) => selected(f) === 'b01');
    // Space marks and moves down: b01 and b02 marked, then b04.
    await screen.press(' ', ' ', 'j', ' ');
    let frame = screen.frame();
    expect(frame).toContain('3 marked');
    expect(frame).toMatch(/^ \*b01$/m);
    expect(frame).toMatch(/^ \*b02$/m);
    expect(frame).toMatch(/^ {2}b03$/m);
    // The selection, marked too.
    expect(frame).toMatch(/^>\*b04$/m);
    // Gone elsewhere before the delete: it fails, the others are deleted.
    await client.baseDelete({ namespace: 'docs', base: 'b02' });
    await screen.press(KEY.ctrlD);
    frame = screen.frame();
    expect(frame).toContain('Delete 3 bases, with all their data: b01, b02, b04?');
    await screen.press('y');
    frame = await screen.waitFor('Deleted 2 of 3 bases');
    expect(frame).toMatch(/Deleted 2 of 3 bases \(b01, b04\); not deleted: b02 \(Base b02 not found/);
    expect((await client.baseList('docs')).map((base) => base.key)).toEqual(['b03']);
  });

  it('a question answered with any other key deletes none of them', async () => {
    const { client } = await orgClient(tui.server, 'habit-mark-cancel');
    await client.nsCreate({ key: 'docs' });
    for (const key of ['b01', 'b02']) await client.baseCreate({ namespace: 'docs', key });
    const screen = open({ client, organization: 'habit-mark-cancel', namespace: 'docs' });
    await screen.waitFor((f) => selected(f) === 'b01');
    await screen.press(' ', ' ', KEY.ctrlD, 'n');
    expect(screen.frame()).toContain('Cancelled: none of the 2 marked bases was deleted.');
    await screen.press(KEY.ctrlD, 'y');
    await screen.waitFor('Deleted 2 bases: b01, b02.');
    expect(await client.baseList('docs')).toEqual([]);
  });
});
