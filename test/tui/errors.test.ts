import { describe, expect, it } from 'vitest';
import { KbClient } from '../../src/client/client.js';
import { tuiFixture } from './fixture.js';
import { KEY, orgClient, type Screen } from './harness.js';
import type { Proxy } from './proxy.js';

const tui = tuiFixture('tui-errors');

function open(client: KbClient, url: string, live = false): Screen {
  return tui.open({ client, deployment: { profile: 'work', url }, live });
}

/** An organization with namespace "docs", seen through a proxy that can play dead. */
async function behindProxy(org: string): Promise<{ proxy: Proxy; client: KbClient; direct: KbClient }> {
  const { client: direct, token } = await orgClient(tui.server, org);
  await direct.nsCreate({ key: 'docs', description: 'Docs' });
  const proxy = await tui.proxy();
  return { proxy, client: new KbClient({ url: proxy.url, token, retries: 0 }), direct };
}

describe('kb tui: errors appear in place, say what to do, and the UI keeps running', () => {
  it('a refused token (401): the message, how to log in again for this profile, and the UI still answers keys', async () => {
    const client = new KbClient({ url: tui.server.url, token: 'not-a-valid-token', retries: 0 });
    const screen = open(client, tui.server.url);
    const frame = await screen.waitFor('(401)');
    expect(frame).toMatch(/^Error: .+ \(401\)$/m);
    expect(frame).toContain('The token was refused: log in again with `kb auth login --profile work`, or set KB_TOKEN. r retries.');
    await screen.waitFor('org ? (not verified)');

    await screen.press('?');
    expect(screen.frame()).toContain('Help: keys');
    await screen.press(KEY.escape, 'r');
    await screen.waitFor((f) => f.includes('(401)') && !f.includes('refreshing'));
    expect(screen.frame()).toContain('namespaces');
  });

  it('an unreachable server: the URL and the cause, a hint about kb serve; r loads the list once it is back', async () => {
    const { proxy, client } = await behindProxy('errors-network');
    proxy.mode = 'down';
    const screen = open(client, proxy.url);
    let frame = await screen.waitFor('Error: cannot reach');
    expect(frame).toContain(`Error: cannot reach ${proxy.url}/v1/ns_list: connection closed by the other side`);
    expect(frame).toContain('Is the server running (`kb serve` for a local one) and the URL right? r retries.');

    proxy.mode = 'forward';
    await screen.press('r');
    frame = await screen.waitFor('> docs');
    expect(frame).not.toContain('Error:');
  });

  it('a refresh that fails keeps the list on screen, with the error under it', async () => {
    const { proxy, client } = await behindProxy('errors-refresh');
    const screen = open(client, proxy.url);
    await screen.waitFor('> docs');
    proxy.mode = 'down';
    await screen.press('r');
    const frame = await screen.waitFor('Error: cannot reach');
    expect(frame).toMatch(/^> docs +Docs$/m);
  });

  it.each([
    { live: false, org: 'errors-submit', what: 'the list refreshed by polling' },
    { live: true, org: 'errors-submit-live', what: 'the list kept live by the stream, which opens while the form is open' },
  ])('a change that fails keeps the form open with the error; the same enter succeeds once the server is back ($what)', async ({ live, org }) => {
    const { proxy, client, direct } = await behindProxy(org);
    const screen = open(client, proxy.url, live);
    await screen.waitFor('> docs');
    proxy.mode = 'down';
    await screen.press('e', KEY.ctrlU);
    await screen.type('Fresh');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('Error: cannot reach');
    expect(frame).toContain('Description of namespace docs');
    expect(await direct.nsList()).toEqual([{ key: 'docs', description: 'Docs' }]);

    proxy.mode = 'forward';
    await screen.press(KEY.enter);
    await screen.waitFor('Saved the description of namespace docs.');
    expect(await direct.nsList()).toEqual([{ key: 'docs', description: 'Fresh' }]);
  });
});
