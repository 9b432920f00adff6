import { Box, Text } from 'ink';
import { useMemo } from 'react';
import { shownKey, type SortOrder } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row } from '../types.js';
import { GAP, MARKER, TableRow } from './TableRow.js';

/** The widest a key column gets, as a share of the width: the description needs room too. */
const KEY_SHARE = 0.45;

/**
 * The column widths: the key column as wide as the longest key as shown (a generated key's UUID elided: shownKey;
 * keys are ASCII, one column a character), within its share.
 */
export function columns(rows: readonly Row[], width: number): { key: number; description: number } {
  let longest = 'KEY↓'.length;
  for (const row of rows) {
    // A key is never shown longer than it is: only a longer one needs a look.
    if (row.key.length <= longest) continue;
    const shown = shownKey(row.key).length;
    if (shown > longest) longest = shown;
  }
  const key = Math.max(4, Math.min(longest, Math.floor((width - MARKER) * KEY_SHARE)));
  return { key, description: Math.max(0, width - MARKER - key - GAP) };
}

/**
 * A column heading of exactly `width` columns, its sort order marked with an arrow. Every character of it takes one
 * column, so it is measured by its length: the first screen never needs the Unicode rules of `cell`.
 */
function heading(label: string, by: SortOrder['by'], order: SortOrder, width: number): string {
  const text = order.by === by ? `${label}${order.descending ? '↓' : '↑'}` : label;
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * A list as a table: a header row (KEY, DESCRIPTION, the sort order marked by an arrow), then the rows that fit,
 * `height` of them from `top`, and no others, so a list of 100,000 costs what a screen costs. Every line is cut to
 * the width by display width (wide characters, emoji, combining marks), ending in "…" where it was cut: nothing
 * wraps. The selection is marked with ">" (and color, where there is color), the rows marked with space with "*".
 */
export function Table(props: {
  all: readonly Row[];
  rows: readonly Row[];
  order: SortOrder;
  top: number;
  index: number;
  height: number;
  width: number;
  marked?: ReadonlySet<string> | undefined;
}) {
  const theme = useTheme();
  // Measured over every row, not those on screen, so the columns stay put while the list scrolls.
  const widths = useMemo(() => columns(props.all, props.width), [props.all, props.width]);
  const shown = props.rows.slice(props.top, props.top + props.height);
  return (
    <Box flexDirection="column">
      <Text bold dimColor={theme.muted}>
        {' '.repeat(MARKER)}
        {heading('KEY', 'key', props.order, widths.key)}
        {' '.repeat(GAP)}
        {heading('DESCRIPTION', 'description', props.order, widths.description).trimEnd()}
      </Text>
      {shown.map((row, i) => (
        <TableRow key={row.key} row={row} selected={props.top + i === props.index} marked={props.marked?.has(row.key) ?? false} keyWidth={widths.key} descriptionWidth={widths.description} />
      ))}
    </Box>
  );
}
