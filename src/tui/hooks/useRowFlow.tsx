import { type ReactNode, useState } from 'react';
import { Confirm } from '../components/Confirm.js';
import { Form, type FormValues } from '../components/Form.js';
import { Spinner } from '../components/Spinner.js';
import { StatusLines } from '../components/StatusLines.js';
import { useTui } from '../context.js';
import { describeError, isConflict } from '../errors.js';
import { descriptionField, descriptionProblem } from '../fields.js';
import { type Command, CONFIRM_HINTS, EDIT_HINTS, type Hint } from '../keymap.js';
import { editInEditor } from '../terminal.js';
import type { Row, Status } from '../types.js';

/** What a screen can do to a row on the server; each call updates the screen's data and resolves to the row. */
export interface RowOps {
  noun: 'namespace' | 'base';
  /** Sets (a string) or clears (null) the description. */
  update(row: Row, description: string | null): Promise<Row>;
  /** Deletes after `question` (naming what goes) is answered y. */
  remove?: { run(row: Row): Promise<Row>; question(row: Row): string; cascade?: Cascade | undefined } | undefined;
  /** Why ctrl-d does nothing, where there is no remove. */
  cannotDelete?: string | undefined;
}

/**
 * Where a delete is refused (409) because the row holds others (a namespace its bases): how many it holds, read
 * after the refusal, then a second question naming them, and the delete that takes them with it.
 */
export interface Cascade {
  count(row: Row): Promise<number | undefined>;
  question(row: Row, count: number | undefined): string;
  run(row: Row): Promise<Row>;
  /** "namespace docs and its 3 bases", for the spinner and the outcome. */
  what(row: Row, count: number | undefined): string;
}

type Step =
  | { kind: 'edit'; row: Row }
  | { kind: 'confirm'; row: Row }
  | { kind: 'confirmCascade'; row: Row; count: number | undefined; cascade: Cascade }
  | { kind: 'confirmMany'; rows: readonly Row[] }
  | { kind: 'busy'; label: string };

export interface RowFlow {
  /** A step is under way (a form, a question, a request): it has the keys, not the screen. */
  open: boolean;
  /** Starts the step of `e`, `E` or `d` on `row`; false for any other command, which the screen handles. */
  start(command: Command | undefined, row: Row | undefined): boolean;
  /** `d` with rows marked (space): one question for them all, then each deleted in turn; `onDone` gets the keys deleted. */
  deleteMany(rows: readonly Row[], onDone: (deleted: readonly string[]) => void): void;
  /** The inline edit form, which takes the place of the screen's body. */
  body: ReactNode | undefined;
  /** The question or the spinner, which take the place of the status lines. */
  status: ReactNode | undefined;
  hints: readonly Hint[] | undefined;
}

/**
 * The one edit and delete flow of the lists and of a base's screen: `e` edits the description inline, `E` in the
 * user's editor, `d` asks before it deletes. Outcomes go to `setStatus`; `onDeleted` follows a delete (a base's
 * screen then goes back to its list).
 */
export function useRowFlow(
  ops: RowOps,
  screen: { active: boolean; width: number; height: number; setStatus(status: Status | undefined): void; onDeleted?: ((row: Row) => void) | undefined },
): RowFlow {
  const { deployment, terminal, redraw } = useTui();
  const [step, setStep] = useState<Step | undefined>(undefined);
  const { noun } = ops;
  const { setStatus } = screen;
  const done = () => setStep(undefined);

  const saved = (row: Row, description: string | null): Status => ({
    tone: 'success',
    text: description === null ? `Cleared the description of ${noun} ${row.key}.` : `Saved the description of ${noun} ${row.key}.`,
  });

  const editExternally = (row: Row) => {
    const outcome = editInEditor(terminal, row.description ?? '', `${noun}-${row.key}`);
    redraw();
    if (outcome.kind === 'unchanged') return setStatus({ tone: 'info', text: `Unchanged: nothing was sent for ${noun} ${row.key}.` });
    if (outcome.kind === 'emptied') {
      return setStatus({ tone: 'info', text: `The file was emptied: nothing was sent for ${noun} ${row.key}.`, help: 'To clear a description: e, then empty + enter.', keys: ['edit'] });
    }
    if (outcome.kind === 'notFound') {
      return setStatus({ tone: 'error', text: `${outcome.message}: nothing was sent.`, help: 'Set $VISUAL or $EDITOR to an editor that is installed (e.g. EDITOR=nano), or edit here with e.', keys: ['edit'] });
    }
    if (outcome.kind === 'failed') return setStatus({ tone: 'error', text: `${outcome.message}: nothing was sent.`, help: 'Set $VISUAL or $EDITOR to an editor that waits until the file is closed.' });
    const problem = descriptionProblem(outcome.text);
    if (problem !== undefined) {
      return setStatus({ tone: 'error', text: `Not saved: ${problem}; nothing was sent.`, help: 'E opens the editor again.', keys: ['editInEditor'] });
    }
    setStep({ kind: 'busy', label: `Saving the description of ${noun} ${row.key}` });
    ops.update(row, outcome.text).then(
      (updated) => {
        done();
        setStatus(saved(updated, outcome.text));
      },
      (error: unknown) => {
        done();
        setStatus(describeError(error, deployment));
      },
    );
  };

  const start = (command: Command | undefined, row: Row | undefined): boolean => {
    if (command !== 'edit' && command !== 'editInEditor' && command !== 'delete') return false;
    if (command === 'delete' && ops.remove === undefined) {
      setStatus({ tone: 'warning', text: ops.cannotDelete ?? `A ${noun} cannot be deleted here.` });
      return true;
    }
    if (row === undefined) {
      setStatus({ tone: 'warning', text: `No ${noun} selected to ${command === 'delete' ? 'delete' : 'edit'}.` });
      return true;
    }
    setStatus(undefined);
    if (command === 'edit') setStep({ kind: 'edit', row });
    else if (command === 'delete') setStep({ kind: 'confirm', row });
    else editExternally(row);
    return true;
  };

  const remove = (row: Row, remover: NonNullable<RowOps['remove']>) => {
    setStep({ kind: 'busy', label: `Deleting ${noun} ${row.key}` });
    remover.run(row).then(
      (deleted) => {
        done();
        setStatus({ tone: 'success', text: `Deleted ${noun} ${deleted.key}.` });
        screen.onDeleted?.(deleted);
      },
      async (error: unknown) => {
        const { cascade } = remover;
        if (cascade === undefined || !isConflict(error)) {
          done();
          return setStatus(describeError(error, deployment));
        }
        // The count is for the question only: a failure to read it still asks, without it.
        const count = await cascade.count(row).catch(() => undefined);
        setStep({ kind: 'confirmCascade', row, count, cascade });
      },
    );
  };

  const removeWith = (row: Row, count: number | undefined, cascade: Cascade) => {
    const what = cascade.what(row, count);
    setStep({ kind: 'busy', label: `Deleting ${what}` });
    cascade.run(row).then(
      (deleted) => {
        done();
        setStatus({ tone: 'success', text: `Deleted ${what}.` });
        screen.onDeleted?.(deleted);
      },
      (error: unknown) => {
        done();
        setStatus(describeError(error, deployment));
      },
    );
  };

  const [manyDone, setManyDone] = useState<{ run(deleted: readonly string[]): void } | undefined>(undefined);
  const deleteMany = (rows: readonly Row[], onDone: (deleted: readonly string[]) => void) => {
    if (ops.remove === undefined) {
      setStatus({ tone: 'warning', text: ops.cannotDelete ?? `A ${noun} cannot be deleted here.` });
      return;
    }
    setStatus(undefined);
    setManyDone({ run: onDone });
    setStep({ kind: 'confirmMany', rows });
  };

  const removeMany = async (rows: readonly Row[], remover: NonNullable<RowOps['remove']>) => {
    setStep({ kind: 'busy', label: `Deleting ${rows.length} ${noun}s` });
    const deleted: string[] = [];
    const failed: string[] = [];
    // One at a time, so a failure (the server gone, a 401) is reported for each, and what went before is kept.
    for (const row of rows) {
      try {
        deleted.push((await remover.run(row)).key);
      } catch (error) {
        failed.push(`${row.key} (${describeError(error, deployment).text})`);
      }
    }
    done();
    manyDone?.run(deleted);
    const list = (keys: readonly string[]) => keys.join(', ');
    if (failed.length === 0) return setStatus({ tone: 'success', text: `Deleted ${rows.length} ${noun}s: ${list(deleted)}.` });
    setStatus({
      tone: 'error',
      text: `Deleted ${deleted.length} of ${rows.length} ${noun}s${deleted.length > 0 ? ` (${list(deleted)})` : ''}; not deleted: ${list(failed)}`,
      help: 'The ones not deleted stay marked: d tries them again.',
      keys: ['delete'],
    });
  };

  let body: ReactNode | undefined;
  let status: ReactNode | undefined;
  let hints: readonly Hint[] | undefined;
  if (step?.kind === 'edit') {
    const { row } = step;
    hints = EDIT_HINTS;
    body = (
      <Form
        title={`Description of ${noun} ${row.key} (empty + enter clears it)`}
        fields={[descriptionField({ initial: row.description, clears: true })]}
        busyLabel="Saving"
        active={screen.active}
        width={screen.width}
        height={screen.height}
        deployment={deployment}
        onCancel={done}
        onSubmit={async (values: FormValues) => {
          const description = values.description ? values.description : null;
          const updated = await ops.update(row, description);
          done();
          setStatus(saved(updated, description));
        }}
      />
    );
  } else if (step?.kind === 'confirm') {
    const { row } = step;
    const remover = ops.remove;
    hints = CONFIRM_HINTS;
    status = (
      <StatusLines>
        <Confirm
          question={remover?.question(row) ?? ''}
          active={screen.active}
          onAnswer={(yes) => {
            if (yes && remover !== undefined) return remove(row, remover);
            done();
            setStatus({ tone: 'info', text: `Cancelled: ${noun} ${row.key} was not deleted.` });
          }}
        />
      </StatusLines>
    );
  } else if (step?.kind === 'confirmCascade') {
    const { row, count, cascade } = step;
    hints = CONFIRM_HINTS;
    status = (
      <StatusLines>
        <Confirm
          question={cascade.question(row, count)}
          active={screen.active}
          onAnswer={(yes) => {
            if (yes) return removeWith(row, count, cascade);
            done();
            setStatus({ tone: 'info', text: `Cancelled: ${cascade.what(row, count)} were not deleted.` });
          }}
        />
      </StatusLines>
    );
  } else if (step?.kind === 'confirmMany') {
    const { rows } = step;
    const remover = ops.remove;
    hints = CONFIRM_HINTS;
    const keys = rows.map((row) => row.key).join(', ');
    status = (
      <StatusLines>
        <Confirm
          question={`Delete ${rows.length} ${noun}s, with all their data: ${keys}?`}
          active={screen.active}
          onAnswer={(yes) => {
            if (yes && remover !== undefined) return void removeMany(rows, remover);
            done();
            setStatus({ tone: 'info', text: `Cancelled: none of the ${rows.length} marked ${noun}s was deleted.` });
          }}
        />
      </StatusLines>
    );
  } else if (step?.kind === 'busy') {
    status = (
      <StatusLines>
        <Spinner label={`${step.label}...`} />
      </StatusLines>
    );
  }
  return { open: step !== undefined, start, deleteMany, body, status, hints };
}
