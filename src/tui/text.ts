import type { Row } from './types.js';
import { escapeControls } from '../text/controls.js';
import { displayWidth, truncate as cut } from '../text/width.js';

/** Measured as Ink measures (src/text/width.ts): the same for the CLI's tables and the TUI. */
export { displayWidth, truncate as cut } from '../text/width.js';

/**
 * Text from the server as it may be shown, one line of plain text: a newline or a tab becomes a space, and any other
 * control character (an escape sequence that would drive the terminal, a bidi override that would reorder the line)
 * shows as the CLI shows it, `\x1b`, `\u202e` (src/text/controls.ts).
 */
export function printable(text: string): string {
  return escapeControls(text, { layoutAsSpace: true });
}

/**
 * The text in lines of at most `width` columns, broken at spaces; a word wider than a line is cut (with "…").
 * Always at least one line.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((part) => part !== '')) {
    const joined = line === '' ? word : `${line} ${word}`;
    if (displayWidth(joined) <= width) {
      line = joined;
      continue;
    }
    if (line !== '') lines.push(line);
    line = cut(word, width);
  }
  lines.push(line);
  return lines;
}

/**
 * The text in at most `maxLines` lines of at most `width` columns, broken at spaces (a word wider than a line is
 * broken too, nothing of it lost), no line starting with a space; when it needs more lines, the last one kept ends
 * with "…". Always at least one line.
 */
export function wrapText(text: string, width: number, maxLines = Number.POSITIVE_INFINITY): string[] {
  const size = Math.max(1, width);
  const lines: string[] = [];
  let line = '';
  const words = text.split(' ').filter((part) => part !== '');
  for (const word of words) {
    const joined = line === '' ? word : `${line} ${word}`;
    if (displayWidth(joined) <= size) {
      line = joined;
      continue;
    }
    if (line !== '') lines.push(line);
    line = '';
    for (const char of Array.from(word)) {
      if (displayWidth(line + char) > size && line !== '') {
        lines.push(line);
        line = '';
      }
      line += char;
    }
  }
  lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, Math.max(1, maxLines));
  const last = kept.length - 1;
  const full = kept[last] ?? '';
  kept[last] = displayWidth(full) < size ? `${full}…` : cut(`${full}…`, size);
  return kept;
}

/** A generated key (ns_<uuid>, kb_<uuid>): its prefix, the UUID's first 8 and last 4 digits, the rest in between. */
const GENERATED_KEY = /^(.*?[0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{8}([0-9a-f]{4})$/i;

/**
 * A key as a list shows it: a generated key's UUID elided in the middle (ns_d74edf02…9a1b), as long keys are
 * elided to fit `width`: keys differ at both ends (k01, k02; a UUID anywhere), so both stay. The whole key is in the
 * describe view (d) and the YAML (y), and `c` copies it whole. Keys are ASCII: one column a character.
 */
export function shownKey(key: string, width = Number.POSITIVE_INFINITY): string {
  const generated = GENERATED_KEY.exec(key);
  const short = generated === null ? key : `${generated[1]}…${generated[2]}`;
  if (short.length <= width) return short;
  if (width <= 1) return '…'.slice(0, Math.max(0, width));
  const head = Math.ceil((width - 1) / 2);
  const tail = width - 1 - head;
  return `${short.slice(0, head)}…${tail > 0 ? short.slice(-tail) : ''}`;
}

/** A cell of exactly `width` columns: the text cut to fit, then padded with spaces. */
export function cell(text: string, width: number): string {
  const fitted = cut(text, width);
  return fitted + ' '.repeat(Math.max(0, width - displayWidth(fitted)));
}

/** Keys compare in byte order, as the server orders them (keys are ASCII, so UTF-16 order is the same). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The rows with `row` in its place by key: replaced if its key is there, inserted in order otherwise. */
export function upsertRow<T extends Row>(rows: readonly T[] | undefined, row: T): T[] {
  const next = (rows ?? []).filter((existing) => existing.key !== row.key);
  const at = next.findIndex((existing) => compareKeys(existing.key, row.key) > 0);
  next.splice(at === -1 ? next.length : at, 0, row);
  return next;
}

export function removeRow<T extends Row>(rows: readonly T[] | undefined, key: string): T[] {
  return (rows ?? []).filter((existing) => existing.key !== key);
}

/** How a list is ordered: by key (as the server sends it) or by description, either way up. */
export interface SortOrder {
  by: 'key' | 'description';
  descending: boolean;
}

export const KEY_ORDER: SortOrder = { by: 'key', descending: false };

// Made on first use (a sort by description), off the first screen's path.
let collator: Intl.Collator | undefined;

/**
 * The rows in `order`. Rows come from the server in key order, so key order costs nothing and its reverse a copy;
 * by description, rows without one go last either way, and ties keep key order.
 */
export function sortRows<T extends Row>(rows: readonly T[], order: SortOrder): readonly T[] {
  if (order.by === 'key') return order.descending ? [...rows].reverse() : rows;
  const sign = order.descending ? -1 : 1;
  collator ??= new Intl.Collator('en', { sensitivity: 'base', numeric: true });
  const compare = collator.compare;
  return [...rows].sort((a, b) => {
    const x = a.description ?? '';
    const y = b.description ?? '';
    if (x === '' || y === '') return x === y ? compareKeys(a.key, b.key) : x === '' ? 1 : -1;
    return sign * compare(x, y) || compareKeys(a.key, b.key);
  });
}

/**
 * A whole number with commas between thousands: "100,000", as `toLocaleString('en-US')` writes it, but without
 * loading ICU's number formats, which cost the first screen some 10 to 40 ms the first time a number is formatted.
 */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** "1 namespace", "3 bases", "2 matches". */
export function count(n: number, noun: string): string {
  const plural = /(s|sh|ch|x)$/.test(noun) ? `${noun}es` : `${noun}s`;
  return `${thousands(n)} ${n === 1 ? noun : plural}`;
}

/** Under this many seconds, a list is as fresh as a refresh every few seconds keeps it: "just now", no count. */
export const JUST_NOW_SECONDS = 5;

/**
 * "just now", "7s ago", "2m ago", "1h ago": how long since `then`, in the largest whole unit. A count starts only at
 * 5 seconds, so a list just loaded (the first draw) or kept fresh by the refresh every 5 seconds reads as fresh,
 * and a count means a refresh is late or failing.
 */
export function ago(then: number, now: number): string {
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < JUST_NOW_SECONDS) return 'just now';
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  return `${Math.floor(seconds / 3600)}h ago`;
}
