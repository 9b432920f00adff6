import { Text } from 'ink';
import { editText, type TextState } from '../hooks/textEdit.js';
import { isEnter, type Keypress } from '../keymap.js';
import { useTheme } from '../theme.js';
import { StatusLines } from './StatusLines.js';
import { TextField } from './TextField.js';

/** What a key does to a one-line prompt (the filter `/`, the command line `:`). */
export type PromptKey = { kind: 'cancel' } | { kind: 'submit' } | { kind: 'edit'; text: TextState } | undefined;

export function promptKey(text: TextState, input: string, key: Keypress): PromptKey {
  if (key.escape) return { kind: 'cancel' };
  if (isEnter(input, key)) return { kind: 'submit' };
  const edited = editText(text, input, key);
  return edited === undefined ? undefined : { kind: 'edit', text: edited };
}

export const COMMAND_LINE_HINT = ':ns lists namespaces, :ns KEY opens one, :profile NAME, :help, :q quits; esc cancels';

/** A prompt in the status lines: its sign and the text being typed, then what it does. */
export function PromptLines({ sign, text, width, hint }: { sign: string; text: TextState; width: number; hint: string }) {
  const theme = useTheme();
  return (
    <StatusLines>
      <Text wrap="truncate-end">
        <Text bold color={theme.accent}>{sign}</Text>
        <TextField state={text} focused width={Math.max(4, width - 2)} />
      </Text>
      <Text wrap="truncate-end" dimColor={theme.muted}>
        {hint}
      </Text>
    </StatusLines>
  );
}
