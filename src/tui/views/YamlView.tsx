import { Text } from 'ink';
import { useMemo, useState } from 'react';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, hintsFor } from '../keymap.js';
import { printable, wrapText } from '../text.js';
import { useTheme } from '../theme.js';

/** A field of a row as YAML: text always double-quoted (a key such as `null` or `123` stays a string), none as null. */
function yamlValue(value: string | null | undefined): string {
  return value === null || value === undefined ? 'null' : JSON.stringify(value);
}

/** A namespace or a base as YAML, as `kb export` names the fields; a description not read is left out. */
export function rowYaml(fields: readonly (readonly [name: string, value: string | null | undefined])[]): string {
  return fields
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}: ${yamlValue(value)}`)
    .join('\n');
}

/** What `y` shows (k9s's YAML view): the text wrapped to the width, scrolled with j/k, PgUp/PgDn, g/G. */
export function YamlView(props: { title: string; text: string; width: number; height: number; onClose(): void }) {
  const { quit } = useTui();
  const theme = useTheme();
  const [top, setTop] = useState(0);
  const lines = useMemo(
    () => props.text.split('\n').flatMap((line) => wrapText(printable(line), props.width).map((part, i) => (i === 0 ? part : `  ${part}`))),
    [props.text, props.width],
  );
  const size = bodyHeight(props.height);
  const maxTop = Math.max(0, lines.length - size);
  const scroll = (to: number) => setTop(Math.max(0, Math.min(maxTop, to)));

  useKeys((input, key) => {
    const command = commandFor(input, key, 'yaml');
    if (command === 'up') return scroll(top - 1);
    if (command === 'down') return scroll(top + 1);
    if (command === 'pageUp') return scroll(top - size);
    if (command === 'pageDown') return scroll(top + size);
    if (command === 'first') return scroll(0);
    if (command === 'last') return scroll(maxTop);
    if (command === 'quit') return quit();
    if (command === 'back' || command === 'yaml' || command === 'help' || command === 'open') return props.onClose();
  }, true);

  const from = Math.min(top, maxTop);
  return (
    <Screen
      height={props.height}
      width={props.width}
      title={<Text color={theme.accent}>{props.title}</Text>}
      aside={lines.length > size ? `${from + 1}-${Math.min(lines.length, from + size)}/${lines.length}` : undefined}
      status={<StatusLines status={lines.length > size ? { tone: 'info', text: 'j/k scrolls.' } : undefined} />}
      hints={hintsFor('yaml')}
    >
      {lines.slice(from, from + size).map((line, i) => (
        <Text key={`${from + i}`} wrap="truncate-end">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Screen>
  );
}
