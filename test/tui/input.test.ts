import { describe, expect, it } from 'vitest';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient, pasted, type Screen } from './harness.js';

const tui = tuiFixture('tui-input');

const ESC = '\u001B';

/**
 * Sequences that no terminal key kb knows sends, each as one write: Ctrl+F1..F4 (`ESC[1;5P`: the Ink 6.8 crash,
 * Ink issue #901), SGR, focus reports, xterm's modifyOtherKeys, every CSI final byte with and without a Ctrl modifier,
 * every SS3 final byte, and the control strings (OSC ended by BEL and by ST, DCS, SOS, PM, APC).
 */
const CSI_FINALS = Array.from({ length: 0x7e - 0x40 + 1 }, (_, i) => String.fromCharCode(0x40 + i));
const UNKNOWN: readonly string[] = [
  `${ESC}[1;5P`,
  `${ESC}[1;5Q`,
  `${ESC}[1;5R`,
  `${ESC}[1;5S`,
  `${ESC}[31m`,
  `${ESC}[0m`,
  `${ESC}[I`,
  `${ESC}[O`,
  `${ESC}[27;5;97~`,
  `${ESC}[?1;2c`,
  `${ESC}[1;5:3P`,
  // Not the finals of keys (arrows, Home, End, shift-tab; rxvt's arrows a-d; ~ and kitty's u, which carry a key's
  // number), nor `[`, which Ink reads as the Linux console's `ESC[[A` form, waiting for its letter.
  ...CSI_FINALS.filter((final) => !'ABCDFHZabcd[u~'.includes(final)).flatMap((final) => [`${ESC}[${final}`, `${ESC}[1;5${final}`, `${ESC}[31;7${final}`, `${ESC}${ESC}[1;5${final}`]),
  ...CSI_FINALS.filter((final) => !'ABCDFHabcd'.includes(final)).map((final) => `${ESC}O${final}`),
  `${ESC}]0;a title\u0007`,
  `${ESC}]52;c;ZGVsZXRl${ESC}\\`,
  `${ESC}P1$r0m${ESC}\\`,
  `${ESC}Xsos text${ESC}\\`,
  `${ESC}^pm text${ESC}\\`,
  `${ESC}_Gi=1;OK${ESC}\\`,
  // Alt and a character, or a sequence's start alone.
  `${ESC}[`,
  `${ESC}/`,
  `${ESC}q`,
];

/** Sends every sequence, each its own write, then `after`; waits for the frame `after` leads to. */
async function sendAll(screen: Screen, sequences: readonly string[], check: (frame: string) => boolean, what: string): Promise<string> {
  screen.burst(...sequences);
  return screen.waitFor(check, what);
}

/** The value shown in a form field: "> key   [value   ]". */
function value(frame: string, label: string): string | undefined {
  const line = frame.split('\n').find((each) => new RegExp(`^[> ] ${label}\\s+\\[`).test(each));
  return /\[(.*)\]/.exec(line ?? '')?.[1]?.trimEnd();
}

async function twoNamespaces(org: string, options: { readonly?: boolean } = {}) {
  const { client } = await orgClient(tui.server, org);
  await client.nsCreate({ key: 'alpha', description: 'first' });
  await client.nsCreate({ key: 'beta', description: 'second' });
  const screen = tui.open({ client, organization: org, readonly: options.readonly });
  await screen.waitFor((f) => selected(f) === 'alpha');
  return { client, screen };
}

describe('kb tui: no input ends it (docs/contract.md, The TUI)', () => {
  it('on a list: Ctrl+F1 and every unknown CSI, SS3 and control string are ignored; j after them still moves', async () => {
    const { client, screen } = await twoNamespaces('input-list');
    const frame = await sendAll(screen, [...UNKNOWN, 'j'], (f) => selected(f) === 'beta', 'j after the sequences');
    // Nothing was run: no question, no form, no copy (an OSC 52 reply holds a c), no YAML, no message.
    for (const text of ['Delete', 'New namespace', 'Sent ', 'Note:', 'Error:']) expect(frame).not.toContain(text);
    expect(screen.terminal.copied).toEqual([]);
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['alpha', 'beta']);
  });

  it('in a form: the sequences type nothing, a paste holding ESC[31m gives its text, and typing goes on', async () => {
    const { screen } = await twoNamespaces('input-form');
    await screen.press('n');
    await screen.waitFor('New namespace');
    await screen.type('ab');
    await sendAll(screen, [...UNKNOWN, pasted(`c${ESC}[31md${ESC}[0m`), 'e'], (f) => value(f, 'key') === 'abcde', 'the key abcde');
    await screen.press(KEY.tab);
    screen.burst(pasted(`red ${ESC}[1;5P${ESC}[31mtext`));
    const frame = await screen.waitFor((f) => value(f, 'description') === 'red text', 'the pasted description');
    expect(value(frame, 'key')).toBe('abcde');
  });

  it('in the filter: the sequences add nothing to it, and enter keeps what was typed', async () => {
    const { screen } = await twoNamespaces('input-filter');
    await screen.press('/');
    await screen.type('bet');
    await sendAll(screen, [...UNKNOWN, 'a'], (f) => f.includes('/beta'), 'the filter beta');
    await screen.press(KEY.enter);
    const frame = await screen.waitFor('filter "beta"');
    expect(selected(frame)).toBe('beta');
  });

  it('with --readonly: the sequences run nothing, and the list still takes keys', async () => {
    const { client, screen } = await twoNamespaces('input-readonly', { readonly: true });
    await sendAll(screen, [...UNKNOWN, 'j'], (f) => selected(f) === 'beta', 'j after the sequences');
    expect((await client.nsList()).map((ns) => ns.key)).toEqual(['alpha', 'beta']);
  });

  it('a sequence split across writes, a lone surrogate and U+FFFD (invalid UTF-8 as Node decodes it) end nothing', async () => {
    const { screen } = await twoNamespaces('input-split');
    await screen.press('n');
    await screen.waitFor('New namespace');
    // Split within one turn: Ink keeps the start until the rest comes.
    screen.burst(`${ESC}[1;`, '5P', `${ESC}]0;ti`, `tle\u0007`, 'x');
    await screen.waitFor((f) => value(f, 'key') === 'x', 'x after the split sequences');
    // Split across turns: Ink hands over the start alone; the rest comes as text.
    screen.burst(`${ESC}[1;`);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    screen.burst('5P', '\uD800', '\uFFFD', 'y');
    const frame = await screen.waitFor((f) => value(f, 'key')?.endsWith('y') === true, 'y after the rest');
    expect(frame).toContain('New namespace');
  });
});
