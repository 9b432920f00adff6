import type { IO } from './io.js';

// Control characters in a key or description would break a row apart or move the cursor.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F]/g;

/** Cuts text to a width in code points, marking the cut; control characters become spaces so a row stays one line. */
export function fit(text: string, width: number): string {
  const clean = text.replace(CONTROL, ' ');
  const chars = [...clean];
  if (chars.length <= width) return clean;
  if (width <= 1) return chars.slice(0, width).join('');
  return `${chars.slice(0, width - 1).join('')}…`;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - [...text].length));
}

export interface Column<T> {
  header: string;
  get(row: T): string;
}

/**
 * A plain table: a header and one line a row, columns separated by two spaces. On a terminal the last
 * column is cut to fit its width, never wrapped; piped, rows are written whole.
 */
export function renderTable<T>(io: IO, rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => column.get(row).replace(CONTROL, ' ')));
  const widths = columns.map((column, i) => Math.max([...column.header].length, ...cells.map((row) => [...(row[i] ?? '')].length)));
  if (io.columns !== undefined && widths.length > 0) {
    const fixed = widths.slice(0, -1).reduce((sum, width) => sum + width + 2, 0);
    const last = widths.length - 1;
    widths[last] = Math.max(8, Math.min(widths[last] ?? 0, io.columns - fixed));
  }
  const line = (values: readonly string[]) =>
    values.map((value, i) => (i === values.length - 1 ? fit(value, widths[i] ?? 0) : pad(fit(value, widths[i] ?? 0), widths[i] ?? 0))).join('  ').trimEnd();
  return [line(columns.map((column) => column.header)), ...cells.map(line)].join('\n') + '\n';
}

/** A short key/value block for one object. */
export function renderObject(record: Record<string, string | null | undefined>): string {
  const entries = Object.entries(record);
  const width = Math.max(...entries.map(([key]) => key.length));
  return entries.map(([key, value]) => `${pad(`${key}:`, width + 1)} ${value ?? '-'}`).join('\n') + '\n';
}

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
