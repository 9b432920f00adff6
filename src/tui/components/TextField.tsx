import { Text } from 'ink';
import type { TextState } from '../hooks/textEdit.js';

/**
 * One line of editable text, `width` columns wide. Longer text scrolls sideways to keep the cursor in view; the
 * cursor is drawn in reverse video, which reads without color.
 */
export function TextField({ state, focused, width }: { state: TextState; focused: boolean; width: number }) {
  const chars = Array.from(state.value);
  const span = Math.max(1, width - 1);
  if (!focused) return <Text wrap="truncate-end">{chars.length === 0 ? ' ' : chars.join('')}</Text>;
  const cursor = Math.min(state.cursor, chars.length);
  const start = Math.max(0, cursor - span + 1);
  const visible = chars.slice(start, start + span);
  const at = cursor - start;
  return (
    <Text wrap="truncate-end">
      {visible.slice(0, at).join('')}
      <Text inverse>{visible[at] ?? ' '}</Text>
      {visible.slice(at + 1).join('')}
    </Text>
  );
}
