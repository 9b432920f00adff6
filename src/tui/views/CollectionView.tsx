import { type Key, Text } from 'ink';
import { useState } from 'react';
import { Confirm } from '../components/Confirm.js';
import { Form, type FormValues } from '../components/Form.js';
import { RowList } from '../components/RowList.js';
import { bodyHeight, Screen } from '../components/Screen.js';
import { Spinner } from '../components/Spinner.js';
import { StatusLines } from '../components/StatusLines.js';
import { TextField } from '../components/TextField.js';
import { useTui } from '../context.js';
import { describeError } from '../errors.js';
import { descriptionField, keyField } from '../fields.js';
import { editText, textAt, type TextState } from '../hooks/textEdit.js';
import { useKeys } from '../hooks/useKeys.js';
import { filterRows, useList } from '../hooks/useList.js';
import { commandFor, CONFIRM_HINTS, EDIT_HINTS, FORM_HINTS, type Hint, HINTS, isEnter } from '../keymap.js';
import { count, printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row, Status } from '../types.js';

type Mode =
  | { kind: 'list' }
  | { kind: 'filter'; text: TextState }
  | { kind: 'create' }
  | { kind: 'edit'; row: Row }
  | { kind: 'confirm'; row: Row }
  | { kind: 'deleting'; row: Row }
  | { kind: 'openByKey' };

export interface CollectionViewProps {
  /** Whether this view gets the keys; only one view at a time does. */
  active: boolean;
  /** A hidden view renders nothing but keeps its selection and filter for when it comes back. */
  visible: boolean;
  width: number;
  height: number;
  title: string;
  noun: 'namespace' | 'base';
  rows: readonly Row[] | undefined;
  loading: boolean;
  error: unknown;
  /** Lines under the title, e.g. that the deployment cannot list bases. */
  notice?: readonly string[] | undefined;
  emptyText: string;
  status: Status | undefined;
  setStatus(status: Status | undefined): void;
  createTitle: string;
  /** What the server generates for an empty key, e.g. "ns_". */
  generatedPrefix: string;
  onRefresh(): void;
  /** Creates the row on the server and updates the list; resolves to the row created. */
  onCreate(values: { key: string | undefined; description: string | undefined }): Promise<Row>;
  /** Sets (a string) or clears (null) the description on the server and updates the list. */
  onUpdate(row: Row, description: string | null): Promise<Row>;
  /** Deletes on the server and updates the list; absent where the API cannot delete (namespaces). */
  onDelete?: ((row: Row) => Promise<Row>) | undefined;
  /** The confirmation, naming what goes, e.g. "Delete base faq in namespace docs, with all its data?". */
  deleteQuestion?: ((row: Row) => string) | undefined;
  /** Why `d` does nothing here, when there is no onDelete. */
  cannotDelete?: string | undefined;
  onOpen(row: Row): void;
  onBack?: (() => void) | undefined;
  /** Opens a row by key without listing (`o`), for deployments without base_list. */
  onOpenByKey?: ((key: string) => void) | undefined;
  /** Opens the "open by key" prompt once, as soon as this is true. */
  promptOpenByKey?: boolean | undefined;
}

/**
 * A list screen: selection, filter, create, edit, delete with confirmation, refresh. The parent owns the data and
 * the requests; this view owns what the user is doing with the list.
 */
export function CollectionView(props: CollectionViewProps) {
  const { showHelp, quit, deployment } = useTui();
  const theme = useTheme();
  const [mode, setMode] = useState<Mode>({ kind: 'list' });
  const notice = props.notice ?? [];
  const listHeight = bodyHeight(props.height, notice.length);
  const all = props.rows ?? [];
  const list = useList(all, listHeight);
  const { setStatus } = props;

  // Set while rendering (React's pattern for state that follows a prop), so the frame that shows the notice has the prompt.
  const [prompted, setPrompted] = useState(false);
  if (props.promptOpenByKey && !prompted) {
    setPrompted(true);
    setMode({ kind: 'openByKey' });
  }

  const remove = (row: Row) => {
    const onDelete = props.onDelete;
    if (onDelete === undefined) return;
    setMode({ kind: 'deleting', row });
    onDelete(row).then(
      (deleted) => {
        setMode({ kind: 'list' });
        setStatus({ tone: 'success', text: `Deleted ${props.noun} ${deleted.key}.` });
      },
      (error: unknown) => {
        setMode({ kind: 'list' });
        setStatus(describeError(error, deployment.profile));
      },
    );
  };

  const onListKey = (input: string, key: Key) => {
    const command = commandFor(input, key);
    const selected = list.selected;
    switch (command) {
      case 'up': return list.move(-1);
      case 'down': return list.move(1);
      case 'pageUp': return list.move(-listHeight);
      case 'pageDown': return list.move(listHeight);
      case 'first': return list.moveTo(0);
      case 'last': return list.moveTo(list.rows.length - 1);
      case 'open': return selected && props.onOpen(selected);
      case 'new':
        setStatus(undefined);
        return setMode({ kind: 'create' });
      case 'edit':
        if (!selected) return setStatus({ tone: 'warning', text: `No ${props.noun} selected to edit.` });
        setStatus(undefined);
        return setMode({ kind: 'edit', row: selected });
      case 'delete':
        if (props.onDelete === undefined) return setStatus({ tone: 'warning', text: props.cannotDelete ?? `A ${props.noun} cannot be deleted here.` });
        if (!selected) return setStatus({ tone: 'warning', text: `No ${props.noun} selected to delete.` });
        setStatus(undefined);
        return setMode({ kind: 'confirm', row: selected });
      case 'refresh':
        setStatus(undefined);
        return props.onRefresh();
      case 'filter':
        return setMode({ kind: 'filter', text: textAt(list.filter) });
      case 'openByKey':
        if (props.onOpenByKey === undefined) return;
        setStatus(undefined);
        return setMode({ kind: 'openByKey' });
      case 'help': return showHelp();
      case 'quit': return quit();
      case 'back':
        if (list.filter !== '') return list.clearFilter();
        return props.onBack?.();
      default:
        return;
    }
  };

  const onFilterKey = (input: string, key: Key, text: TextState) => {
    if (key.escape) {
      list.clearFilter();
      return setMode({ kind: 'list' });
    }
    if (isEnter(input, key)) {
      setMode({ kind: 'list' });
      return list.moveTo(0);
    }
    if (key.upArrow) return list.move(-1);
    if (key.downArrow) return list.move(1);
    const edited = editText(text, input, key);
    if (edited === undefined) return;
    setMode({ kind: 'filter', text: edited });
    if (edited.value !== list.filter) list.setFilter(edited.value);
  };

  useKeys(
    (input, key) => {
      if (mode.kind === 'list') onListKey(input, key);
      else if (mode.kind === 'filter') onFilterKey(input, key, mode.text);
    },
    props.active && props.visible && (mode.kind === 'list' || mode.kind === 'filter'),
  );

  if (!props.visible) return null;

  const toList = () => setMode({ kind: 'list' });
  let body;
  if (mode.kind === 'create') {
    body = (
      <Form
        title={props.createTitle}
        fields={[keyField({ generatedPrefix: props.generatedPrefix }), descriptionField({ clears: false })]}
        busyLabel={`Creating ${props.noun}`}
        active={props.active}
        width={props.width}
        profile={deployment.profile}
        onCancel={toList}
        onSubmit={async (values: FormValues) => {
          const row = await props.onCreate({ key: values.key || undefined, description: values.description || undefined });
          if (filterRows([row], list.filter).length === 0) list.clearFilter();
          list.select(row.key);
          toList();
          setStatus({ tone: 'success', text: `Created ${props.noun} ${row.key}.` });
        }}
      />
    );
  } else if (mode.kind === 'edit') {
    const row = mode.row;
    body = (
      <Form
        title={`Description of ${props.noun} ${row.key} (empty + enter clears it)`}
        fields={[descriptionField({ initial: row.description, clears: true })]}
        busyLabel="Saving"
        active={props.active}
        width={props.width}
        profile={deployment.profile}
        onCancel={toList}
        onSubmit={async (values: FormValues) => {
          const description = values.description ? values.description : null;
          const updated = await props.onUpdate(row, description);
          toList();
          setStatus({
            tone: 'success',
            text: description === null ? `Cleared the description of ${props.noun} ${updated.key}.` : `Saved the description of ${props.noun} ${updated.key}.`,
          });
        }}
      />
    );
  } else if (mode.kind === 'openByKey') {
    body = (
      <Form
        title={`Open a ${props.noun} by key`}
        fields={[keyField({})]}
        busyLabel="Opening"
        active={props.active}
        width={props.width}
        profile={deployment.profile}
        onCancel={toList}
        onSubmit={async (values: FormValues) => {
          const key = values.key ?? '';
          toList();
          list.select(key);
          props.onOpenByKey?.(key);
        }}
      />
    );
  } else if (props.rows === undefined) {
    body = props.loading ? (
      <Spinner label={`Loading ${props.noun}s...`} />
    ) : (
      <ErrorBlock status={describeError(props.error, deployment.profile)} />
    );
  } else if (list.rows.length === 0) {
    body = <Text wrap="wrap">{all.length === 0 ? props.emptyText : `No ${props.noun} matches "${printable(list.filter)}": esc clears the filter.`}</Text>;
  } else {
    body = <RowList rows={list.rows} top={list.top} index={list.index} height={listHeight} width={props.width} />;
  }

  let status;
  if (mode.kind === 'confirm') {
    const row = mode.row;
    status = (
      <StatusLines>
        <Confirm
          question={props.deleteQuestion?.(row) ?? `Delete ${props.noun} ${row.key}?`}
          active={props.active}
          onAnswer={(yes) => {
            if (yes) return remove(row);
            toList();
            setStatus({ tone: 'info', text: `Cancelled: ${props.noun} ${row.key} was not deleted.` });
          }}
        />
      </StatusLines>
    );
  } else if (mode.kind === 'deleting') {
    status = (
      <StatusLines>
        <Spinner label={`Deleting ${props.noun} ${mode.row.key}...`} />
      </StatusLines>
    );
  } else if (mode.kind === 'filter') {
    status = (
      <StatusLines>
        <Text wrap="truncate-end">
          <Text bold color={theme.accent}>/</Text>
          <TextField state={mode.text} focused width={Math.max(4, props.width - 2)} />
        </Text>
        <Text wrap="truncate-end" dimColor={theme.muted}>
          {`${count(list.rows.length, 'match')}: enter keeps the filter, esc clears it`}
        </Text>
      </StatusLines>
    );
  } else {
    const failedRefresh = props.rows !== undefined && props.error !== undefined ? describeError(props.error, deployment.profile) : undefined;
    status = <StatusLines status={props.status ?? failedRefresh} />;
  }

  const hints: readonly Hint[] =
    mode.kind === 'filter'
      ? [['type', 'filter', 6], ['enter', 'keep', 8], ['esc', 'clear', 9], ['up/down', 'move', 1]]
      : mode.kind === 'create' || mode.kind === 'openByKey'
        ? FORM_HINTS
        : mode.kind === 'edit'
          ? EDIT_HINTS
          : mode.kind === 'confirm'
            ? CONFIRM_HINTS
            : [
                HINTS.move,
                HINTS.open,
                HINTS.new,
                HINTS.edit,
                HINTS.delete,
                HINTS.filter,
                HINTS.refresh,
                ...(props.onOpenByKey ? [HINTS.openByKey] : []),
                ...(props.onBack || list.filter !== '' ? [HINTS.back] : []),
                HINTS.help,
                HINTS.quit,
              ];

  const position = list.rows.length > 0 ? `  ${(list.index + 1).toLocaleString('en-US')}/${list.rows.length.toLocaleString('en-US')}` : '';
  const filtered = list.filter !== '' ? `  filter "${printable(list.filter)}": ${count(list.rows.length, 'match')}` : '';
  const title = (
    <>
      <Text color={theme.accent}>{props.title}</Text>
      {props.rows === undefined ? '' : `  ${count(all.length, props.noun)}`}
      {filtered}
      {position}
      {props.loading && props.rows !== undefined ? '  refreshing...' : ''}
    </>
  );

  return (
    <Screen height={props.height} width={props.width} title={title} notice={notice} status={status} hints={hints}>
      {body}
    </Screen>
  );
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
