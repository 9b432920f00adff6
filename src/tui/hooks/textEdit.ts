import type { Keypress } from '../keymap.js';

/** A line of text being edited; `cursor` counts code points, so an emoji is one step. */
export interface TextState {
  value: string;
  cursor: number;
}

export function textAt(value: string): TextState {
  return { value, cursor: Array.from(value).length };
}

/** Control characters (a pasted newline, a tab) never become part of a key or a description. */
const CONTROL = /\p{Cc}/gu;

/**
 * Applies a key to a line of text: printable input (or a paste, whole) is inserted at the cursor, and the usual editing keys work.
 * Returns undefined for keys that are not editing (enter, tab, esc, up/down), which the form handles.
 */
export function editText(state: TextState, input: string, key: Keypress): TextState | undefined {
  const chars = Array.from(state.value);
  const cursor = Math.min(state.cursor, chars.length);
  if (key.return || key.tab || key.escape || key.upArrow || key.downArrow || key.pageUp || key.pageDown) return undefined;
  if (key.leftArrow) return { value: state.value, cursor: Math.max(0, cursor - 1) };
  if (key.rightArrow) return { value: state.value, cursor: Math.min(chars.length, cursor + 1) };
  if (key.home || (key.ctrl && input === 'a')) return { value: state.value, cursor: 0 };
  if (key.end || (key.ctrl && input === 'e')) return { value: state.value, cursor: chars.length };
  // Most terminals send DEL (0x7f) for backspace, which Ink reports as `delete`: both erase before the cursor.
  if (key.backspace || key.delete || (key.ctrl && input === 'h')) {
    if (cursor === 0) return state;
    chars.splice(cursor - 1, 1);
    return { value: chars.join(''), cursor: cursor - 1 };
  }
  if (key.ctrl && input === 'u') return { value: chars.slice(cursor).join(''), cursor: 0 };
  if (key.ctrl && input === 'k') return { value: chars.slice(0, cursor).join(''), cursor };
  if (key.ctrl || key.meta) return undefined;
  // A pasted line break or tab is a space between words (a last line break, none), never a key.
  const words = key.paste === true ? input.replace(/[\r\n]+$/, '').replace(/[\t\r\n]+/g, ' ') : input;
  const text = words.replace(CONTROL, '');
  if (text === '') return undefined;
  const inserted = Array.from(text);
  chars.splice(cursor, 0, ...inserted);
  return { value: chars.join(''), cursor: cursor + inserted.length };
}
