import { Text } from 'ink';
import { useState } from 'react';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, HELP_SECTIONS } from '../keymap.js';
import { useTheme } from '../theme.js';

const KEYS_WIDTH = 22;

type Line = { kind: 'title'; text: string } | { kind: 'key'; keys: string; does: string } | { kind: 'blank' };

const LINES: readonly Line[] = HELP_SECTIONS.flatMap((section, i): Line[] => [
  ...(i > 0 ? [{ kind: 'blank' } as const] : []),
  { kind: 'title', text: section.title },
  ...section.keys.map(([keys, does]) => ({ kind: 'key', keys, does }) as const),
]);

/** Every key, by where it works (`?`); scrolls when the terminal is short. */
export function HelpView({ active, width, height, onClose }: { active: boolean; width: number; height: number; onClose(): void }) {
  const { quit } = useTui();
  const theme = useTheme();
  const [top, setTop] = useState(0);
  const size = bodyHeight(height);
  const maxTop = Math.max(0, LINES.length - size);
  const scroll = (delta: number) => setTop((current) => Math.max(0, Math.min(maxTop, current + delta)));

  useKeys(
    (input, key) => {
      const command = commandFor(input, key);
      if (command === 'up') return scroll(-1);
      if (command === 'down') return scroll(1);
      if (command === 'pageUp') return scroll(-size);
      if (command === 'pageDown') return scroll(size);
      if (command === 'quit') return quit();
      if (command === 'back' || command === 'help' || command === 'open') return onClose();
    },
    active,
  );

  const shown = LINES.slice(Math.min(top, maxTop), Math.min(top, maxTop) + size);
  return (
    <Screen
      height={height}
      width={width}
      title={<Text color={theme.accent}>Help: keys</Text>}
      status={<StatusLines status={LINES.length > size ? { tone: 'info', text: 'j/k scrolls this help.' } : undefined} />}
      hints={[['esc/?', 'close help', 9], ['j/k', 'scroll', 5], ['q', 'quit', 9]]}
    >
      {shown.map((line, i) =>
        line.kind === 'blank' ? (
          <Text key={`blank-${i}`}> </Text>
        ) : line.kind === 'title' ? (
          <Text key={line.text} bold color={theme.accent}>
            {line.text}
          </Text>
        ) : (
          <Text key={`${line.keys}-${line.does}`} wrap="truncate-end">
            <Text bold>{`  ${line.keys}`.padEnd(KEYS_WIDTH)}</Text>
            {line.does}
          </Text>
        ),
      )}
    </Screen>
  );
}
