import { Text } from 'ink';
import { Fragment } from 'react';
import type { Hint } from '../keymap.js';
import { useTheme } from '../theme.js';

const GAP = 2;

function widthOf([keys, does]: Hint): number {
  return keys.length + 1 + does.length;
}

function totalWidth(hints: readonly Hint[]): number {
  return hints.reduce((sum, hint, i) => sum + widthOf(hint) + (i > 0 ? GAP : 0), 0);
}

/** The hints that fit in `width` columns, in their order: those that matter least go first, ties from the left. */
export function fitHints(hints: readonly Hint[], width: number): readonly Hint[] {
  const kept = [...hints];
  while (kept.length > 1 && totalWidth(kept) > width) {
    let drop = 0;
    kept.forEach((hint, i) => {
      if ((hint[2] ?? 5) < (kept[drop]?.[2] ?? 5)) drop = i;
    });
    kept.splice(drop, 1);
  }
  return kept;
}

/** The key-help line at the bottom: what the keys do right now. */
export function KeyHelp({ hints, width }: { hints: readonly Hint[]; width: number }) {
  const theme = useTheme();
  return (
    <Text wrap="truncate-end">
      {fitHints(hints, width).map(([keys, does], i) => (
        <Fragment key={`${keys}:${does}`}>
          {i > 0 ? '  ' : ''}
          <Text bold color={theme.accent}>{keys}</Text> {does}
        </Fragment>
      ))}
    </Text>
  );
}
