import type { Key } from 'ink';

const ESC = '\u001B';

/** The keys Ink names: a sequence that sets none of these (and brings no character) is no key kb knows. */
const NAMED: readonly (keyof Key)[] = ['upArrow', 'downArrow', 'leftArrow', 'rightArrow', 'pageUp', 'pageDown', 'home', 'end', 'return', 'escape', 'tab', 'backspace', 'delete'];

/** A CSI (`ESC [`) or SS3 (`ESC O`) sequence, also after a second ESC (alt), with at least one byte after its introducer. */
// eslint-disable-next-line no-control-regex -- ESC is what the sequences start with
const CSI_OR_SS3 = /^\u001B\u001B?[[O]./su;
/** ESC and one character: Alt and that character, or the start of a sequence cut short (`ESC [` alone). */
// eslint-disable-next-line no-control-regex -- ESC, then anything but a control character
const ALT_CHARACTER = /^\u001B[^\u0000-\u001F\u007F]$/u;

/**
 * The introducers of the control strings (ECMA-48 8.3.27): OSC `ESC ]` (a terminal's reply, a title), DCS `ESC P`,
 * SOS `ESC X`, PM `ESC ^`, APC `ESC _`. Their text runs to ST (`ESC \`) or, for OSC, BEL.
 */
const STRING_STARTS = new Set([']', 'P', 'X', '^', '_'].map((char) => `${ESC}${char}`));
const ST = `${ESC}\\`;

/** A control character that ends a control string: BEL ends an OSC, and CAN, SUB or any other C0 cuts one short. */
// eslint-disable-next-line no-control-regex -- the C0 controls but ESC
const STRING_END = /[\u0000-\u001A\u001C-\u001F]/u;

/**
 * What kb's key reader leaves out of what Ink's parser cut from the input (docs/contract.md, The TUI: no input ends
 * the TUI, every byte sequence is a key, text, or ignored):
 *
 * - A CSI or SS3 sequence Ink names no key for (Ctrl+F1 `ESC[1;5P`, SGR `ESC[31m`, focus `ESC[I`, xterm's
 *   modifyOtherKeys `ESC[27;5;97~`): ignored, rather than typed as its text without the ESC ("[1;2m").
 * - ESC and one character: Alt and a key, which no screen binds (Ink marks Alt only before a letter or digit; before
 *   `[` or `/` it would type or run that character), or a sequence cut short across reads: ignored.
 * - A control string (OSC, DCS, SOS, PM, APC) and its text up to its end: ignored, rather than its text read as keys
 *   (the `c` of an OSC 52 reply copying, its letters typed into a form). A string that is not ended within the read
 *   it came in ends with that read: Alt+] typed alone is one read, and what is typed after it is read as ever.
 *
 * Returns the function that takes each piece (`raw`, with Ink's `input` and `key` for it) and gives back the text of
 * `raw` still to read: `raw` itself, the part after a control string's end, or undefined when all of it is ignored.
 */
export function createSequenceFilter(endOfRead: (end: () => void) => void = setImmediate): (raw: string, input: string, key: Key) => string | undefined {
  let inString = false;
  return (raw, input, key) => {
    if (inString) {
      if (raw.startsWith(ESC)) {
        inString = false;
        // ST ends the string; any other sequence cuts it short, and is read as ever.
        if (raw === ST) return undefined;
      } else {
        const end = STRING_END.exec(raw);
        if (end === null) return undefined;
        inString = false;
        return raw.slice(end.index + 1);
      }
    }
    if (STRING_STARTS.has(raw)) {
      inString = true;
      endOfRead(() => {
        inString = false;
      });
      return undefined;
    }
    if (NAMED.some((flag) => key[flag] === true)) return raw;
    if (CSI_OR_SS3.test(raw) && Array.from(input).length !== 1) return undefined;
    if (ALT_CHARACTER.test(raw)) return undefined;
    return raw;
  };
}
