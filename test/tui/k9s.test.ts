import { describe, expect, it } from 'vitest';
import { KbClient } from '../../src/client/client.js';
import { complete } from '../../src/tui/history.js';
import { shownKey } from '../../src/tui/text.js';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-k9s');
const { open } = tui;

const CTRL_D = '\u0004';

/** The key-help line: the last line of the frame. */
function keyLine(frame: string): string {
  return frame.split('\n').at(-1) ?? '';
}

/** The value shown in a form field: "> key   [value   ]". */
function value(frame: string, label: string): string | undefined {
  const line = frame.split('\n').find((each) => new RegExp(`^[> ] ${label}\\s+\\[`).test(each));
  return /\[(.*)\]/.exec(line ?? '')?.[1]?.trimEnd();
}

describe('kb tui: nothing is created by accident', () => {
  it('n with an empty key shows a generated key and sends nothing; enter then accepts it', async () => {
    const { client } = await orgClient(tui.server, 'k9s-generated');
    const screen = open({ client, organization: 'k9s-generated' });
    await screen.waitFor('No namespaces yet');
    await screen.press('n', KEY.enter, KEY.enter);
    let frame = await screen.waitFor('was empty: enter accepts');
    const generated = value(frame, 'key') ?? '';
    expect(generated).toMatch(/^ns_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(frame).toContain(`The key was empty: enter accepts ${generated}, or edit it.`);
    expect(frame).not.toContain('Error:');
    expect(await client.nsList()).toEqual([]);

    await screen.press(KEY.enter);
    frame = await screen.waitFor(`Created namespace ${generated}.`);
    expect(await client.nsList()).toEqual([{ key: generated, description: null }]);
  });

  it('esc after the generated key is shown creates nothing', async () => {
    const { client } = await orgClient(tui.server, 'k9s-generated-esc');
    await client.nsCreate({ key: 'docs' });
    const screen = open({ client, organization: 'k9s-generated-esc' });
    await screen.waitFor('docs');
    await screen.press(KEY.enter);
    await screen.waitFor('bases (0)');
    await screen.press('n', KEY.enter, KEY.enter);
    const frame = await screen.waitFor('was empty: enter accepts');
    expect(value(frame, 'key')).toMatch(/^kb_[0-9a-f-]{36}$/);
    await screen.press(KEY.escape);
    await screen.waitFor('No bases in this namespace yet');
    expect(await client.baseList('docs')).toEqual([]);
  });
});

describe("kb tui: k9s's keys", () => {
  it('d describes: a namespace as YAML with its whole key; a base in its own view; ctrl-d deletes a base after asking', async () => {
    const { client } = await orgClient(tui.server, 'k9s-describe');
    await client.nsCreate({ key: 'docs', description: 'Product docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq', description: 'Questions' });
    await client.baseCreate({ namespace: 'docs', key: 'guide' });
    const screen = open({ client, organization: 'k9s-describe' });
    await screen.waitFor((f) => selected(f) === 'docs');
    await screen.press('d');
    let frame = await screen.waitFor('namespace docs');
    expect(frame).toContain('key: "docs"');
    expect(frame).toContain('description: "Product docs"');
    await screen.press(KEY.escape, KEY.enter);
    await screen.waitFor((f) => selected(f) === 'faq');
    await screen.press('d');
    frame = await screen.waitFor('base faq');
    expect(frame).toMatch(/^description +Questions$/m);
    expect(await client.baseList('docs')).toHaveLength(2);
    await screen.press(KEY.escape, 'j', CTRL_D);
    frame = await screen.waitFor('Delete base guide in namespace docs, with all its data?');
    await screen.press('y');
    await screen.waitFor('Deleted base guide.');
    expect((await client.baseList('docs')).map((base) => base.key)).toEqual(['faq']);
  });

  it('the key line and ? name d describe and ctrl-d delete', async () => {
    const { client } = await orgClient(tui.server, 'k9s-help');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    const screen = open({ client, organization: 'k9s-help', namespace: 'docs', columns: 140 });
    let frame = await screen.waitFor((f) => selected(f) === 'faq');
    expect(keyLine(frame)).toContain('d describe');
    expect(keyLine(frame)).toContain('ctrl-d delete');
    await screen.press('?');
    frame = await screen.waitFor('Help: keys (bases)');
    expect(frame).toMatch(/^ {2}d {3,}describe the base/m);
    expect(frame).toMatch(/^ {2}ctrl-d {3,}delete the base/m);
  });

  it('--readonly says read-only in the header, and a write key says why it does nothing', async () => {
    const { client } = await orgClient(tui.server, 'k9s-readonly');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    const screen = open({ client, organization: 'k9s-readonly', namespace: 'docs', readonly: true });
    let frame = await screen.waitFor((f) => selected(f) === 'faq');
    expect(frame.split('\n')[0]).toMatch(/^kb {2}read-only {2}profile test/);
    for (const key of ['n', 'e', 'E', CTRL_D, ' ']) {
      await screen.press(key);
      frame = screen.frame();
      expect(frame, key).toContain('Note: Read-only (kb tui --readonly): nothing is created, edited or deleted.');
      await screen.press('j');
      expect(screen.frame()).not.toContain('Read-only');
    }
    // In the base's own view too.
    await screen.press(KEY.enter);
    await screen.waitFor('base faq');
    await screen.press(CTRL_D);
    expect(screen.frame()).toContain('Read-only (kb tui --readonly)');
    expect(await client.baseList('docs')).toHaveLength(1);
  });

  it('without --readonly the header says nothing of it', async () => {
    const { client } = await orgClient(tui.server, 'k9s-writable');
    const screen = open({ client, organization: 'k9s-writable' });
    const frame = await screen.waitFor('No namespaces yet');
    expect(frame.split('\n')[0]).toMatch(/^kb {2}profile test/);
    expect(frame).not.toContain('read-only');
  });

  it('a generated key is elided in the middle in the list, the column sized to it; d shows it whole', async () => {
    const { client } = await orgClient(tui.server, 'k9s-uuid');
    const ns = await client.nsCreate({ description: 'generated' });
    expect(ns.key).toMatch(/^ns_[0-9a-f-]{36}$/);
    const screen = open({ client, organization: 'k9s-uuid' });
    let frame = await screen.waitFor('generated');
    const shown = `${ns.key.slice(0, 11)}…${ns.key.slice(-4)}`;
    expect(shownKey(ns.key)).toBe(shown);
    // The marker, the key as shown, two spaces, the description: the column is as wide as the shown key.
    expect(frame).toContain(`> ${shown}  generated`);
    expect(frame).not.toContain(ns.key);
    await screen.press('d');
    frame = await screen.waitFor(`key: "${ns.key}"`);
    expect(frame).toContain(`namespace ${ns.key}`);
  });

  it('shownKey elides a key that does not fit in the middle, keeping both ends', () => {
    expect(shownKey('a-very-long-key-number-01', 11)).toBe('a-ver…er-01');
    expect(shownKey('short', 11)).toBe('short');
    expect(shownKey('kb_d74edf02-1111-4222-8333-123456789abc')).toBe('kb_d74edf02…9abc');
  });
});

describe('kb tui: ctrl-d deletes a namespace, as kb ns delete does', () => {
  it('an empty one after y; any other key keeps it', async () => {
    const { client } = await orgClient(tui.server, 'k9s-ns-delete');
    await client.nsCreate({ key: 'docs' });
    await client.nsCreate({ key: 'scratch' });
    const screen = open({ client, organization: 'k9s-ns-delete' });
    await screen.waitFor((f) => selected(f) === 'docs');
    await screen.press('j', CTRL_D);
    await screen.waitFor('Delete namespace scratch?');
    await screen.press('n');
    await screen.waitFor('Cancelled: namespace scratch was not deleted.');
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['docs', 'scratch']);
    await screen.press(CTRL_D);
    await screen.waitFor('Delete namespace scratch?');
    await screen.press('y');
    const frame = await screen.waitFor('Deleted namespace scratch.');
    expect(frame).toContain('namespaces (1)');
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['docs']);
  });

  it('one that holds bases: asked again with their count, deleted with them only on a second y', async () => {
    const { client } = await orgClient(tui.server, 'k9s-ns-cascade');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    await client.baseCreate({ namespace: 'docs', key: 'guide' });
    const screen = open({ client, organization: 'k9s-ns-cascade' });
    await screen.waitFor((f) => selected(f) === 'docs');
    await screen.press(CTRL_D);
    await screen.waitFor('Delete namespace docs?');
    await screen.press('y');
    await screen.waitFor('Namespace docs holds 2 bases: delete it and them, with all their data?');
    await screen.press('n');
    await screen.waitFor('Cancelled: namespace docs and its 2 bases were not deleted.');
    expect((await client.baseList('docs')).map((base) => base.key)).toEqual(['faq', 'guide']);
    await screen.press(CTRL_D);
    await screen.waitFor('Delete namespace docs?');
    await screen.press('y');
    await screen.waitFor('Namespace docs holds 2 bases');
    await screen.press('y');
    const frame = await screen.waitFor('Deleted namespace docs and its 2 bases.');
    expect(frame).toContain('No namespaces yet');
    expect(await client.nsList()).toEqual([]);
  });

  it('against a deployment without DELETE /v1/ns_delete: one sentence, and nothing else changes', async () => {
    const { client: direct, token } = await orgClient(tui.server, 'k9s-ns-no-route');
    await direct.nsCreate({ key: 'docs' });
    const proxy = await tui.proxy({ without: ['/v1/ns_delete'] });
    const client = new KbClient({ url: proxy.url, token, retries: 0 });
    const screen = open({ client, organization: 'k9s-ns-no-route', columns: 140 });
    await screen.waitFor((f) => selected(f) === 'docs');
    await screen.press(CTRL_D);
    await screen.waitFor('Delete namespace docs?');
    await screen.press('y');
    const frame = await screen.waitFor('Note: This deployment cannot delete namespaces: DELETE /v1/ns_delete is an extension of kb serve that it does not offer.');
    expect(frame).not.toContain('Error');
    expect(selected(frame)).toBe('docs');
    expect(frame).toContain('namespaces (1)');
    expect((await direct.nsList()).map((ns) => ns.key)).toEqual(['docs']);
  });

  it('--readonly refuses it as it refuses a base delete', async () => {
    const { client } = await orgClient(tui.server, 'k9s-ns-readonly');
    await client.nsCreate({ key: 'docs' });
    const screen = open({ client, organization: 'k9s-ns-readonly', readonly: true });
    await screen.waitFor((f) => selected(f) === 'docs');
    await screen.press(CTRL_D);
    const frame = screen.frame();
    expect(frame).toContain('Note: Read-only (kb tui --readonly): nothing is created, edited or deleted.');
    expect(frame).not.toContain('Delete namespace docs?');
    await screen.press('y');
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['docs']);
  });
});

describe('kb tui: profiles, as k9s has contexts', () => {
  async function withProfiles(org: string) {
    const { client } = await orgClient(tui.server, org);
    await client.nsCreate({ key: 'docs' });
    const asked: string[] = [];
    const names = ['default', 'local', 'prod-eu', 'prod-us', 'staging'];
    const screen = open({
      client,
      organization: org,
      deployment: { profile: 'local', url: tui.server.url },
      profiles: async () => names,
      connect: async (profile) => {
        asked.push(profile);
        return { client, deployment: { profile, url: tui.server.url } };
      },
    });
    await screen.waitFor((f) => selected(f) === 'docs');
    return { screen, asked, names };
  }

  it(':ctx without a name opens a picker of every profile, the one in use marked; enter switches', async () => {
    const { screen, asked, names } = await withProfiles('k9s-picker');
    await screen.press(':');
    await screen.type('ctx');
    await screen.press(KEY.enter);
    let frame = await screen.waitFor('profiles (5)');
    for (const name of names) expect(frame).toContain(name);
    expect(frame).toMatch(/^>\*local {2}\(in use\)$/m);
    await screen.press('j', 'j', KEY.enter);
    frame = await screen.waitFor((f) => /^kb {2}profile prod-us/.test(f));
    expect(asked).toEqual(['prod-us']);
  });

  it(':profile too; esc closes the picker and switches nothing', async () => {
    const { screen, asked } = await withProfiles('k9s-picker-esc');
    await screen.press(':');
    await screen.type('profile');
    await screen.press(KEY.enter);
    await screen.waitFor('profiles (5)');
    await screen.press(KEY.escape);
    const frame = await screen.waitFor((f) => selected(f) === 'docs');
    expect(frame.split('\n')[0]).toMatch(/^kb {2}profile local/);
    expect(asked).toEqual([]);
  });

  it('a name that is no profile says "no profile named stag", with the whole list in view, and switches nothing', async () => {
    const { screen, asked, names } = await withProfiles('k9s-typo');
    await screen.press(':');
    await screen.type('ctx stag');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('no profile named stag');
    expect(frame).not.toContain('--profile');
    for (const name of names) expect(frame).toMatch(new RegExp(`^[> ][* ]${name}( |$)`, 'm'));
    expect(asked).toEqual([]);
  });

  it('Tab completes a profile name after :ctx and :profile', async () => {
    expect(complete('ctx st', [], ['local', 'staging'])).toBe('ctx staging');
    expect(complete('profile prod', [], ['prod-eu', 'prod-us'])).toBe('profile prod-');
    expect(complete('ns st', ['docs'], ['staging'])).toBeUndefined();
    const { screen } = await withProfiles('k9s-tab');
    await screen.press(':');
    await screen.type('ctx sta');
    await screen.press(KEY.tab);
    expect(screen.frame()).toContain(':ctx staging');
  });
});
