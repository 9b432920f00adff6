/**
 * Characters of a server's text that must not reach a terminal as they are: they would move the cursor, recolour or
 * retitle the terminal, or reorder what it shows (a bidi override makes `exe.txt` read `txt.exe`). The CLI and the
 * TUI show them alike, as visible escapes.
 */

/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const code = char.codePointAt(0) as number;
  return NAMED[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * Control characters as visible escapes (`\x1b`, `\n`, `\u202e`); everything else as it is. `keepLayout` keeps newlines and
 * tabs, for kb's (and oclif's) own messages, which are laid out with them; `layoutAsSpace` makes them spaces, for one
 * line of a list.
 */
export function escapeControls(text: string, options: { keepLayout?: boolean; layoutAsSpace?: boolean } = {}): string {
  return text.replace(UNSAFE, (char) => {
    const layout = char === '\n' || char === '\t' || char === '\r';
    if (layout && options.layoutAsSpace) return ' ';
    return options.keepLayout && (char === '\n' || char === '\t') ? char : escapeOne(char);
  });
}

/** What JSON.stringify leaves as it is of UNSAFE: DEL, the C1 controls and the bidi characters. */
const UNSAFE_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** Whether text holds a character that JSON.stringify (or YAML) would leave to drive or reorder a terminal. */
export function hasJsonUnsafe(text: string): boolean {
  return text.search(UNSAFE_IN_JSON) !== -1;
}

/**
 * JSON text (as JSON.stringify writes it) with the characters that would drive or reorder a terminal written as
 * `\uXXXX` escapes: the same JSON value, byte for byte different only where a terminal would have been fooled.
 * Outside strings JSON has none of them, so escaping them anywhere is escaping them within strings.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}
