import { Text } from 'ink';
import { complete } from '../history.js';
import { editText, textAt, type TextState } from '../hooks/textEdit.js';
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

/** The `:` command line: its text, and how far back in the history Up has gone (0: the line being typed). */
export interface CommandLine {
  text: TextState;
  recall: number;
}

export const EMPTY_COMMAND_LINE: CommandLine = { text: textAt(''), recall: 0 };

/** What a key does on the command line: Up/Down recall earlier lines, Tab completes, the rest as in any prompt. */
export function commandLineKey(
  line: CommandLine,
  input: string,
  key: Keypress,
  history: readonly string[],
  namespaces: readonly string[],
  profiles: readonly string[] = [],
): { kind: 'cancel' } | { kind: 'submit' } | { kind: 'edit'; line: CommandLine } | undefined {
  if (key.paste !== true) {
    const recalled = (recall: number): CommandLine => ({ text: textAt(recall === 0 ? '' : (history[history.length - recall] ?? '')), recall });
    if (key.upArrow) return line.recall >= history.length ? undefined : { kind: 'edit', line: recalled(line.recall + 1) };
    if (key.downArrow) return line.recall === 0 ? undefined : { kind: 'edit', line: recalled(line.recall - 1) };
    if (key.tab && !key.shift) {
      const completed = complete(line.text.value, namespaces, profiles);
      return completed === undefined ? undefined : { kind: 'edit', line: { text: textAt(completed), recall: line.recall } };
    }
  }
  const typed = promptKey(line.text, input, key);
  return typed?.kind === 'edit' ? { kind: 'edit', line: { text: typed.text, recall: line.recall } } : typed;
}

export const COMMAND_LINE_HINT = ':ns lists namespaces, :ns KEY opens one, :ctx picks a profile, :help, :q quits; tab completes, up/down recall; esc cancels';

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
