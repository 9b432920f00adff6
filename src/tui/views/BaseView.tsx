import { Box, Text } from 'ink';
import { useState } from 'react';
import { Confirm } from '../components/Confirm.js';
import { Form, type FormValues } from '../components/Form.js';
import { Screen } from '../components/Screen.js';
import { Spinner } from '../components/Spinner.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { describeError } from '../errors.js';
import { descriptionField } from '../fields.js';
import { useKeys } from '../hooks/useKeys.js';
import { commandFor, CONFIRM_HINTS, EDIT_HINTS, type Hint, HINTS } from '../keymap.js';
import { printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { Row, Status } from '../types.js';

type Mode = { kind: 'view' } | { kind: 'edit' } | { kind: 'confirm' } | { kind: 'deleting' };

export interface BaseViewProps {
  active: boolean;
  width: number;
  height: number;
  namespace: string;
  row: Row;
  /** False when the base is not in the list any more (deleted elsewhere). */
  listed: boolean;
  status: Status | undefined;
  setStatus(status: Status | undefined): void;
  onUpdate(row: Row, description: string | null): Promise<Row>;
  onDelete(row: Row): Promise<Row>;
  /** Called once the base is deleted: the parent goes back to the list. */
  onDeleted(row: Row): void;
  /** Undefined where a single base cannot be read again (no base_list). */
  onRefresh: (() => void) | undefined;
  onBack(): void;
}

/** One base: its namespace, key and whole description, with edit and delete. */
export function BaseView(props: BaseViewProps) {
  const { showHelp, quit, deployment } = useTui();
  const theme = useTheme();
  const [mode, setMode] = useState<Mode>({ kind: 'view' });
  const { row, setStatus } = props;

  useKeys(
    (input, key) => {
      switch (commandFor(input, key)) {
        case 'edit':
          setStatus(undefined);
          return setMode({ kind: 'edit' });
        case 'delete':
          setStatus(undefined);
          return setMode({ kind: 'confirm' });
        case 'refresh':
          setStatus(props.onRefresh ? undefined : { tone: 'warning', text: 'This deployment cannot read a single base: nothing to refresh.' });
          return props.onRefresh?.();
        case 'back': return props.onBack();
        case 'help': return showHelp();
        case 'quit': return quit();
        default: return;
      }
    },
    props.active && mode.kind === 'view',
  );

  const toView = () => setMode({ kind: 'view' });
  const question = `Delete base ${row.key} in namespace ${props.namespace}, with all its data?`;

  let body;
  if (mode.kind === 'edit') {
    body = (
      <Form
        title={`Description of base ${row.key} (empty + enter clears it)`}
        fields={[descriptionField({ initial: row.description, clears: true })]}
        busyLabel="Saving"
        active={props.active}
        width={props.width}
        profile={deployment.profile}
        onCancel={toView}
        onSubmit={async (values: FormValues) => {
          const description = values.description ? values.description : null;
          const updated = await props.onUpdate(row, description);
          toView();
          setStatus({
            tone: 'success',
            text: description === null ? `Cleared the description of base ${updated.key}.` : `Saved the description of base ${updated.key}.`,
          });
        }}
      />
    );
  } else {
    const description =
      row.description === undefined
        ? '(not read: this deployment cannot read a single base; e sets it)'
        : row.description === null
          ? '(none)'
          : row.description;
    body = (
      <>
        <Field label="namespace" value={props.namespace} />
        <Field label="key" value={row.key} />
        <Field label="description" value={description} />
        {props.listed ? null : (
          <Text wrap="wrap" color={theme.warning}>
            Not in the list of bases any more: it may have been deleted elsewhere.
          </Text>
        )}
      </>
    );
  }

  let status;
  if (mode.kind === 'confirm') {
    status = (
      <StatusLines>
        <Confirm
          question={question}
          active={props.active}
          onAnswer={(yes) => {
            if (!yes) {
              toView();
              return setStatus({ tone: 'info', text: `Cancelled: base ${row.key} was not deleted.` });
            }
            setMode({ kind: 'deleting' });
            props.onDelete(row).then(
              (deleted) => props.onDeleted(deleted),
              (error: unknown) => {
                toView();
                setStatus(describeError(error, deployment.profile));
              },
            );
          }}
        />
      </StatusLines>
    );
  } else if (mode.kind === 'deleting') {
    status = (
      <StatusLines>
        <Spinner label={`Deleting base ${row.key}...`} />
      </StatusLines>
    );
  } else {
    status = <StatusLines status={props.status} />;
  }

  const hints: readonly Hint[] =
    mode.kind === 'edit'
      ? EDIT_HINTS
      : mode.kind === 'confirm'
        ? CONFIRM_HINTS
        : [HINTS.edit, HINTS.delete, ...(props.onRefresh ? [HINTS.refresh] : []), HINTS.back, HINTS.help, HINTS.quit];

  const title = (
    <Text color={theme.accent}>
      {`Namespace ${props.namespace} > base ${row.key}`}
    </Text>
  );
  return (
    <Screen height={props.height} width={props.width} title={title} status={status} hints={hints}>
      {body}
    </Screen>
  );
}

function Field({ label, value }: { label: string; value: string }) {
  return (
    <Box>
      <Box width={14} flexShrink={0}>
        <Text bold>{label}</Text>
      </Box>
      <Text wrap="wrap">{printable(value)}</Text>
    </Box>
  );
}
