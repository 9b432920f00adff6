import { Box, Text } from 'ink';
import { useState } from 'react';
import { COMMAND_LINE_HINT, type CommandLine, commandLineKey, EMPTY_COMMAND_LINE, PromptLines } from '../components/Prompt.js';
import { bodyHeight, Screen } from '../components/Screen.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { useKeys } from '../hooks/useKeys.js';
import { type RowOps, useRowFlow } from '../hooks/useRowFlow.js';
import { commandFor, type Hint, hintsFor, type Keypress, PROMPT_HINTS, READ_ONLY_STATUS, WRITES } from '../keymap.js';
import { copied } from './ListView.js';
import { rowYaml } from './YamlView.js';
import { cut, printable, wrapText } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row, Status } from '../types.js';

export interface BaseViewProps {
  active: boolean;
  width: number;
  height: number;
  /** Where the base is, e.g. ["local", "docs"]. */
  crumbs: readonly string[];
  row: Row;
  /** False when the base is not in the list any more (deleted elsewhere). */
  listed: boolean;
  ops: RowOps;
  status: Status | undefined;
  setStatus(status: Status | undefined): void;
  /** Undefined where a single base cannot be read again (no base_list). */
  onRefresh: (() => void) | undefined;
  /** Back to the list: esc, or once the base is deleted. */
  onBack(): void;
}

/** One base: its namespace, key and whole description, with the same edit and delete flow as the lists. */
export function BaseView(props: BaseViewProps) {
  const { showHelp, showYaml, quit, terminal, run, readonly, disabled, history, remember, namespaceKeys, profileNames } = useTui();
  const theme = useTheme();
  const { row, setStatus } = props;
  const [command, setCommand] = useState<CommandLine | undefined>(undefined);
  const flow = useRowFlow(props.ops, { active: props.active, width: props.width, height: bodyHeight(props.height), setStatus, onDeleted: props.onBack });

  const onKey = (input: string, key: Keypress) => {
    const found = commandFor(input, key, 'base');
    const command = found !== undefined && disabled.includes(found) ? undefined : found;
    // A message stays until the next key (docs/contract.md, The TUI): this key's own outcome may replace it.
    if (props.status !== undefined) setStatus(undefined);
    if (readonly && found !== undefined && WRITES.includes(found)) return setStatus(READ_ONLY_STATUS);
    if (flow.start(command, row)) return;
    switch (command) {
      case 'refresh':
        setStatus(props.onRefresh ? undefined : { tone: 'warning', text: 'This deployment cannot read a single base: nothing to refresh.' });
        return props.onRefresh?.();
      case 'copy':
        terminal.copy(row.key);
        return setStatus(copied(row.key));
      case 'commandLine': return setCommand(EMPTY_COMMAND_LINE);
      case 'back':
        setStatus(undefined);
        return props.onBack();
      case 'help': return showHelp('base');
      case 'yaml': return showYaml(`base ${row.key}`, rowYaml([['namespace', props.crumbs.at(-1) ?? ''], ['key', row.key], ['description', row.description]]));
      case 'quit': return quit();
      default: return;
    }
  };

  const onCommandKey = (input: string, key: Keypress, line: CommandLine) => {
    const typed = commandLineKey(line, input, key, history, namespaceKeys.current, profileNames);
    if (typed?.kind === 'edit') return setCommand(typed.line);
    if (typed !== undefined) setCommand(undefined);
    if (typed?.kind === 'submit') {
      remember(line.text.value);
      setStatus(run(line.text.value, setStatus));
    }
  };

  useKeys((input, key) => (command === undefined ? onKey(input, key) : onCommandKey(input, key, command)), props.active && !flow.open);

  const description =
    row.description === undefined
      ? `(not read: this deployment cannot read a single base${disabled.includes('edit') ? '' : '; e sets it'})`
      : row.description === null
        ? '(none)'
        : row.description;
  // The key and the namespace always show; the description takes the rows left, its last line cut with "…".
  const rows = bodyHeight(props.height);
  const valueWidth = Math.max(1, props.width - LABEL_WIDTH);
  const descriptionLines = wrapText(printable(description), valueWidth, Math.max(1, rows - 2 - (props.listed ? 0 : 1)));
  const body = flow.body ?? (
    <>
      <Field label="namespace" lines={[cut(printable(props.crumbs.at(-1) ?? ''), valueWidth)]} />
      <Field label="key" lines={[cut(printable(row.key), valueWidth)]} />
      <Field label="description" lines={descriptionLines} />
      {props.listed ? null : (
        <Text wrap="truncate-end" color={theme.warning}>
          Not in the list of bases any more: it may have been deleted elsewhere.
        </Text>
      )}
    </>
  );

  const status =
    flow.status ??
    (command === undefined ? <StatusLines status={props.status} /> : <PromptLines sign=":" text={command.text} width={props.width} hint={COMMAND_LINE_HINT} />);

  const hints: readonly Hint[] =
    flow.hints ?? (command !== undefined ? PROMPT_HINTS : hintsFor('base', [...disabled, ...(props.onRefresh ? [] : ['refresh' as const])], props.status?.keys));

  const title = (
    <>
      {props.crumbs.map((crumb) => `${printable(crumb)} › `).join('')}
      <Text color={theme.accent}>{`base ${row.key}`}</Text>
    </>
  );
  return (
    <Screen height={props.height} width={props.width} title={title} status={status} hints={hints}>
      {body}
    </Screen>
  );
}

const LABEL_WIDTH = 14;

function Field({ label, lines }: { label: string; lines: readonly string[] }) {
  return (
    <Box flexShrink={0}>
      <Box width={LABEL_WIDTH} flexShrink={0}>
        <Text bold>{label}</Text>
      </Box>
      <Box flexDirection="column" flexShrink={0}>
        {lines.map((line, i) => (
          <Text key={i} wrap="truncate-end">
            {line}
          </Text>
        ))}
      </Box>
    </Box>
  );
}
