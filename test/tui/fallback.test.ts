import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbClient } from '../../src/client/client.js';
import { rows, tuiFixture } from './fixture.js';
import { KEY, orgClient, type Screen } from './harness.js';
import { startProxy, type Proxy } from './proxy.js';

// A deployment with only the documented API: a proxy in front of a real server that answers 404 on base_list.
const tui = tuiFixture('tui-fallback');
let proxy: Proxy;
beforeAll(async () => {
  proxy = await startProxy(tui.server.url, { without: ['/v1/base_list'] });
});
afterAll(async () => {
  await proxy?.close();
});

/** The app on the proxy, opened on namespace "legacy", which holds base faq; `direct` talks to the server itself. */
async function insideLegacy(org: string, readonly = false): Promise<{ direct: KbClient; screen: Screen }> {
  const { client: direct, token } = await orgClient(tui.server, org);
  await direct.baseCreate({ namespace: 'legacy', key: 'faq', description: 'Questions' });
  const client = new KbClient({ url: proxy.url, token, retries: 0 });
  await expect(client.baseList('legacy')).rejects.toMatchObject({ name: 'BaseListUnsupportedError' });
  const screen = tui.open({ client, deployment: { profile: 'remote', url: proxy.url }, readonly });
  await screen.waitFor('legacy');
  await screen.press(KEY.enter);
  await screen.waitFor('does not offer base_list');
  return { direct, screen };
}

async function bases(direct: KbClient): Promise<{ key: string; description: string | null }[]> {
  return (await direct.baseList('legacy')).map(({ key, description }) => ({ key, description }));
}

describe('kb tui: a deployment without base_list (documented API only)', () => {
  it('with --readonly names only the key it offers: o opens by key, no n to create', async () => {
    const { screen } = await insideLegacy('fallback-readonly', true);
    await screen.press(KEY.escape);
    const frame = await screen.waitFor('No base opened yet');
    expect(frame).toContain('Open bases by key (o); they stay listed this session.');
    expect(frame).toContain('No base opened yet: o opens one by key.');
    expect(frame).not.toContain('(n)');
    expect(frame).not.toContain('n creates');
    expect(frame.split('\n').at(-1)).toContain('o open by key');

    await screen.press('o');
    await screen.type('faq');
    await screen.press(KEY.enter);
    expect(screen.frame()).toMatch(/^description +\(not read: this deployment cannot read a single base\)$/m);
  });

  it('says so plainly and offers the open-by-key prompt; the base opens, unread, and an edit reads it', async () => {
    const { direct, screen } = await insideLegacy('fallback-open');
    let frame = screen.frame();
    expect(frame).toContain('This deployment does not offer base_list (a kb serve extension).');
    expect(frame).toContain('Open bases by key (o) or create them (n); they stay listed this session.');
    expect(frame).toContain('Open a base by key');
    expect(frame).toMatch(/^> key +\[/m);

    await screen.type('faq');
    await screen.press(KEY.enter);
    frame = screen.frame();
    expect(frame).toContain('legacy › base faq');
    expect(frame).toMatch(/^description +\(not read: this deployment cannot read a single base; e sets it\)$/m);

    await screen.press('e');
    await screen.type('Frequently asked');
    await screen.press(KEY.enter);
    frame = await screen.waitFor('Saved the description of base faq.');
    expect(frame).toMatch(/^description +Frequently asked$/m);
    expect(await bases(direct)).toEqual([{ key: 'faq', description: 'Frequently asked' }]);

    await screen.press(KEY.escape);
    frame = screen.frame();
    expect(frame).toContain('does not offer base_list');
    expect(rows(frame)).toEqual([expect.stringMatching(/^> faq +Frequently asked$/)]);
  });

  it('creates and deletes bases, listing those of this session', async () => {
    const { direct, screen } = await insideLegacy('fallback-create');
    await screen.press(KEY.escape);
    expect(screen.frame()).toContain('No base opened yet: o opens one by key, n creates one.');
    expect(screen.frame().split('\n').at(-1)).toContain('o open by key');

    await screen.press('n');
    await screen.type('howto');
    await screen.press(KEY.tab);
    await screen.type('Guides');
    await screen.press(KEY.enter);
    let frame = await screen.waitFor('Created base howto.');
    expect(rows(frame)).toEqual([expect.stringMatching(/^> howto +Guides$/)]);
    expect(await bases(direct)).toEqual([
      { key: 'faq', description: 'Questions' },
      { key: 'howto', description: 'Guides' },
    ]);

    await screen.press(KEY.ctrlD);
    expect(screen.frame()).toContain('Delete base howto in namespace legacy, with all its data?');
    await screen.press('y');
    frame = await screen.waitFor('Deleted base howto.');
    expect(rows(frame)).toEqual([]);
    expect(await bases(direct)).toEqual([{ key: 'faq', description: 'Questions' }]);
  });

  it('checks the key of the prompt with the shared rule, and a key that does not exist answers 404 in place', async () => {
    const { screen } = await insideLegacy('fallback-missing');
    await screen.type('ab');
    expect(screen.frame().replace(/\s+/g, ' ')).toContain('invalid: a key is 3 to 63 characters');
    await screen.press(KEY.enter);
    expect(screen.frame()).toContain('Error: Fix the key first: nothing was sent.');

    await screen.press(KEY.ctrlU);
    await screen.type('absent');
    await screen.press(KEY.enter, 'e');
    await screen.type('words');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('(404)');
    expect(frame).toMatch(/Error: .*absent.* \(404\)/);
    expect(frame).toContain('Description of base absent');
  });
});
