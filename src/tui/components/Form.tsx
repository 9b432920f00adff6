import { Box, Text } from 'ink';
import { useState } from 'react';
import { useTui } from '../context.js';
import { describeError, isConflict } from '../errors.js';
import type { FieldSpec } from '../fields.js';
import { editText, textAt, type TextState } from '../hooks/textEdit.js';
import { useKeys } from '../hooks/useKeys.js';
import { isEnter } from '../keymap.js';
import { printable, wrapText } from '../text.js';
import { useTheme } from '../theme.js';
import type { TuiDeployment } from '../types.js';
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
  /** The rows it may take: on a short terminal it drops blank lines, then cuts the notes under the fields. */
  height: number;
  /** For the hint on a 401: the profile, and where the token came from. */
  deployment: TuiDeployment | undefined;
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
  // Ctrl-C with typed text asks first (docs/contract.md, The TUI): y quits, any other key goes back to the form.
  const [askingToQuit, setAskingToQuit] = useState(false);
  const { quit } = useTui();
  const typed = props.fields.some((field, i) => (texts[i]?.value ?? '') !== field.initial);
  const last = props.fields.length - 1;

  const submit = () => {
    // An empty key that would be generated: the generated key is shown in its field, and the next enter sends it.
    const blank = props.fields.findIndex((field, i) => field.generate !== undefined && (texts[i]?.value ?? '') === '');
    const generate = props.fields[blank]?.generate;
    if (generate !== undefined) {
      const generated = generate();
      setTexts((all) => all.map((text, i) => (i === blank ? textAt(generated) : text)));
      setFailure({ tone: 'info', text: `The ${props.fields[blank]?.label} was empty: enter accepts ${generated}, or edit it.` });
      return;
    }
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
        setFailure(describeError(error, props.deployment));
        const keyAt = props.fields.findIndex((field) => field.id === 'key');
        if (isConflict(error) && keyAt >= 0) setFocus(keyAt);
      },
    );
  };

  useKeys(
    (input, key) => {
      if (askingToQuit) {
        if (key.paste !== true && (input === 'y' || input === 'Y')) return quit();
        return setAskingToQuit(false);
      }
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
    typed && !askingToQuit
      ? () => {
          setAskingToQuit(true);
          return true;
        }
      : undefined,
  );

  const fieldWidth = Math.max(8, props.width - LABEL_WIDTH - 2);
  const hintWidth = Math.max(1, props.width - LABEL_WIDTH);
  const notes = props.fields.map((field, i) => {
    const value = texts[i]?.value ?? '';
    // An empty required field is not an error until it is submitted; its rule says it is required.
    const problem = value === '' ? undefined : field.problem(value);
    if (problem !== undefined) return { error: true, text: `invalid: ${problem}` };
    return { error: false, text: value === '' ? `${field.whenEmpty}. ${field.rule}` : `ok${field.counter ? ` (${field.counter(value)})` : ''}. ${field.rule}` };
  });
  const footer = askingToQuit ? 2 : busy ? 1 : failure === undefined ? 0 : 1 + (failure.help === undefined ? 0 : 1);
  const layout = formLayout(props.height, props.fields.length, focus, footer, notes.map((note) => wrapText(note.text, hintWidth).length));
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text bold wrap="truncate-end">
        {props.title}
      </Text>
      {props.fields.map((field, i) => {
        const focused = i === focus;
        const note = notes[i] ?? { error: false, text: '' };
        const lines = layout.noteLines[i] ?? 0;
        return (
          <Box key={field.id} flexDirection="column" marginTop={layout.spaced ? 1 : 0} flexShrink={0}>
            <Box flexShrink={0}>
              <Text bold={focused} color={focused ? theme.accent : undefined}>
                {`${focused ? '> ' : '  '}${field.label}`.padEnd(LABEL_WIDTH)}
              </Text>
              <TextFieldBox state={texts[i] ?? textAt('')} focused={focused && !busy} width={fieldWidth} />
            </Box>
            {wrapText(note.text, hintWidth, lines).slice(0, lines).map((line, j) => (
              <Box key={j} paddingLeft={LABEL_WIDTH} flexShrink={0}>
                <Text wrap="truncate-end" color={note.error ? theme.error : undefined} dimColor={!note.error && theme.muted}>
                  {line}
                </Text>
              </Box>
            ))}
          </Box>
        );
      })}
      <Box marginTop={layout.spaced ? 1 : 0} flexDirection="column" flexShrink={0}>
        {askingToQuit ? (
          <>
            <Text wrap="truncate-end" bold color={theme.warning}>
              Quit and throw away what was typed?
            </Text>
            <Text wrap="truncate-end">
              <Text bold color={theme.accent}>y</Text> quits, any other key goes back to the form
            </Text>
          </>
        ) : null}
        {!askingToQuit && busy ? <Spinner label={`${props.busyLabel}...`} /> : null}
        {!askingToQuit && !busy && failure !== undefined ? (
          <>
            <Text wrap="truncate-end" color={failure.tone === 'info' ? theme.accent : theme.error} bold>
              {failure.tone === 'info' ? printable(failure.text) : `Error: ${printable(failure.text)}`}
            </Text>
            {failure.help === undefined ? null : <Text wrap="truncate-end">{printable(failure.help)}</Text>}
          </>
        ) : null}
      </Box>
    </Box>
  );
}

/**
 * How a form fits `height` rows: with a blank line between its parts and each field's note whole when there is
 * room; else without the blank lines, then each note on one line (cut with "…"), then only the focused field's note.
 * Every line has a row of its own, so nothing overlaps; a terminal too short even for that clips the bottom.
 */
export function formLayout(
  height: number,
  fields: number,
  focus: number,
  footer: number,
  noteLines: readonly number[],
): { spaced: boolean; noteLines: readonly number[] } {
  const sum = (lines: readonly number[]) => lines.reduce((total, n) => total + n, 0);
  const spacedRows = 1 + fields * 2 + sum(noteLines) + (footer > 0 ? footer + 1 : 0);
  if (spacedRows <= height) return { spaced: true, noteLines };
  const compact = (lines: readonly number[]) => 1 + fields + sum(lines) + footer;
  if (compact(noteLines) <= height) return { spaced: false, noteLines };
  const oneEach = noteLines.map((n) => Math.min(1, n));
  if (compact(oneEach) <= height) return { spaced: false, noteLines: oneEach };
  return { spaced: false, noteLines: oneEach.map((n, i) => (i === focus ? n : 0)) };
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
