import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { KbClient } from '../../src/client/client.js';
import { tuiFixture } from './fixture.js';
import { KEY, orgClient } from './harness.js';

const tui = tuiFixture('tui-messages');
const { open } = tui;

/** The key-help line: the last line of the frame. */
function keyLine(frame: string): string {
  return frame.split('\n').at(-1) ?? '';
}

describe('kb tui: messages', () => {
  it('fit one line, cut with …, and clear on the next key (a move, esc)', async () => {
    // A long note: a deployment without DELETE /v1/ns_delete says so in one sentence, wider than 60 columns.
    const { client: direct, token } = await orgClient(tui.server, 'msg-clear');
    await direct.nsCreate({ key: 'alpha' });
    await direct.nsCreate({ key: 'beta' });
    const proxy = await tui.proxy({ without: ['/v1/ns_delete'] });
    const client = new KbClient({ url: proxy.url, token, retries: 0 });
    const screen = open({ client, organization: 'msg-clear', columns: 60, rows: 20 });
    await screen.waitFor('alpha');
    await screen.press(KEY.ctrlD, 'y');
    let frame = await screen.waitFor('Note: This deployment cannot delete');
    const note = frame.split('\n').find((line) => line.startsWith('Note: This deployment cannot delete')) ?? '';
    // Cut with …, the list's freshness at its right end.
    expect(note).toMatch(/…( +updated (just now|\d+s ago))?$/);
    expect(stringWidth(note)).toBeLessThanOrEqual(60);
    await screen.press('j');
    frame = screen.frame();
    expect(frame).not.toContain('Note:');
    await screen.press(KEY.ctrlD, 'y');
    await screen.waitFor('Note: This deployment cannot delete');
    await screen.press(KEY.escape);
    expect(screen.frame()).not.toContain('Note:');
  });

  it('c says what it did: sent the key to the terminal as OSC 52', async () => {
    const { client } = await orgClient(tui.server, 'msg-copy');
    await client.nsCreate({ key: 'base-01' });
    const screen = open({ client, organization: 'msg-copy' });
    await screen.waitFor('base-01');
    await screen.press('c');
    expect(screen.frame()).toContain("Sent base-01 to the terminal's clipboard (OSC 52)");
    expect(screen.frame()).not.toContain('Copied');
  });

  it(':ns for a namespace that does not exist says so, and offers no n, e, E or d for it', async () => {
    const { client } = await orgClient(tui.server, 'msg-nope');
    await client.nsCreate({ key: 'docs' });
    const screen = open({ client, organization: 'msg-nope', columns: 120 });
    await screen.waitFor('docs');
    await screen.press(':');
    await screen.type('ns nope-nope');
    await screen.press(KEY.enter);
    let frame = await screen.waitFor('Namespace nope-nope does not exist.');
    expect(frame).not.toContain('deleted elsewhere');
    for (const hint of ['n new', 'e edit', 'E $EDITOR', 'ctrl-d delete']) expect(keyLine(frame)).not.toContain(hint);
    expect(keyLine(frame)).toContain('esc back');
    await screen.press('n');
    await screen.press(KEY.ctrlD);
    frame = screen.frame();
    expect(frame).not.toContain('New base');
    expect(frame).not.toContain('Delete base');
    await screen.press(KEY.escape);
    await screen.waitFor('msg-nope › namespaces (1)');
  });

  it('E with an editor that is not installed says so and names $VISUAL and $EDITOR', async () => {
    const { client } = await orgClient(tui.server, 'msg-editor');
    await client.nsCreate({ key: 'docs', description: 'Docs' });
    const screen = open({ client, organization: 'msg-editor', editor: 'kb-no-such-editor-here', columns: 140 });
    await screen.waitFor('docs');
    await screen.press('E');
    const frame = await screen.waitFor('was not found');
    expect(frame).toContain('Error: The editor "kb-no-such-editor-here" was not found: nothing was sent.');
    expect(frame).toContain('Set $VISUAL or $EDITOR to an editor that is installed');
    expect(frame).not.toContain('an editor that waits');
    expect(await client.nsList()).toEqual([{ key: 'docs', description: 'Docs' }]);
  });
});
