import { Box, Text } from 'ink';
import { memo } from 'react';
import { printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row } from '../types.js';

/** The widest a key column gets, as a share of the width: the description needs room too. */
const KEY_SHARE = 0.45;

/**
 * The rows of a list that fit: `height` of them from `top`, and no others, so a list of 10,000 costs what a screen
 * costs. The selection is marked with ">" (and color, where there is color).
 */
export function RowList(props: { rows: readonly Row[]; top: number; index: number; height: number; width: number }) {
  const shown = props.rows.slice(props.top, props.top + props.height);
  const longest = shown.reduce((max, row) => Math.max(max, row.key.length), 3);
  const keyWidth = Math.max(3, Math.min(longest, Math.floor(props.width * KEY_SHARE)));
  return (
    <Box flexDirection="column">
      {shown.map((row, i) => (
        <RowLine key={row.key} row={row} selected={props.top + i === props.index} keyWidth={keyWidth} />
      ))}
    </Box>
  );
}

const RowLine = memo(function RowLine({ row, selected, keyWidth }: { row: Row; selected: boolean; keyWidth: number }) {
  const theme = useTheme();
  const key = row.key.length > keyWidth ? `${row.key.slice(0, keyWidth - 1)}~` : row.key.padEnd(keyWidth);
  const description = row.description === undefined ? '(description not read)' : printable(row.description ?? '');
  return (
    <Text wrap="truncate-end" bold={selected} color={selected ? theme.accent : undefined}>
      {selected ? '> ' : '  '}
      {key}
      {'  '}
      <Text dimColor={theme.muted && (!selected || row.description === undefined)}>{description}</Text>
    </Text>
  );
});
