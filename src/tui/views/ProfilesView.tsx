import { Text } from 'ink';
import { useState } from 'react';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, type Hint } from '../keymap.js';
import { cut, printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { Status } from '../types.js';

const HINTS: readonly Hint[] = [
  ['j/k', 'move', 5],
  ['enter', 'switch', 9],
  ['esc', 'close', 9],
  ['q', 'quit', 8],
];

/**
 * The profile picker of `:ctx` (`:profile`) without a name, as k9s's `:ctx` lists its contexts: every profile in the
 * config dir, the one in use marked, enter switches to the selected one. `notice` says why it opened (a name that is
 * no profile): the whole list is then in view, rather than cut into one line.
 */
export function ProfilesView(props: {
  profiles: readonly string[] | undefined;
  /** Why the profiles could not be read, if they could not. */
  error: string | undefined;
  current: string | undefined;
  notice: Status | undefined;
  width: number;
  height: number;
  onPick(profile: string): void;
  onClose(): void;
}) {
  const { quit } = useTui();
  const theme = useTheme();
  const profiles = props.profiles ?? [];
  const [index, setIndex] = useState(() => Math.max(0, profiles.indexOf(props.current ?? '')));
  const size = bodyHeight(props.height);
  const at = Math.min(index, Math.max(0, profiles.length - 1));
  const top = Math.max(0, Math.min(at - size + 1, profiles.length - size), 0);
  const move = (to: number) => setIndex(Math.max(0, Math.min(profiles.length - 1, to)));

  useKeys((input, key) => {
    const command = commandFor(input, key, 'yaml');
    if (command === 'up') return move(at - 1);
    if (command === 'down') return move(at + 1);
    if (command === 'pageUp') return move(at - size);
    if (command === 'pageDown') return move(at + size);
    if (command === 'first') return move(0);
    if (command === 'last') return move(profiles.length - 1);
    if (command === 'quit') return quit();
    if (command === 'back') return props.onClose();
    if (command === 'open') {
      const picked = profiles[at];
      return picked === undefined ? props.onClose() : props.onPick(picked);
    }
  }, true);

  const status: Status | undefined =
    props.notice ?? (props.error === undefined ? undefined : { tone: 'error', text: `Cannot read the profiles: ${props.error}` });
  return (
    <Screen
      height={props.height}
      width={props.width}
      title={<Text color={theme.accent}>{props.profiles === undefined ? 'profiles' : `profiles (${profiles.length})`}</Text>}
      aside={profiles.length > 0 ? `${at + 1}/${profiles.length}` : undefined}
      status={<StatusLines status={status} />}
      hints={HINTS}
    >
      {props.profiles !== undefined && profiles.length === 0 ? <Text>No profiles saved: kb auth login --profile NAME saves one.</Text> : null}
      {profiles.slice(top, top + size).map((name, i) => {
        const selected = top + i === at;
        return (
          <Text key={name} bold={selected} color={selected ? theme.accent : undefined} wrap="truncate-end">
            {selected ? '>' : ' '}
            {name === props.current ? '*' : ' '}
            {cut(printable(name), Math.max(1, props.width - 2))}
            {name === props.current ? '  (in use)' : ''}
          </Text>
        );
      })}
    </Screen>
  );
}
