import { Text } from 'ink';
import { useMemo, useState } from 'react';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, type HelpTopic, helpSections, hintsFor } from '../keymap.js';
import { cell, cut, displayWidth, wrapWords } from '../text.js';
import { useTheme } from '../theme.js';

/** Columns between the keys and what they do: never fewer, so the two never run together. */
const GAP = 3;
const INDENT = 2;
/** The narrowest the column of what keys do gets: on a terminal narrower than this, lines are cut instead. */
const MIN_DOES = 12;

type Line = { kind: 'title'; text: string } | { kind: 'key'; keys: string; does: string } | { kind: 'blank' };

/**
 * The help as lines of `width` columns, in two columns: the keys, as wide as the widest (at most a third of the
 * width, cut with "…" beyond), a gap of three, then what they do, wrapped within its column. A wrapped line leaves
 * the keys column blank, so the columns stay apart at any width.
 */
export function helpLines(topic: HelpTopic, width: number, readonly = false): readonly Line[] {
  const sections = helpSections(topic, readonly);
  const widest = Math.max(...sections.flatMap((section) => section.keys.map(([keys]) => displayWidth(keys))));
  const keysWidth = Math.min(widest, Math.max(4, Math.floor(width / 3)));
  const doesWidth = Math.max(MIN_DOES, width - INDENT - keysWidth - GAP);
  return sections.flatMap((section, i): Line[] => [
    ...(i > 0 ? [{ kind: 'blank' } as const] : []),
    { kind: 'title', text: section.title },
    ...section.keys.flatMap(([keys, does]) =>
      wrapWords(does, doesWidth).map((part, j) => ({ kind: 'key', keys: cell(j === 0 ? keys : '', keysWidth), does: part }) as const),
    ),
  ]);
}

/** The keys of the screen `?` was pressed on (and of the forms it opens). Scrolls when the terminal is short. */
export function HelpView(props: { topic: HelpTopic; readonly?: boolean; active: boolean; width: number; height: number; onClose(): void }) {
  const { topic, active, width, height, onClose } = props;
  const readonly = props.readonly ?? false;
  const { quit } = useTui();
  const theme = useTheme();
  const [top, setTop] = useState(0);
  const lines = useMemo(() => helpLines(topic, width, readonly), [topic, width, readonly]);
  const size = bodyHeight(height);
  const maxTop = Math.max(0, lines.length - size);
  const scroll = (delta: number) => setTop((current) => Math.max(0, Math.min(maxTop, current + delta)));

  useKeys(
    (input, key) => {
      const command = commandFor(input, key, 'help');
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
      hints={hintsFor('help')}
    >
      {shown.map((line, i) =>
        line.kind === 'blank' ? (
          <Text key={`${from + i}`}> </Text>
        ) : line.kind === 'title' ? (
          <Text key={`${from + i}`} bold color={theme.accent}>
            {cut(line.text, width)}
          </Text>
        ) : (
          <Text key={`${from + i}`} wrap="truncate-end">
            {' '.repeat(INDENT)}
            <Text bold>{line.keys}</Text>
            {' '.repeat(GAP)}
            {line.does}
          </Text>
        ),
      )}
    </Screen>
  );
}
