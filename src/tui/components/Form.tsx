import { Box, Text } from 'ink';
import { useState } from 'react';
import { describeError, isConflict } from '../errors.js';
import type { FieldSpec } from '../fields.js';
import { editText, textAt, type TextState } from '../hooks/textEdit.js';
import { useKeys } from '../hooks/useKeys.js';
import { isEnter } from '../keymap.js';
import { printable } from '../text.js';
import { useTheme } from '../theme.js';
import type { Status } from '../types.js';
import { Spinner } from './Spinner.js';
import { TextField } from './TextField.js';

const LABEL_WIDTH = 14;

export type FormValues = Partial<Record<FieldSpec['id'], string>>;

export interface FormProps {
  title: string;
  fields: readonly FieldSpec[];
  /** Shown while the submit runs, e.g. "Creating namespace". */
  busyLabel: string;
  /** Sends the values; a rejection is shown in place, with the form still open. */
  onSubmit(values: FormValues): Promise<void>;
  onCancel(): void;
  active: boolean;
  width: number;
  /** For the hint on a 401. */
  profile: string | undefined;
}

/**
 * A small form (docs/contract.md, The TUI): fields in order; enter or tab moves to the next, enter on the last submits,
 * shift-tab goes back, esc cancels. While it has focus every letter is text. Each field is checked live with the
 * shared schemas, its rule shown under it; nothing is sent while a field breaks its rule.
 */
export function Form(props: FormProps) {
  const theme = useTheme();
  const [texts, setTexts] = useState<TextState[]>(() => props.fields.map((field) => textAt(field.initial)));
  const [focus, setFocus] = useState(0);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Status | undefined>(undefined);
  const last = props.fields.length - 1;

  const submit = () => {
    const invalid = props.fields.findIndex((field, i) => field.problem(texts[i]?.value ?? '') !== undefined);
    if (invalid >= 0) {
      setFocus(invalid);
      setFailure({ tone: 'error', text: `Fix the ${props.fields[invalid]?.label} first: nothing was sent.` });
      return;
    }
    const values: FormValues = {};
    props.fields.forEach((field, i) => (values[field.id] = texts[i]?.value ?? ''));
    setBusy(true);
    setFailure(undefined);
    props.onSubmit(values).then(
      () => setBusy(false),
      (error: unknown) => {
        setBusy(false);
        setFailure(describeError(error, props.profile));
        const keyAt = props.fields.findIndex((field) => field.id === 'key');
        if (isConflict(error) && keyAt >= 0) setFocus(keyAt);
      },
    );
  };

  useKeys(
    (input, key) => {
      if (busy) return;
      if (key.escape) return props.onCancel();
      if (key.tab && key.shift) return setFocus((i) => Math.max(0, i - 1));
      if (key.tab) return setFocus((i) => Math.min(last, i + 1));
      if (isEnter(input, key)) return focus < last ? setFocus(focus + 1) : submit();
      const current = texts[focus];
      if (current === undefined) return;
      const edited = editText(current, input, key);
      if (edited === undefined || edited === current) return;
      setTexts((all) => all.map((text, i) => (i === focus ? edited : text)));
      setFailure(undefined);
    },
    props.active,
  );

  const fieldWidth = Math.max(8, props.width - LABEL_WIDTH - 2);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {props.title}
      </Text>
      {props.fields.map((field, i) => {
        const value = texts[i]?.value ?? '';
        // An empty required field is not an error until it is submitted; its rule says it is required.
        const problem = value === '' ? undefined : field.problem(value);
        const focused = i === focus;
        return (
          <Box key={field.id} flexDirection="column" marginTop={1}>
            <Box>
              <Text bold={focused} color={focused ? theme.accent : undefined}>
                {`${focused ? '> ' : '  '}${field.label}`.padEnd(LABEL_WIDTH)}
              </Text>
              <TextFieldBox state={texts[i] ?? textAt('')} focused={focused && !busy} width={fieldWidth} />
            </Box>
            <Box paddingLeft={LABEL_WIDTH}>
              {problem !== undefined ? (
                <Text wrap="wrap" color={theme.error}>
                  {`invalid: ${problem}`}
                </Text>
              ) : (
                <Text wrap="wrap" dimColor={theme.muted}>
                  {value === '' ? `${field.whenEmpty}. ${field.rule}` : `ok${field.counter ? ` (${field.counter(value)})` : ''}. ${field.rule}`}
                </Text>
              )}
            </Box>
          </Box>
        );
      })}
      <Box marginTop={1} flexDirection="column">
        {busy ? <Spinner label={`${props.busyLabel}...`} /> : null}
        {!busy && failure !== undefined ? (
          <>
            <Text wrap="wrap" color={theme.error} bold>
              {`Error: ${printable(failure.text)}`}
            </Text>
            {failure.help === undefined ? null : <Text wrap="wrap">{printable(failure.help)}</Text>}
          </>
        ) : null}
      </Box>
    </Box>
  );
}

function TextFieldBox({ state, focused, width }: { state: TextState; focused: boolean; width: number }) {
  return (
    <Box width={width}>
      <Text>[</Text>
      <Box width={width - 2}>
        <TextField state={state} focused={focused} width={width - 2} />
      </Box>
      <Text>]</Text>
    </Box>
  );
}
