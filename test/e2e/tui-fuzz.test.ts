import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { servedForTmux, SKIPPED, TMUX } from '../helpers/tmux.js';

/**
 * The built kb tui in a real terminal (tmux), against a real kb serve, fed random byte streams: every CSI, SS3 and
 * control-string form, bracketed pastes holding sequences, Alt and a byte, sequences cut short, invalid UTF-8 and
 * plain bytes, each chunk one write. It must stay alive (docs/contract.md, The TUI: no input ends it), its screen
 * the app's, and still answer keys. KB_TUI_FUZZ_SEED replays a run; KB_TUI_FUZZ_CHUNKS sets how many chunks each
 * screen gets (40 unless told).
 */
const SEED = Number(process.env.KB_TUI_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CHUNKS = Number(process.env.KB_TUI_FUZZ_CHUNKS ?? 40);
const COLUMNS = 100;
const ROWS = 30;

/** q quits and ctrl-c quits (or asks, in a form): both end kb tui as asked, which is no failure to find here. */
const QUITS = new Set([0x71, 0x03]);

const ascii = (text: string) => Array.from(text, (char) => char.charCodeAt(0));
const ESC = 0x1b;
const printable = fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 16 });
const anyBytes = fc.array(fc.integer({ min: 0, max: 0xff }), { maxLength: 24 });
/** Small numbers most of the time: the keys' numbers and modifiers (5: Ctrl) are small. */
const parameter = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 16 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 65_535 }), weight: 1 });
const csi = fc
  .tuple(fc.constantFrom('', '?', '>', '<', '='), fc.array(parameter, { maxLength: 5 }), fc.constantFrom('', ' ', '$', '"'), fc.integer({ min: 0x40, max: 0x7e }))
  .map(([lead, params, intermediate, final]) => [ESC, 0x5b, ...ascii(lead + params.join(';') + intermediate), final]);
/** The form of a key with modifiers, `ESC [ 1 ; MOD FINAL` (Ctrl+F1 is `ESC[1;5P`), with any final byte. */
const modifiedKey = fc.tuple(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 0x40, max: 0x7e })).map(([modifier, final]) => [ESC, 0x5b, ...ascii(`1;${modifier}`), final]);
const ss3 = fc.integer({ min: 0x20, max: 0x7e }).map((final) => [ESC, 0x4f, final]);
const controlString = fc
  .tuple(fc.constantFrom(0x5d, 0x50, 0x58, 0x5e, 0x5f), printable, fc.constantFrom([0x07], [ESC, 0x5c], [0x18], []))
  .map(([start, body, end]) => [ESC, start, ...body, ...end]);
const alt = fc.integer({ min: 0, max: 0xff }).map((byte) => [ESC, byte]);
const invalidUtf8 = fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 6 });
const piece = fc.oneof(csi, modifiedKey, ss3, controlString, alt, invalidUtf8, anyBytes, printable);
const paste = fc.array(piece, { maxLength: 4 }).map((pieces) => [...ascii('\u001B[200~'), ...pieces.flat(), ...ascii('\u001B[201~')]);
/** A piece cut short: its start only, the rest never comes (or comes as the next chunk's start). */
const cut = fc.tuple(piece, fc.nat()).map(([bytes, at]) => bytes.slice(0, at % (bytes.length + 1)));
const chunk = fc
  .array(fc.oneof({ arbitrary: piece, weight: 6 }, { arbitrary: paste, weight: 1 }, { arbitrary: cut, weight: 2 }), { minLength: 1, maxLength: 4 })
  .map((pieces) => Uint8Array.from(pieces.flat().filter((byte) => !QUITS.has(byte))));

/** What a sane screen of kb tui holds: its header on top, nothing wider than the terminal, no error of the process. */
function insane(screen: string): string | undefined {
  const lines = screen.replace(/\n+$/, '').split('\n');
  if (!/^kb {2}(read-only {2})?profile local/.test(lines[0] ?? '')) return 'the header is not on the first line';
  if (lines.length > ROWS) return `${lines.length} lines on a terminal of ${ROWS}`;
  const wide = lines.find((line) => stringWidth(line) > COLUMNS);
  if (wide !== undefined) return `a line wider than ${COLUMNS} columns: ${JSON.stringify(wide)}`;
  if (screen.includes('kb-exit=')) return 'kb tui has exited';
  if (/TypeError|^\s+at .+:\d+:\d+\)?$/m.test(screen)) return 'a stack trace is on screen';
  return undefined;
}

describe('kb tui fuzzed in a real terminal (tmux), against kb serve', () => {
  // $EDITOR for E: one that changes nothing and returns at once.
  const served = servedForTmux([['ns', 'create', 'docs', '--description', 'Product docs'], ['base', 'create', 'docs', 'faq', '--description', 'Questions']], { EDITOR: 'true', VISUAL: undefined });

  const screens: readonly { name: string; flags: readonly string[]; setup: readonly string[]; ready: string }[] = [
    { name: 'the namespaces list', flags: [], setup: [], ready: 'namespaces (' },
    { name: 'the filter', flags: ['docs'], setup: ['/'], ready: 'esc clears it' },
    { name: 'a form', flags: [], setup: ['n'], ready: 'New namespace' },
    { name: 'the bases list with --readonly', flags: ['docs', '--readonly'], setup: [], ready: 'bases (' },
  ];

  screens.forEach(({ name, flags, setup, ready }, i) => {
    it.skipIf(!TMUX)(`${name}: random byte streams end nothing, the screen stays the app's, and keys still work${SKIPPED}`, async () => {
      const seed = SEED + i;
      const replay = `(seed ${seed}: KB_TUI_FUZZ_SEED=${SEED} replays the run)`;
      const tui = served.session();
      await tui.start(COLUMNS, ROWS, ...flags, '--refresh', '0');
      await tui.waitFor((s) => /^kb {2}(read-only {2})?profile local/.test(s) && /(namespaces|bases) \(\d+\)/.test(s), 'the first list');
      if (setup.length > 0) await tui.keys(...setup);
      await tui.waitFor(ready);
      const chunks = fc.sample(chunk, { seed, numRuns: CHUNKS });
      for (const [n, bytes] of chunks.entries()) {
        await tui.bytes(bytes);
        // Every tenth chunk, and after the last, the screen is looked at.
        if (n % 10 === 9 || n === chunks.length - 1) {
          await sleep(100);
          const screen = await tui.screen();
          expect(insane(screen), `after chunk ${n} ${replay}: ${Buffer.from(bytes).toString('hex')}\n${screen}`).toBeUndefined();
        }
      }
      // Alive and answering: a paste left open is closed, esc backs out of whatever is open, and ? opens the help.
      await tui.bytes(Uint8Array.from(ascii('\u001B[201~')));
      for (let n = 0; n < 4; n++) {
        await tui.keys('Escape');
        await sleep(150);
      }
      await tui.keys('?');
      const screen = await tui.waitFor((s) => s.includes('Help: keys') || s.includes('kb-exit='), `the help ${replay}`);
      expect(insane(screen), `${replay}\n${screen}`).toBeUndefined();
      expect(screen, replay).toContain('Help: keys');
    }, 180_000);
  });

  // Found by this fuzz (KB_TUI_FUZZ_SEED=1378440995): each key waits for the render of the one before, and 80 of them
  // handed on from React's commits in a row ended kb tui with React's error #185 (Maximum update depth exceeded).
  it.skipIf(!TMUX)(`a form takes 80 arrow keys and 70 characters in one write each, and stays alive${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(COLUMNS, ROWS, '--refresh', '0');
    await tui.waitFor((s) => /namespaces \(\d+\)/.test(s), 'the first list');
    await tui.keys('n');
    await tui.waitFor('New namespace');
    await tui.bytes(Uint8Array.from(Array.from({ length: 80 }, () => ascii('\u001B[B')).flat()));
    await tui.bytes(Uint8Array.from(ascii('x'.repeat(70))));
    const screen = await tui.waitFor((s) => s.includes(`[${'x'.repeat(70)}`) || s.includes('kb-exit='), 'the 70 characters typed');
    expect(insane(screen), screen).toBeUndefined();
  }, 180_000);
});
