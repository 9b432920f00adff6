import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../src/client/errors.js';
import { fitHints } from '../../src/tui/components/KeyHelp.js';
import { describeError } from '../../src/tui/errors.js';
import { editText, textAt } from '../../src/tui/hooks/textEdit.js';
import { splitKeys } from '../../src/tui/hooks/useKeys.js';
import { filterRows, windowTop } from '../../src/tui/hooks/useList.js';
import { HINTS } from '../../src/tui/keymap.js';
import { count, printable, upsertRow } from '../../src/tui/text.js';
import type { Row } from '../../src/tui/types.js';

const NONE: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false,
  end: false, return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false,
  meta: false, super: false, hyper: false, capsLock: false, numLock: false,
};
const key = (flags: Partial<Key>): Key => ({ ...NONE, ...flags });

describe('windowTop: the first visible row of a list', () => {
  it('stays put while the selection is in view, and moves by as little as it must', () => {
    expect(windowTop(0, 5, 10, 100)).toBe(0);
    expect(windowTop(0, 10, 10, 100)).toBe(1);
    expect(windowTop(20, 19, 10, 100)).toBe(19);
    expect(windowTop(0, 9999, 18, 10_000)).toBe(10_000 - 18);
  });

  it('never leaves empty rows at the bottom of a list longer than the window', () => {
    expect(windowTop(95, 96, 10, 100)).toBe(90);
    expect(windowTop(5, 2, 10, 4)).toBe(0);
  });
});

describe('filterRows', () => {
  const rows = [{ key: 'Alpha', description: 'First' }, { key: 'beta', description: null }, { key: 'gamma', description: undefined }];
  it('matches key or description, ignoring case; an empty filter keeps everything', () => {
    expect(filterRows(rows, 'ALP').map((row) => row.key)).toEqual(['Alpha']);
    expect(filterRows(rows, 'first').map((row) => row.key)).toEqual(['Alpha']);
    expect(filterRows(rows, 'a').map((row) => row.key)).toEqual(['Alpha', 'beta', 'gamma']);
    expect(filterRows(rows, '  ')).toBe(rows);
  });
});

describe('editText: a line being edited', () => {
  it('inserts at the cursor, moves by code points, and erases before the cursor', () => {
    let state = textAt('ab😀');
    expect(state.cursor).toBe(3);
    state = editText(state, '', key({ leftArrow: true }))!;
    state = editText(state, 'X', NONE)!;
    expect(state).toEqual({ value: 'abX😀', cursor: 3 });
    state = editText(state, '', key({ delete: true }))!;
    state = editText(state, '', key({ backspace: true }))!;
    expect(state).toEqual({ value: 'a😀', cursor: 1 });
    state = editText(state, 'u', key({ ctrl: true }))!;
    expect(state).toEqual({ value: '😀', cursor: 0 });
  });

  it('leaves enter, tab, esc and ctrl-letters it does not know to the form, and drops control characters from a paste', () => {
    const state = textAt('key');
    expect(editText(state, '\r', key({ return: true }))).toBeUndefined();
    expect(editText(state, '', key({ tab: true }))).toBeUndefined();
    expect(editText(state, '', key({ escape: true }))).toBeUndefined();
    expect(editText(state, 'x', key({ ctrl: true }))).toBeUndefined();
    expect(editText(state, 'two\u001B words\u0007', NONE)).toEqual({ value: 'keytwo words', cursor: 12 });
  });
});

describe('splitKeys: what Ink reads at once, as the keys typed', () => {
  it('keeps text and escape-free input as one key (a paste)', () => {
    expect(splitKeys('Frequently asked', NONE)).toEqual([['Frequently asked', NONE]]);
    expect(splitKeys('\r', key({ return: true }))).toEqual([['\r', key({ return: true })]]);
  });

  it('splits at control characters: tab, enter, backspace and ctrl-letters are keys of their own', () => {
    expect(splitKeys('faq\tFrequently asked\r', NONE)).toEqual([
      ['faq', NONE],
      ['', key({ tab: true })],
      ['Frequently asked', NONE],
      ['\r', key({ return: true })],
    ]);
    expect(splitKeys('ab\u007F\u0015c\r\n', NONE)).toEqual([
      ['ab', NONE],
      ['', key({ delete: true })],
      ['u', key({ ctrl: true })],
      ['c', NONE],
      ['\r', key({ return: true })],
    ]);
  });
});

describe('fitHints: the key-help line of a narrow terminal', () => {
  const all = [HINTS.move, HINTS.open, HINTS.new, HINTS.edit, HINTS.delete, HINTS.filter, HINTS.refresh, HINTS.back, HINTS.help, HINTS.quit];
  it('keeps every hint that fits, and drops those that matter least first, never help, quit or back', () => {
    expect(fitHints(all, 200)).toEqual(all);
    const narrow = fitHints(all, 40);
    expect(narrow).toEqual([HINTS.new, HINTS.back, HINTS.help, HINTS.quit]);
    expect(fitHints(all, 20)).toEqual([HINTS.help, HINTS.quit]);
  });
});

describe('describeError: what went wrong and what to do', () => {
  it('names the profile to log in again after a 401', () => {
    const error = new ApiError({ status: 401, message: 'Invalid or revoked token', url: 'http://x/v1/ns_list', method: 'GET' });
    expect(describeError(error, 'staging')).toEqual({
      tone: 'error',
      text: 'Invalid or revoked token (401)',
      help: 'The token was refused: log in again with `kb auth login --profile staging`, or set KB_TOKEN. r retries.',
    });
  });

  it('keeps the server\'s own help where it gives one, and says what a network failure means', () => {
    const conflict = new ApiError({ status: 400, message: 'Invalid request body', help: 'Allowed fields: key.', url: 'u', method: 'POST' });
    expect(describeError(conflict, undefined).help).toBe('Allowed fields: key.');
    const network = new NetworkError('refused', 'http://127.0.0.1:9/v1/ns_list', 'GET', 'connection refused');
    expect(describeError(network, undefined)).toMatchObject({ text: 'cannot reach http://127.0.0.1:9/v1/ns_list: connection refused' });
  });
});

describe('text helpers', () => {
  it('printable turns control characters (newlines, escape sequences) into spaces', () => {
    expect(printable('two\nlines \u001B[31mred')).toBe('two lines  [31mred');
  });

  it('upsertRow keeps byte order (uppercase before lowercase) and replaces a row of the same key', () => {
    const rows: Row[] = [{ key: 'B', description: null }, { key: 'a', description: null }];
    expect(upsertRow(rows, { key: 'Z', description: null }).map((row) => row.key)).toEqual(['B', 'Z', 'a']);
    expect(upsertRow(rows, { key: 'a', description: 'new' })).toEqual([{ key: 'B', description: null }, { key: 'a', description: 'new' }]);
  });

  it('count spells plurals', () => {
    expect([count(1, 'base'), count(10_000, 'namespace'), count(2, 'match')]).toEqual(['1 base', '10,000 namespaces', '2 matches']);
  });
});
