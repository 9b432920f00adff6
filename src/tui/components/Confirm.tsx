import { Text } from 'ink';
import { useKeys } from '../hooks/useKeys.js';
import { printable } from '../text.js';
import { useTheme } from '../theme.js';

/** A yes/no question in the status lines: `y` confirms, any other key cancels (docs/contract.md, The TUI). */
export function Confirm({ question, active, onAnswer }: { question: string; active: boolean; onAnswer(yes: boolean): void }) {
  const theme = useTheme();
  // A paste is text, never the answer: it cancels, as any other key.
  useKeys((input, key) => onAnswer(key.paste !== true && (input === 'y' || input === 'Y')), active);
  return (
    <>
      <Text wrap="truncate-end" bold color={theme.warning}>
        {printable(question)}
      </Text>
      <Text wrap="truncate-end">
        <Text bold color={theme.accent}>y</Text> confirms, any other key cancels
      </Text>
    </>
  );
}
