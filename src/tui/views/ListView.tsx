import { Text } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { Form, type FormValues } from '../components/Form.js';
import { bodyHeight, Screen } from '../components/Screen.js';
import { COMMAND_LINE_HINT, type CommandLine, commandLineKey, EMPTY_COMMAND_LINE, PromptLines, promptKey } from '../components/Prompt.js';
import { Spinner } from '../components/Spinner.js';
import { StatusLines } from '../components/StatusLines.js';
import { Table } from '../components/Table.js';
import { useTui } from '../context.js';
import { describeError } from '../errors.js';
import { descriptionField, keyField } from '../fields.js';
import { textAt, type TextState } from '../hooks/textEdit.js';
import { useAutoRefresh } from '../hooks/useAutoRefresh.js';
import { useKeys } from '../hooks/useKeys.js';
import { compileFilter, filterRows, useList } from '../hooks/useList.js';
import { type RowOps, useRowFlow } from '../hooks/useRowFlow.js';
import { rowYaml } from './YamlView.js';
import { type Command, commandFor, FILTER_HINTS, FORM_HINTS, type Hint, hintsFor, type Keypress, PROMPT_HINTS, READ_ONLY_STATUS, WRITES } from '../keymap.js';
import { count, printable, thousands } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row, Status } from '../types.js';

type Mode = { kind: 'list' } | { kind: 'filter'; text: TextState } | { kind: 'command'; line: CommandLine } | { kind: 'create' } | { kind: 'openByKey' };

/** The rows of a list as the screen's parent loads them (a Remote, or the rows of this session). */
export interface ListSource {
  rows: readonly Row[] | undefined;
  loading: boolean;
  error: unknown;
  updatedAt: number | undefined;
  reload(): void;
}

/** What a list can do beyond editing and deleting a row: create one. */
export interface ListOps extends RowOps {
  create(values: { key: string | undefined; description: string | undefined }): Promise<Row>;
  /** What the server generates for an empty key, e.g. "ns_". */
  generatedPrefix: string;
  /** The title of the form of `n`, e.g. "New base in namespace docs". */
  createTitle: string;
}

export interface ListViewProps {
  /** Whether this view gets the keys; only one view at a time does. */
  active: boolean;
  /** A hidden view renders nothing but keeps its selection, filter and order for when it comes back. */
  visible: boolean;
  width: number;
  height: number;
  /** Where the list is, e.g. ["local", "docs"]: the title reads "local › docs › bases (3)". */
  crumbs: readonly string[];
  source: ListSource;
  ops: ListOps;
  /** False where there is nothing to refresh by itself (a list of the bases opened this session). */
  autoRefresh: boolean;
  /**
   * What an empty list says ("No namespaces yet"), then what a key does about it (["new", "n creates one"]), said
   * only where the key is offered, and kept on the key-help line.
   */
  empty: { text: string; offers: readonly (readonly [Command, string])[] };
  /** Lines under the title (e.g. that the deployment cannot list bases), and the commands they name. */
  notice?: { lines: readonly string[]; keys: readonly Command[] } | undefined;
  status: Status | undefined;
  setStatus(status: Status | undefined): void;
  onOpen(row: Row): void;
  onBack?: (() => void) | undefined;
  /** Fields before a row's own in its YAML (`y`), e.g. [["namespace", "docs"]] for a base. */
  yamlContext?: readonly (readonly [string, string])[] | undefined;
  /** Commands this list does not offer (nor its key-help line): a namespace that does not exist, --readonly. */
  disabled?: readonly Command[] | undefined;
  /** Shown instead of the rows, when the list cannot be had (a namespace that does not exist). */
  instead?: Status | undefined;
  /** Opens a row by key without listing (`o`), for deployments without base_list; `promptNow` opens the prompt once. */
  openByKey?: { open(key: string): void; promptNow: boolean } | undefined;
}

/**
 * A list screen: a table with its header, selection, sort, filter, the `:` command line, copy, create, and the
 * shared edit/delete flow; refreshed every few seconds while idle. The parent owns the data and the requests; this
 * view owns what the user is doing with the list.
 */
export function ListView(props: ListViewProps) {
  const { showHelp, showYaml, quit, deployment, terminal, refreshSeconds, live, run, readonly, disabled: disabledEverywhere, history, remember, namespaceKeys, profileNames } = useTui();
  const theme = useTheme();
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  // The keys marked with space, for one d to delete them all.
  const [marked, setMarked] = useState<ReadonlySet<string>>(() => new Set());
  const { ops, source, setStatus } = props;
  const notice = props.notice?.lines ?? [];
  const disabled = [...disabledEverywhere, ...(props.disabled ?? [])];
  const topic = ops.noun === 'namespace' ? 'namespaces' : 'bases';
  // The column header takes a line of the body.
  const listHeight = Math.max(1, bodyHeight(props.height, notice.length) - 1);
  const all = source.rows ?? [];
  const list = useList(all, listHeight);
  const flow = useRowFlow(ops, { active: props.active, width: props.width, height: bodyHeight(props.height, notice.length), setStatus });

  // Set while rendering (React's pattern for state that follows a prop), so the frame that shows the notice has the prompt.
  const [prompted, setPrompted] = useState(false);
  if (props.openByKey?.promptNow && !prompted) {
    setPrompted(true);
    setMode({ kind: 'openByKey' });
  }

  const idle = props.active && props.visible && mode.kind === 'list' && !flow.open;
  // While the changes stream (the parent applies them), no timer: the stream says what changed, the moment it does.
  useAutoRefresh(source.reload, { seconds: props.autoRefresh && live.mode !== 'live' ? refreshSeconds : 0, idle, loading: source.loading });
  // Once the stream opens (again), one load more: what changed between the last load and the stream is in it. Not
  // when the list opens with the stream open already (its first load is that), and, as the timer's, only while idle
  // (a load under an open form made its save fail to show).
  const reload = useRef(source.reload);
  reload.current = source.reload;
  const wasLive = useRef(live.mode);
  const reloadWhenIdle = useRef(false);
  useEffect(() => {
    if (live.mode === 'live' && wasLive.current !== 'live' && props.autoRefresh) reloadWhenIdle.current = true;
    wasLive.current = live.mode;
    if (reloadWhenIdle.current && idle) {
      reloadWhenIdle.current = false;
      reload.current();
    }
  }, [live.mode, props.autoRefresh, idle]);

  const markedRows = all.filter((row) => marked.has(row.key));
  const onListKey = (input: string, key: Keypress) => {
    const found = commandFor(input, key, topic);
    const command = found !== undefined && disabled.includes(found) ? undefined : found;
    const selected = list.selected;
    // A message stays until the next key (docs/contract.md, The TUI): this key's own outcome may replace it.
    if (props.status !== undefined) setStatus(undefined);
    if (readonly && found !== undefined && WRITES.includes(found)) return setStatus(READ_ONLY_STATUS);
    if (command === 'delete' && markedRows.length > 0) {
      return flow.deleteMany(markedRows, (deleted) => setMarked((now) => new Set([...now].filter((each) => !deleted.includes(each)))));
    }
    if (flow.start(command, selected)) return;
    switch (command) {
      case 'up': return list.move(-1);
      case 'down': return list.move(1);
      case 'pageUp': return list.move(-listHeight);
      case 'pageDown': return list.move(listHeight);
      case 'first': return list.moveTo(0);
      case 'last': return list.moveTo(list.rows.length - 1);
      case 'open': return selected && props.onOpen(selected);
      case 'describe':
        if (!selected) return setStatus({ tone: 'warning', text: `No ${ops.noun} selected to describe.` });
        // A base has a screen of its own (enter's); a namespace's whole key and description are its YAML.
        if (ops.noun === 'base') return props.onOpen(selected);
        return showYaml(`${ops.noun} ${selected.key}`, rowYaml([...(props.yamlContext ?? []), ['key', selected.key], ['description', selected.description]]));
      case 'new':
        setStatus(undefined);
        return setMode({ kind: 'create' });
      case 'refresh':
        setStatus(undefined);
        return source.reload();
      case 'filter':
        return setMode({ kind: 'filter', text: textAt(list.filter) });
      case 'commandLine':
        return setMode({ kind: 'command', line: EMPTY_COMMAND_LINE });
      case 'sortByKey': return list.sortByKey();
      case 'sortByDescription': return list.sortByDescription();
      case 'copy':
        if (!selected) return setStatus({ tone: 'warning', text: `No ${ops.noun} selected to copy.` });
        terminal.copy(selected.key);
        return setStatus(copied(selected.key));
      case 'openByKey':
        if (props.openByKey === undefined) return;
        setStatus(undefined);
        return setMode({ kind: 'openByKey' });
      case 'mark':
        if (!selected) return;
        setMarked((now) => {
          const next = new Set(now);
          if (!next.delete(selected.key)) next.add(selected.key);
          return next;
        });
        return list.move(1);
      case 'help': return showHelp(topic);
      case 'yaml':
        if (!selected) return setStatus({ tone: 'warning', text: `No ${ops.noun} selected to show.` });
        return showYaml(`${ops.noun} ${selected.key}`, rowYaml([...(props.yamlContext ?? []), ['key', selected.key], ['description', selected.description]]));
      case 'quit': return quit();
      case 'back':
        if (list.filter !== '') return list.clearFilter();
        return props.onBack?.();
      default:
        return;
    }
  };

  const onFilterKey = (input: string, key: Keypress, text: TextState) => {
    if (key.upArrow) return list.move(-1);
    if (key.downArrow) return list.move(1);
    const typed = promptKey(text, input, key);
    if (typed?.kind === 'edit') {
      setMode({ kind: 'filter', text: typed.text });
      if (typed.text.value !== list.filter) list.setFilter(typed.text.value);
      return;
    }
    if (typed !== undefined) setMode({ kind: 'list' });
    if (typed?.kind === 'cancel') list.clearFilter();
    if (typed?.kind === 'submit') list.moveTo(0);
  };

  const onCommandKey = (input: string, key: Keypress, line: CommandLine) => {
    const typed = commandLineKey(line, input, key, history, namespaceKeys.current, profileNames);
    if (typed?.kind === 'edit') return setMode({ kind: 'command', line: typed.line });
    if (typed !== undefined) setMode({ kind: 'list' });
    if (typed?.kind === 'submit') {
      remember(line.text.value);
      setStatus(run(line.text.value, setStatus));
    }
  };

  useKeys(
    (input, key) => {
      if (mode.kind === 'list') onListKey(input, key);
      else if (mode.kind === 'filter') onFilterKey(input, key, mode.text);
      else if (mode.kind === 'command') onCommandKey(input, key, mode.line);
    },
    props.active && props.visible && !flow.open && (mode.kind === 'list' || mode.kind === 'filter' || mode.kind === 'command'),
  );

  if (!props.visible) return null;

  const toList = () => setMode({ kind: 'list' });
  // The commands the screen's words tell the user to press: the key-help line keeps them.
  const named: Command[] = [...(props.notice?.keys ?? [])];
  let body;
  if (flow.body !== undefined) {
    body = flow.body;
  } else if (mode.kind === 'create') {
    body = (
      <Form
        title={ops.createTitle}
        fields={[keyField({ generatedPrefix: ops.generatedPrefix }), descriptionField({ clears: false })]}
        busyLabel={`Creating ${ops.noun}`}
        active={props.active}
        width={props.width}
        height={bodyHeight(props.height, notice.length)}
        deployment={deployment}
        onCancel={toList}
        onSubmit={async (values: FormValues) => {
          const row = await ops.create({ key: values.key || undefined, description: values.description || undefined });
          if (filterRows([row], list.filter).length === 0) list.clearFilter();
          list.select(row.key);
          toList();
          setStatus({ tone: 'success', text: `Created ${ops.noun} ${row.key}.` });
        }}
      />
    );
  } else if (mode.kind === 'openByKey') {
    body = (
      <Form
        title={`Open a ${ops.noun} by key`}
        fields={[keyField({})]}
        busyLabel="Opening"
        active={props.active}
        width={props.width}
        height={bodyHeight(props.height, notice.length)}
        deployment={deployment}
        onCancel={toList}
        onSubmit={async (values: FormValues) => {
          const key = values.key ?? '';
          toList();
          list.select(key);
          props.openByKey?.open(key);
        }}
      />
    );
  } else if (props.instead !== undefined) {
    named.push(...(props.instead.keys ?? []));
    body = <ErrorBlock status={props.instead} />;
  } else if (source.rows === undefined) {
    const failed = source.loading ? undefined : describeError(source.error, deployment);
    named.push(...(failed?.keys ?? []));
    body = failed === undefined ? <Spinner label={`Loading ${ops.noun}s...`} /> : <ErrorBlock status={failed} />;
  } else if (all.length === 0) {
    const offers = props.empty.offers.filter(([command]) => !disabled.includes(command) && (command !== 'openByKey' || props.openByKey !== undefined));
    named.push(...offers.map(([command]) => command));
    body = <Text wrap="wrap">{offers.length === 0 ? `${props.empty.text}.` : `${props.empty.text}: ${offers.map(([, does]) => does).join(', ')}.`}</Text>;
  } else if (list.rows.length === 0) {
    named.push('back');
    body = <Text wrap="wrap">{`No ${ops.noun} matches "${printable(list.filter)}": esc clears the filter.`}</Text>;
  } else {
    body = <Table all={all} rows={list.rows} order={list.order} top={list.top} index={list.index} height={listHeight} width={props.width} marked={marked} />;
  }

  let status;
  if (flow.status !== undefined) {
    status = flow.status;
  } else if (mode.kind === 'filter') {
    const compiled = compileFilter(mode.text.value);
    const how = compiled.invalid ? 'invalid regular expression, matched as text' : compiled.inverted ? 'not matching' : 'regex, ! first inverts';
    status = (
      <PromptLines sign="/" text={mode.text} width={props.width} hint={`${count(list.rows.length, 'match')} (${how}): enter keeps the filter, esc clears it`} />
    );
  } else if (mode.kind === 'command') {
    status = <PromptLines sign=":" text={mode.line.text} width={props.width} hint={COMMAND_LINE_HINT} />;
  } else {
    const failedRefresh = source.rows !== undefined && source.error !== undefined ? describeError(source.error, deployment) : undefined;
    const shown = props.status ?? failedRefresh;
    named.push(...(shown?.keys ?? []));
    status = <StatusLines status={shown} freshness={props.autoRefresh ? source : undefined} />;
  }

  // What this list cannot do right now stays off its key-help line: with no row, nothing done to a row.
  const unavailable: Command[] = [
    ...disabled,
    ...(props.openByKey ? [] : ['openByKey' as const]),
    ...(props.onBack || list.filter !== '' ? [] : ['back' as const]),
    ...(list.rows.length > 0 ? [] : ROW_COMMANDS),
    ...(list.rows.length > 0 || markedRows.length > 0 ? [] : ['delete' as const]),
    ...(all.length > 0 ? [] : LIST_COMMANDS),
  ];
  const hints: readonly Hint[] =
    flow.hints ??
    (mode.kind === 'filter'
      ? FILTER_HINTS
      : mode.kind === 'command'
        ? PROMPT_HINTS
        : mode.kind === 'create' || mode.kind === 'openByKey'
          ? FORM_HINTS
          : hintsFor(topic, unavailable, named));

  const counted = source.rows === undefined ? '' : list.filter === '' ? ` (${thousands(all.length)})` : ` (${thousands(list.rows.length)}/${thousands(all.length)})`;
  const title = (
    <>
      {props.crumbs.map((crumb) => `${printable(crumb)} › `).join('')}
      <Text color={theme.accent}>{`${ops.noun}s${counted}`}</Text>
      {list.filter === '' ? '' : `  filter "${printable(list.filter)}"`}
      {markedRows.length === 0 ? '' : `  ${thousands(markedRows.length)} marked`}
    </>
  );
  const aside = list.rows.length > 0 ? `${thousands(list.index + 1)}/${thousands(list.rows.length)}` : undefined;

  return (
    <Screen height={props.height} width={props.width} title={title} aside={aside} notice={notice} status={status} hints={hints}>
      {body}
    </Screen>
  );
}

/** What needs a selected row. */
const ROW_COMMANDS: readonly Command[] = ['open', 'describe', 'edit', 'editInEditor', 'copy', 'yaml', 'mark'];
/** What needs rows to work on: filter and sort. */
const LIST_COMMANDS: readonly Command[] = ['filter', 'sortByKey', 'sortByDescription'];

/** What `c` says: what was done (the key sent to the terminal, OSC 52), not whether a clipboard took it, which kb cannot know. */
export function copied(key: string): Status {
  return { tone: 'success', text: `Sent ${key} to the terminal's clipboard (OSC 52)` };
}

function ErrorBlock({ status }: { status: Status }) {
  const theme = useTheme();
  return (
    <>
      <Text wrap="wrap" bold color={theme.error}>
        {`Error: ${printable(status.text)}`}
      </Text>
      {status.help === undefined ? null : <Text wrap="wrap">{printable(status.help)}</Text>}
    </>
  );
}
