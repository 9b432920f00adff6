import { describe, expect, it } from 'vitest';
import { tuiFixture } from './fixture.js';
import { KbClient } from '../../src/client/client.js';
import { orgClient } from './harness.js';

const tui = tuiFixture('tui-keyline');
const { open } = tui;

function keyLine(frame: string): string {
  return frame.split('\n').at(-1) ?? '';
}

/** The hints of the key line, as "key does" pairs. */
function hints(frame: string): string[] {
  return keyLine(frame).split(/ {2,}/);
}

/** The key line of a screen opened with `options` at each width, once `shown` is drawn, against the hints expected. */
async function expectKeyLines(
  options: Omit<Parameters<typeof open>[0], 'columns' | 'rows'>,
  shown: string,
  widths: ReadonlyArray<readonly [number, readonly string[]]>,
): Promise<void> {
  for (const [columns, expected] of widths) {
    const screen = open({ ...options, columns, rows: 24 });
    const frame = await screen.waitFor(shown);
    expect(hints(frame), `${columns} columns`).toEqual(expected);
    screen.unmount();
  }
}

// The key line at 80, 60 and 40 columns: the keys that open, create, edit and delete before copy and sort (as k9s keeps
// its most used), and always what the screen tells the user to press.
describe('kb tui: the key line of a narrow terminal', () => {
  it('keeps enter, n and e on the namespaces, before copy and sort', async () => {
    const { client } = await orgClient(tui.server, 'keyline-ns');
    await client.nsCreate({ key: 'docs', description: 'Docs' });
    await expectKeyLines({ client, organization: 'keyline-ns' }, '> docs', [
      [80, ['enter open', 'n new', 'e edit', 'E $EDITOR', '/ filter', ': command', '? help', 'q quit']],
      [60, ['enter open', 'n new', 'e edit', '/ filter', '? help', 'q quit']],
      [40, ['enter open', 'e edit', '? help', 'q quit']],
    ]);
  });

  it('keeps enter, n, e and d on the bases, before copy and sort', async () => {
    const { client } = await orgClient(tui.server, 'keyline-bases');
    await client.nsCreate({ key: 'docs' });
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    await expectKeyLines({ client, organization: 'keyline-bases', namespace: 'docs' }, '> faq', [
      [80, ['enter open', 'n new', 'e edit', 'ctrl-d delete', '/ filter', 'esc back', '? help', 'q quit']],
      [60, ['enter open', 'n new', 'e edit', 'esc back', '? help', 'q quit']],
      [40, ['enter open', 'esc back', '? help', 'q quit']],
    ]);
  });

  it('shows n when an empty list says "n creates one", at 80, 60 and 40 columns, and nothing done to a row', async () => {
    const { client } = await orgClient(tui.server, 'keyline-empty');
    for (const columns of [80, 60, 40]) {
      const screen = open({ client, organization: 'keyline-empty', columns, rows: 24 });
      const frame = await screen.waitFor('No namespaces yet: n creates one.');
      expect(hints(frame), `${columns} columns`).toContain('n new');
      for (const hint of ['enter open', 'e edit', 'c copy', 's/S sort']) expect(hints(frame)).not.toContain(hint);
      screen.unmount();
    }
    await client.nsCreate({ key: 'docs' });
    for (const columns of [80, 60, 40]) {
      const screen = open({ client, organization: 'keyline-empty', namespace: 'docs', columns, rows: 24 });
      // At 40 columns the sentence wraps.
      const frame = await screen.waitFor((f) => f.replace(/\s+/g, ' ').includes('No bases in this namespace yet: n creates one.'));
      expect(hints(frame), `${columns} columns`).toContain('n new');
      expect(hints(frame)).toContain('esc back');
      for (const hint of ['enter open', 'e edit', 'ctrl-d delete', 'c copy']) expect(hints(frame)).not.toContain(hint);
      screen.unmount();
    }
  });

  it('shows esc, : and r at 40 columns when a namespace that does not exist says to press them', async () => {
    const { client } = await orgClient(tui.server, 'keyline-missing');
    const screen = open({ client, organization: 'keyline-missing', namespace: 'nope-nope', columns: 40, rows: 24 });
    const frame = await screen.waitFor((f) => f.includes('r asks again.'));
    expect(hints(frame)).toEqual(expect.arrayContaining(['esc back', ': command', 'r refresh']));
  });

  it('shows r when a failed load says "r retries"', async () => {
    const { client: direct, token } = await orgClient(tui.server, 'keyline-retry');
    await direct.nsCreate({ key: 'docs' });
    const proxy = await tui.proxy();
    proxy.mode = 'down';
    const screen = open({ client: new KbClient({ url: proxy.url, token, retries: 0 }), organization: 'keyline-retry', columns: 60, rows: 24 });
    const frame = await screen.waitFor('r retries.');
    expect(hints(frame)).toContain('r refresh');
    proxy.mode = 'forward';
    await screen.press('r');
    expect(hints(await screen.waitFor('> docs'))).not.toContain('r refresh');
  });
});
