import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the UI asks of the terminal beyond drawing on it. */
export interface Terminal {
  /** Puts text on the clipboard of the terminal the user sits at, through OSC 52 (which crosses ssh and tmux). */
  copy(text: string): void;
  /**
   * Hands the terminal to `run` (the user's editor) and takes it back: the UI's screen and raw mode are left, so
   * the editor finds the terminal as a shell leaves it; then they are restored, and the caller redraws.
   */
  suspend<T>(run: () => T): T;
  /** The editor command ($VISUAL, else $EDITOR, else vi), as a shell would run it: it may carry arguments. */
  editor: string;
}

/** Bracketed-paste mode (xterm; tcell's EnablePaste): the terminal marks pasted text with PASTE_START ... PASTE_END. */
export const ENABLE_BRACKETED_PASTE = '\u001B[?2004h';
export const DISABLE_BRACKETED_PASTE = '\u001B[?2004l';
export const PASTE_START = '\u001B[200~';
export const PASTE_END = '\u001B[201~';
export const ENTER_ALTERNATE_SCREEN = '\u001B[?1049h';
export const LEAVE_ALTERNATE_SCREEN = '\u001B[?1049l';
const CLEAR_AND_HOME = '\u001B[2J\u001B[H';
const SHOW_CURSOR = '\u001B[?25h';
const HIDE_CURSOR = '\u001B[?25l';

/** OSC 52 "set the clipboard", terminated by BEL, which more terminals accept than ST. */
export function osc52(text: string): string {
  return `\u001B]52;c;${Buffer.from(text, 'utf8').toString('base64')}\u0007`;
}

/** The terminal of runTui: the real streams, the alternate screen that the UI lives on. */
export function processTerminal(options: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream; editor: string }): Terminal {
  const { stdin, stdout, editor } = options;
  return {
    copy: (text) => void stdout.write(osc52(text)),
    suspend(run) {
      stdout.write(DISABLE_BRACKETED_PASTE + LEAVE_ALTERNATE_SCREEN + SHOW_CURSOR);
      stdin.setRawMode(false);
      try {
        return run();
      } finally {
        stdin.setRawMode(true);
        stdout.write(ENTER_ALTERNATE_SCREEN + CLEAR_AND_HOME + HIDE_CURSOR + ENABLE_BRACKETED_PASTE);
      }
    },
    editor,
  };
}

/** What came back from the editor: text to send, or why nothing is sent. */
export type EditorOutcome =
  | { kind: 'edited'; text: string }
  | { kind: 'unchanged' }
  | { kind: 'emptied' }
  | { kind: 'failed'; message: string }
  | { kind: 'notFound'; message: string };

/**
 * Opens `text` in the editor in a file of its own (named after `name`, so the editor's title says what it is),
 * and reads it back once the editor exits. Editors end a file with a newline: one is taken off. The UI does not
 * run meanwhile (the call blocks), so nothing draws over the editor.
 */
export function editInEditor(terminal: Terminal, text: string, name: string): EditorOutcome {
  const dir = mkdtempSync(join(tmpdir(), 'kb-edit-'));
  try {
    const file = join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.txt`);
    writeFileSync(file, text === '' ? '' : `${text}\n`, { mode: 0o600 });
    // As git runs core.editor: through the shell, so "code --wait" works, with the file as one argument.
    const result = terminal.suspend(() => spawnSync('/bin/sh', ['-c', `${terminal.editor} "$1"`, 'kb', file], { stdio: 'inherit' }));
    if (result.error !== undefined) return { kind: 'failed', message: `cannot run the editor "${terminal.editor}": ${result.error.message}` };
    // The shell's "command not found" (126: found but not executable).
    if (result.status === 127 || result.status === 126) return { kind: 'notFound', message: `The editor "${terminal.editor}" was not found` };
    if (result.status !== 0) {
      const how = result.signal === null ? `exited with ${result.status}` : `was stopped by ${result.signal}`;
      return { kind: 'failed', message: `the editor "${terminal.editor}" ${how}` };
    }
    const edited = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    if (edited === text) return { kind: 'unchanged' };
    if (edited.trim() === '') return { kind: 'emptied' };
    return { kind: 'edited', text: edited };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
