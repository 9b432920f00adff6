/**
 * Text from a server, made safe and measured for a terminal. Escaping keeps a key or description from moving the
 * cursor, recolouring or retitling the terminal, or reordering what it shows; display width is what a terminal
 * gives a string, so columns line up around wide characters, emoji and combining marks.
 */
import { displayWidth } from '../text/width.js';

/** Measured as Ink measures (src/text/width.ts): the same for the CLI's tables and the TUI. */
export { displayWidth, truncate } from '../text/width.js';
export { escapeControls, escapeJsonControls } from '../text/controls.js';

/** The text padded with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
