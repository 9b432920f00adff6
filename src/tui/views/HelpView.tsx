import { Text } from 'ink';
import { useMemo, useState } from 'react';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, type HelpTopic, helpSections } from '../keymap.js';
import { cell, cut, displayWidth } from '../text.js';
import { useTheme } from '../theme.js';

/** Columns between the keys and what they do: never fewer, so the two never run together. */
const GAP = 3;
const INDENT = 2;

type Line = { kind: 'title'; text: string } | { kind: 'key'; keys: string; does: string } | { kind: 'blank' };

function linesOf(topic: HelpTopic): readonly Line[] {
  return helpSections(topic).flatMap((section, i): Line[] => [
    ...(i > 0 ? [{ kind: 'blank' } as const] : []),
    { kind: 'title', text: section.title },
    ...section.keys.map(([keys, does]) => ({ kind: 'key', keys, does }) as const),
  ]);
}

/**
 * The keys of the screen `?` was pressed on, in two columns: the keys, as wide as the widest (at most a third of the
 * width, cut with "…" beyond), a gap, then what they do, cut to the width. Scrolls when the terminal is short.
 */
export function HelpView({ topic, active, width, height, onClose }: { topic: HelpTopic; active: boolean; width: number; height: number; onClose(): void }) {
  const { quit } = useTui();
  const theme = useTheme();
  const [top, setTop] = useState(0);
  const lines = useMemo(() => linesOf(topic), [topic]);
  const size = bodyHeight(height);
  const maxTop = Math.max(0, lines.length - size);
  const scroll = (delta: number) => setTop((current) => Math.max(0, Math.min(maxTop, current + delta)));
  const keysWidth = Math.min(
    Math.max(...lines.map((line) => (line.kind === 'key' ? displayWidth(line.keys) : 0))),
    Math.max(4, Math.floor(width / 3)),
  );
  const doesWidth = Math.max(0, width - INDENT - keysWidth - GAP);

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

  const from = Math.min(top, maxTop);
  const shown = lines.slice(from, from + size);
  return (
    <Screen
      height={height}
      width={width}
      title={<Text color={theme.accent}>{`Help: keys (${topic === 'base' ? 'a base' : topic})`}</Text>}
      status={<StatusLines status={lines.length > size ? { tone: 'info', text: 'j/k scrolls this help.' } : undefined} />}
      hints={[['esc/?', 'close help', 9], ['j/k', 'scroll', 5], ['q', 'quit', 9]]}
    >
      {shown.map((line, i) =>
        line.kind === 'blank' ? (
          <Text key={`blank-${i}`}> </Text>
        ) : line.kind === 'title' ? (
          <Text key={line.text} bold color={theme.accent}>
            {cut(line.text, width)}
          </Text>
        ) : (
          <Text key={`${line.keys}-${line.does}`}>
            {' '.repeat(INDENT)}
            <Text bold>{cell(line.keys, keysWidth)}</Text>
            {' '.repeat(GAP)}
            {cut(line.does, doesWidth)}
          </Text>
        ),
      )}
    </Screen>
  );
}
