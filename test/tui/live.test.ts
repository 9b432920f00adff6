import { describe, expect, it, vi } from 'vitest';
import { KbClient } from '../../src/client/client.js';
import { rows, tuiFixture } from './fixture.js';
import { orgClient } from './harness.js';

// The lists kept live by GET /v1/watch (docs/tui.md), in process, where a proxy can hold a list's answer back.

const tui = tuiFixture('tui-live');

describe('kb tui: the lists kept live by the stream', () => {
  it('a change streamed while the list reloads stays once the reload’s older answer lands', async () => {
    const { client: direct, token } = await orgClient(tui.server, 'live-reload');
    await direct.nsCreate({ key: 'docs' });
    let lists = 0;
    // The stream waits until the first list is on screen; the list's reload when the stream opens is answered by the
    // server at once, and its answer kept back: made before the change below, it arrives after it.
    const proxy = await tui.proxy({
      hold: (url) => url.startsWith('/v1/watch'),
      holdAnswers: (url) => url.startsWith('/v1/ns_list') && lists++ > 0,
    });
    const screen = tui.open({ client: new KbClient({ url: proxy.url, token, retries: 0 }), deployment: { profile: 'work', url: proxy.url }, live: true });
    await screen.waitFor('> docs');
    await vi.waitFor(() => expect(proxy.held).toBe(1));
    proxy.release();
    await vi.waitFor(() => expect(proxy.kept).toBe(1), { timeout: 20_000 });
    await direct.nsCreate({ key: 'fresh', description: 'made during the reload' });
    await screen.waitFor('made during the reload');
    proxy.sendAnswers();
    const frame = await screen.waitFor((f) => f.includes('updated') && !f.includes('refreshing'), 'the reload’s answer');
    expect(rows(frame)).toEqual([expect.stringMatching(/^> docs *$/), expect.stringMatching(/^ {2}fresh +made during the reload$/)]);
  });
});
