import { describe, expect, it } from 'vitest';
import { KEY_RULE } from '../../src/api/schemas.js';
import { tuiFixture } from './fixture.js';
import { KEY, orgClient, pasted, type AppOptions } from './harness.js';

const tui = tuiFixture('tui-forms');

async function open(org: string, setup?: (client: Awaited<ReturnType<typeof orgClient>>['client']) => Promise<unknown>, options: Partial<AppOptions> = {}) {
  const { client } = await orgClient(tui.server, org);
  await setup?.(client);
  const screen = tui.open({ client, ...options });
  await screen.waitFor((f) => /namespaces \(\d+\)/.test(f));
  return { client, screen };
}

/** The line of a form field: "> key   [value   ]" when it has the focus. */
function field(frame: string, label: string): string | undefined {
  return frame.split('\n').find((line) => new RegExp(`^[> ] ${label}\\s+\\[`).test(line));
}

/** The frame as one line, so a check does not depend on where the text wraps. */
function flat(frame: string): string {
  return frame.replace(/\s+/g, ' ');
}

function value(frame: string, label: string): string | undefined {
  return /\[(.*)\]/.exec(field(frame, label) ?? '')?.[1]?.trimEnd();
}

describe('kb tui: forms that create and edit, against a real server', () => {
  it('creates a namespace: key, enter, description, enter; the list shows it selected, and the server has it', async () => {
    const { client, screen } = await open('form-create', (c) => c.nsCreate({ key: 'zulu' }));
    await screen.press('n');
    let frame = screen.frame();
    expect(frame).toContain('New namespace');
    expect(field(frame, 'key')).toMatch(/^> key/);
    expect(flat(frame)).toContain(`empty: a generated key (ns_<uuid>) is shown to accept. ${KEY_RULE}`);

    await screen.type('docs');
    await screen.press(KEY.enter);
    frame = screen.frame();
    expect(field(frame, 'description')).toMatch(/^> description/);
    expect(value(frame, 'key')).toBe('docs');
    await screen.type('Product docs');
    await screen.press(KEY.enter);

    frame = await screen.waitFor('Created namespace docs.');
    expect(frame.split('\n').find((line) => line.startsWith('> '))).toMatch(/^> docs +Product docs$/);
    expect(frame).toContain('namespaces (2)');
    expect(await client.nsList()).toEqual([
      { key: 'docs', description: 'Product docs' },
      { key: 'zulu', description: null },
    ]);
  });

  it('leaves the key empty: a generated ns_<uuid> is shown, and enter accepts it', async () => {
    const { client, screen } = await open('form-generated');
    await screen.press('n', KEY.enter, KEY.enter);
    await screen.waitFor('The key was empty: enter accepts ns_');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('Created namespace ns_');
    const [ns] = await client.nsList();
    expect(ns).toEqual({ key: expect.stringMatching(/^ns_[0-9a-f-]{36}$/), description: null });
    expect(frame).toContain(`Created namespace ${ns?.key}.`);
  });

  it('checks fields live with the shared rules, and sends nothing while one breaks its rule', async () => {
    const { client, screen } = await open('form-invalid');
    await screen.press('n');
    await screen.type('ab');
    expect(flat(screen.frame())).toContain(`invalid: ${KEY_RULE}`);
    await screen.type('c');
    expect(screen.frame()).not.toContain('invalid:');
    await screen.type('!');
    expect(flat(screen.frame())).toContain(`invalid: ${KEY_RULE}`);
    await screen.press(KEY.enter);
    // A pasted description arrives in one piece: 1025 characters, one too many.
    await screen.press(pasted('x'.repeat(1025)));
    expect(flat(screen.frame())).toContain('invalid: a description is 1 to 1024 characters');
    expect(screen.frame()).not.toContain('null');
    await screen.press(KEY.enter);
    let frame = screen.frame();
    expect(frame).toContain('Error: Fix the key first: nothing was sent.');
    expect(field(frame, 'key')).toMatch(/^> key/);

    await screen.press(KEY.backspace);
    await screen.press(KEY.tab);
    await screen.press(KEY.backspace);
    frame = screen.frame();
    expect(frame).not.toContain('invalid:');
    expect(frame).toContain('ok (1024/1024)');
    expect(await client.nsList()).toEqual([]);
    await screen.press(KEY.enter);
    await screen.waitFor('Created namespace abc.');
    expect(await client.nsList()).toEqual([{ key: 'abc', description: 'x'.repeat(1024) }]);
  });

  it('says in words what an empty description means, never JSON\'s null, and sends none for it', async () => {
    const { client, screen } = await open('form-words', (c) => c.nsCreate({ key: 'docs', description: 'Docs' }));
    await screen.press('n', KEY.tab);
    let frame = screen.frame();
    expect(field(frame, 'description')).toMatch(/^> description/);
    expect(flat(frame)).toContain('empty: no description. a description is 1 to 1024 characters');
    expect(frame).not.toMatch(/\bnull\b/);
    await screen.press(pasted('x'.repeat(1025)));
    expect(flat(screen.frame())).toContain('invalid: a description is 1 to 1024 characters');
    expect(screen.frame()).not.toMatch(/\bnull\b/);
    await screen.press(KEY.ctrlU, KEY.escape);

    await screen.press('e');
    await screen.waitFor('Description of namespace docs');
    await screen.press(KEY.ctrlU);
    frame = screen.frame();
    expect(flat(frame)).toContain('empty: enter CLEARS the description');
    expect(frame).not.toMatch(/\bnull\b/);
    await screen.press(KEY.escape);

    await screen.press('n');
    await screen.type('faq');
    await screen.press(KEY.enter, KEY.enter);
    await screen.waitFor('Created namespace faq.');
    expect(await client.nsList()).toEqual([
      { key: 'docs', description: 'Docs' },
      { key: 'faq', description: null },
    ]);
  });

  it('shows a 409 in place, keeps the form open on the key, and creates once the key is changed', async () => {
    const { client, screen } = await open('form-conflict', (c) => c.nsCreate({ key: 'taken' }));
    await screen.press('n');
    await screen.type('taken');
    await screen.press(KEY.enter);
    await screen.type('Second try');
    await screen.press(KEY.enter);
    let frame = await screen.waitFor('(409)');
    expect(frame).toMatch(/Error: .*taken.* \(409\)/);
    expect(frame).toContain('That key is taken: choose another, or leave the key empty to generate one.');
    expect(field(frame, 'key')).toMatch(/^> key/);
    expect(value(frame, 'description')).toBe('Second try');

    await screen.type('-2');
    await screen.press(KEY.enter, KEY.enter);
    frame = await screen.waitFor('Created namespace taken-2.');
    expect(await client.nsList()).toEqual([
      { key: 'taken', description: null },
      { key: 'taken-2', description: 'Second try' },
    ]);
  });

  it('treats letters as text while a field has the focus: q, j, k, ?, /, n, e, d, r do nothing else', async () => {
    const { client, screen } = await open('form-letters', (c) => c.nsCreate({ key: 'existing' }));
    await screen.press('n');
    await screen.type('qjkndre');
    await screen.press(KEY.tab);
    await screen.type('q? / j');
    const frame = screen.frame();
    expect(value(frame, 'key')).toBe('qjkndre');
    expect(value(frame, 'description')).toBe('q? / j');
    expect(frame).toContain('New namespace');
    expect(frame).not.toContain('Help: keys');
    await screen.press(KEY.enter);
    await screen.waitFor('Created namespace qjkndre.');
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['existing', 'qjkndre']);
  });

  it('handles keys sent faster than it draws in order, and splits a chunk at its tab and enter (as tmux sends them)', async () => {
    const { client, screen } = await open('form-burst');
    // Separate writes: without the key router, the keys after n would reach the list, which has just opened the form.
    screen.burst('n', 'd', 'o', 'c', 's', KEY.tab, 'D', 'o', 'c', 's');
    let frame = await screen.waitFor((f) => value(f, 'description') === 'Docs');
    expect(value(frame, 'key')).toBe('docs');
    expect(frame).not.toContain('Note:');
    await screen.press(KEY.enter);
    await screen.waitFor('Created namespace docs.');

    // One write holding several keys, as a terminal delivers keys typed quickly.
    screen.burst('n', 'faq\tFrequently asked\r');
    frame = await screen.waitFor('Created namespace faq.');
    expect(frame).toMatch(/^> faq +Frequently asked$/m);
    expect(await client.nsList()).toEqual([
      { key: 'docs', description: 'Docs' },
      { key: 'faq', description: 'Frequently asked' },
    ]);
  });

  it('moves back with shift-tab, and esc cancels without sending anything', async () => {
    const { client, screen } = await open('form-cancel');
    await screen.press('n');
    await screen.type('abc');
    await screen.press(KEY.tab);
    expect(field(screen.frame(), 'description')).toMatch(/^> description/);
    await screen.type('words');
    await screen.press(KEY.shiftTab);
    expect(field(screen.frame(), 'key')).toMatch(/^> key/);
    await screen.type('d');
    expect(value(screen.frame(), 'key'), screen.frame()).toBe('abcd');
    await screen.press(KEY.escape);
    const frame = screen.frame();
    expect(frame).not.toContain('New namespace');
    expect(frame).toContain('No namespaces yet: n creates one.');
    expect(await client.nsList()).toEqual([]);
  });

  it('edits a description with e (prefilled), and an emptied field clears it, as the form says', async () => {
    const { client, screen } = await open('form-edit', (c) => c.nsCreate({ key: 'docs', description: 'Old words' }));
    await screen.press('e');
    let frame = screen.frame();
    expect(frame).toContain('Description of namespace docs (empty + enter clears it)');
    expect(value(frame, 'description')).toBe('Old words');
    await screen.press(KEY.ctrlU);
    await screen.type('New words');
    await screen.press(KEY.enter);
    frame = await screen.waitFor('Saved the description of namespace docs.');
    expect(frame).toMatch(/^> docs +New words$/m);
    expect(await client.nsList()).toEqual([{ key: 'docs', description: 'New words' }]);

    await screen.press('e', KEY.ctrlU);
    expect(screen.frame()).toContain('empty: enter CLEARS the description');
    await screen.press(KEY.enter);
    frame = await screen.waitFor('Cleared the description of namespace docs.');
    expect(frame).toMatch(/^> docs *$/m);
    expect(await client.nsList()).toEqual([{ key: 'docs', description: null }]);
  });
});
