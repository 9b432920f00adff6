import type { Row } from './types.js';

/**
 * Text from the server as it may be shown: control characters (a newline, a tab, an escape sequence that would
 * drive the terminal) become spaces, so a description is always one line of plain text on a list.
 */
export function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ');
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

/** "1 namespace", "3 bases", "2 matches". */
export function count(n: number, noun: string): string {
  const plural = /(s|sh|ch|x)$/.test(noun) ? `${noun}es` : `${noun}s`;
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}
