import { Text } from 'ink';
import { memo } from 'react';
import { cell, printable, shownKey } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row } from '../types.js';

/** Columns of the markers (">" the selection, "*" a row marked with space), and between the key and the description. */
export const MARKER = 2;
export const GAP = 2;

/** One row of a Table: the selection marker, the key and the description, each cut to its column. */
export const TableRow = memo(function TableRow(props: { row: Row; selected: boolean; marked?: boolean; keyWidth: number; descriptionWidth: number }) {
  const theme = useTheme();
  const { row, selected } = props;
  const description = row.description === undefined ? '(description not read)' : printable(row.description ?? '');
  return (
    <Text bold={selected} color={selected ? theme.accent : undefined}>
      {selected ? '>' : ' '}
      {props.marked === true ? '*' : ' '}
      {cell(shownKey(row.key, props.keyWidth), props.keyWidth)}
      {' '.repeat(GAP)}
      <Text dimColor={theme.muted && (!selected || row.description === undefined)}>{cell(description, props.descriptionWidth).trimEnd()}</Text>
    </Text>
  );
});
