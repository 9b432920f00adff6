/**
 * Text from a server, made safe and measured for a terminal. Escaping keeps a key or description from moving the
 * cursor, recolouring or retitling the terminal, or reordering what it shows; display width is what a terminal
 * gives a string, so columns line up around wide characters, emoji and combining marks.
 */
import { displayWidth } from '../text/width.js';

/** Measured as Ink measures (src/text/width.ts): the same for the CLI's tables and the TUI. */
export { displayWidth, truncate } from '../text/width.js';

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
 * tabs, for kb's (and oclif's) own messages, which are laid out with them.
 */
export function escapeControls(text: string, options: { keepLayout?: boolean } = {}): string {
  return text.replace(UNSAFE, (char) => (options.keepLayout && (char === '\n' || char === '\t') ? char : escapeOne(char)));
}

/** The text padded with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
