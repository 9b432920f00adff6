import type { IO } from './io.js';
import { displayWidth, escapeControls, escapeJsonControls, padEnd, truncate } from './text.js';

/** Text for one line of a table or block: control characters escaped, cut to `width` columns with `…`. */
export function fit(text: string, width: number): string {
  return truncate(escapeControls(text), width);
}

export interface Column<T> {
  header: string;
  get(row: T): string;
}

/** No column is cut narrower than this, however narrow the terminal. */
const MIN_COLUMN = 8;
const GAP = 2;

/**
 * Column widths that fit `columns` terminal columns: the widest column gives way first, never below MIN_COLUMN
 * (nor below its own width), until the table fits or nothing more can give.
 */
function fitWidths(natural: readonly number[], columns: number): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((sum, width) => sum + width, 0) + GAP * (widths.length - 1);
  while (total() > columns) {
    let widest = -1;
    widths.forEach((width, i) => {
      if (width > MIN_COLUMN && (widest < 0 || width >= (widths[widest] as number))) widest = i;
    });
    if (widest < 0) break;
    const others = total() - (widths[widest] as number);
    widths[widest] = Math.max(MIN_COLUMN, columns - others);
  }
  return widths;
}

/**
 * A plain table: a header and one line a row, columns separated by two spaces, lined up by display width (wide
 * characters, emoji, combining marks). Text from the server has its control characters escaped. On a terminal the
 * table fits its width, cells cut with `…`; piped, rows are written whole.
 */
export function renderTable<T>(io: Pick<IO, 'columns'>, rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = [columns.map((column) => column.header), ...rows.map((row) => columns.map((column) => escapeControls(column.get(row))))];
  const natural = columns.map((_, i) => Math.max(...cells.map((row) => displayWidth(row[i] ?? ''))));
  const widths = io.columns === undefined ? natural : fitWidths(natural, io.columns);
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => {
        const cut = truncate(value, widths[i] ?? 0);
        return i === values.length - 1 ? cut : padEnd(cut, widths[i] ?? 0);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  return `${cells.map(line).join('\n')}\n`;
}

/** A short key/value block for one object; values have their control characters escaped. */
export function renderObject(record: Record<string, string | null | undefined>): string {
  const entries = Object.entries(record);
  const width = Math.max(...entries.map(([key]) => displayWidth(key)));
  return entries.map(([key, value]) => `${padEnd(`${key}:`, width + 1)} ${value === null || value === undefined ? '-' : escapeControls(value)}`).join('\n') + '\n';
}

/**
 * --json output: exactly the data. On a terminal, the characters that would drive or reorder it are written as
 * `\uXXXX` escapes, which is the same JSON value; to a pipe or a file the bytes are JSON.stringify's.
 */
export function renderJson(value: unknown, terminal = false): string {
  const json = JSON.stringify(value, null, 2);
  return `${terminal ? escapeJsonControls(json) : json}\n`;
}

/**
 * -o yaml: the data as YAML (the yaml package, loaded only for it). On a terminal, characters that would drive or
 * reorder it are shown escaped, as for --json.
 */
export async function renderYaml(value: unknown, terminal = false): Promise<string> {
  // The default export: the bundle keeps the package's CommonJS form, whose named exports a dynamic import does not see.
  const YAML = (await import('yaml')).default;
  const text = YAML.stringify(value, { lineWidth: 0 });
  return terminal ? escapeControls(text, { keepLayout: true }) : text;
}
