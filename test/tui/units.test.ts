import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../src/client/errors.js';
import { fitHints } from '../../src/tui/components/KeyHelp.js';
import { describeError } from '../../src/tui/errors.js';
import { editText, textAt } from '../../src/tui/hooks/textEdit.js';
import { createKeyReader, splitKeys } from '../../src/tui/hooks/useKeys.js';
import { compileFilter, filterRows, windowTop } from '../../src/tui/hooks/useList.js';
import { commandFor, type Hint, helpSections, hintsFor } from '../../src/tui/keymap.js';
import { columns } from '../../src/tui/components/Table.js';
import { osc52 } from '../../src/tui/terminal.js';
import { ago, count, printable, sortRows, thousands, upsertRow } from '../../src/tui/text.js';
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

  it('reads the filter as a regular expression, ignoring case; ! first inverts it', () => {
    expect(filterRows(rows, '^alp').map((row) => row.key)).toEqual(['Alpha']);
    expect(filterRows(rows, '^(beta|gamma)$').map((row) => row.key)).toEqual(['beta', 'gamma']);
    expect(filterRows(rows, '!^alp').map((row) => row.key)).toEqual(['beta', 'gamma']);
    expect(filterRows(rows, '!')).toBe(rows);
  });

  it('matches a filter that is not a regular expression as plain text, and says it is invalid', () => {
    const tagged = [{ key: 'tag-one', description: 'has [x' }, { key: 'other', description: null }];
    expect(filterRows(tagged, '[x').map((row) => row.key)).toEqual(['tag-one']);
    expect(compileFilter('[x')).toMatchObject({ invalid: true, inverted: false });
    expect(compileFilter('!^a')).toMatchObject({ invalid: false, inverted: true });
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

describe('splitKeys: text read at once, as the keys typed', () => {
  it('makes every character a key: jjj is three keys, as tmux send-keys -l jjj sends them', () => {
    expect(splitKeys('jjj')).toEqual([
      ['j', NONE],
      ['j', NONE],
      ['j', NONE],
    ]);
    expect(splitKeys('dy')).toEqual([
      ['d', NONE],
      ['y', NONE],
    ]);
    expect(splitKeys('G:')).toEqual([
      ['G', key({ shift: true })],
      [':', NONE],
    ]);
  });

  it('reads control characters as their keys: tab, enter, backspace and ctrl-letters', () => {
    expect(splitKeys('a\tb\r\n\u007F\u0015')).toEqual([
      ['a', NONE],
      ['', key({ tab: true })],
      ['b', NONE],
      ['\r', key({ return: true })],
      ['', key({ delete: true })],
      ['u', key({ ctrl: true })],
    ]);
  });
});

describe('createKeyReader: bracketed paste is text, everything else keys', () => {
  const ESC = '\u001B';
  it('makes a bracketed paste one key marked paste, also when it comes over several reads', () => {
    const read = createKeyReader();
    expect(read(`${ESC}[200~`, '[200~', NONE)).toEqual([]);
    expect(read('d', 'd', NONE)).toEqual([]);
    expect(read('d\r\n', 'd\r\n', NONE)).toEqual([]);
    expect(read(`${ESC}[201~`, '[201~', NONE)).toEqual([['dd\n', { ...NONE, paste: true }]]);
    // After the paste, keys again.
    expect(read('jk', 'jk', NONE)).toEqual([
      ['j', NONE],
      ['k', NONE],
    ]);
  });

  it('leaves an escape sequence one key, as Ink read it', () => {
    const read = createKeyReader();
    expect(read(`${ESC}[A`, '', key({ upArrow: true }))).toEqual([['', key({ upArrow: true })]]);
    expect(read(`${ESC}[Z`, '', key({ tab: true, shift: true }))).toEqual([['', key({ tab: true, shift: true })]]);
  });

});

describe('fitHints: the key-help line of a narrow terminal', () => {
  const all = hintsFor('bases');
  const keys = (hints: readonly Hint[]) => hints.map(([typed]) => typed);
  it('keeps every hint that fits, and drops those that matter least first (copy and sort before open, new, edit, delete), never help or quit', () => {
    expect(keys(all)).toEqual(['j/k', 'enter', 'n', 'e', 'E', 'd', 'ctrl-d', 'space', '/', 's/S', 'c', ':', 'y', 'r', 'o', 'esc', '?', 'q']);
    expect(fitHints(all, 200)).toEqual(all);
    expect(keys(fitHints(all, 100))).toEqual(['enter', 'n', 'e', 'ctrl-d', '/', 'o', 'esc', '?', 'q']);
    expect(keys(fitHints(all, 80))).toEqual(['enter', 'n', 'e', '/', 'o', 'esc', '?', 'q']);
    expect(keys(fitHints(all, 60))).toEqual(['enter', 'e', 'o', 'esc', '?', 'q']);
    expect(keys(fitHints(all, 40))).toEqual(['enter', 'esc', '?', 'q']);
    expect(keys(fitHints(all, 20))).toEqual(['?', 'q']);
  });

  it('keeps the keys the screen names before any other', () => {
    expect(keys(fitHints(hintsFor('bases', [], ['new', 'refresh']), 40))).toEqual(['n', 'r', '?', 'q']);
    expect(keys(fitHints(hintsFor('namespaces', ['back'], ['new']), 40))).toEqual(['enter', 'n', '?', 'q']);
  });

  it('leaves out what a screen cannot do right now', () => {
    expect(keys(hintsFor('namespaces'))).toContain('esc');
    expect(keys(hintsFor('namespaces', ['back']))).not.toContain('esc');
    expect(keys(hintsFor('bases', ['openByKey']))).not.toContain('o');
    expect(keys(hintsFor('base', ['refresh']))).toEqual(['e', 'E', 'ctrl-d', 'c', ':', 'y', 'esc', '?', 'q']);
  });
});

describe('the keymap: one table for what the keys do, the help and the key-help line', () => {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  /** Every key Ink names, every printable ASCII character and every ctrl-letter, each with its name in the help. */
  const UNIVERSE: [name: string, input: string, key: Key][] = [
    ['up', '', key({ upArrow: true })],
    ['down', '', key({ downArrow: true })],
    ['left', '', key({ leftArrow: true })],
    ['right', '', key({ rightArrow: true })],
    ['PgUp', '', key({ pageUp: true })],
    ['PgDn', '', key({ pageDown: true })],
    ['Home', '', key({ home: true })],
    ['End', '', key({ end: true })],
    ['enter', '\r', key({ return: true })],
    ['esc', '', key({ escape: true })],
    ['tab', '', key({ tab: true })],
    ['shift-tab', '', key({ tab: true, shift: true })],
    ['backspace', '', key({ backspace: true })],
    ['delete', '', key({ delete: true })],
    ['space', ' ', key({})],
    ...Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).map((char): [string, string, Key] => [char, char, key({ shift: /[A-Z]/.test(char) })]),
    ...Array.from(letters, (char): [string, string, Key] => [`ctrl-${char}`, char, key({ ctrl: true })]),
  ];
  /** The key names in a help entry: "g/Home, G/End" is g, Home, G and End; "/" is itself. */
  const names = (label: string) =>
    label.split(/, /).flatMap((part) => {
      const pieces = part.split('/');
      return pieces.includes('') ? [part] : pieces;
    });

  for (const topic of ['namespaces', 'bases', 'base', 'help', 'yaml'] as const) {
    it(`${topic}: every key that does something there is in its help, and every key its help names does something`, () => {
      const [screen] = helpSections(topic);
      const help = (screen?.keys ?? []).flatMap(([label]) => names(label));
      const live = UNIVERSE.filter(([, input, k]) => commandFor(input, k, topic) !== undefined).map(([name]) => name);
      expect(live).toEqual(expect.arrayContaining(['esc', '?', 'q']));
      for (const name of live) expect(help, `${name} does something on ${topic}`).toContain(name);
      // ctrl-c quits on every screen in the key router, before any screen sees it.
      for (const name of help.filter((each) => each !== 'ctrl-c')) expect(live, `help on ${topic} names ${name}`).toContain(name);
    });
  }

  it('the lists take s, S, E, c and : (and the key-help line says so); the base screen E, c and :', () => {
    for (const topic of ['namespaces', 'bases'] as const) {
      expect(['s', 'S', 'E', 'c', ':'].map((typed) => commandFor(typed, key({ shift: /[A-Z]/.test(typed) }), topic))).toEqual(['sortByKey', 'sortByDescription', 'editInEditor', 'copy', 'commandLine']);
      expect(hintsFor(topic).map(([typed]) => typed)).toEqual(expect.arrayContaining(['s/S', 'E', 'c', ':', '?']));
    }
    expect(['E', 'c', ':', 's'].map((typed) => commandFor(typed, key({ shift: typed === 'E' }), 'base'))).toEqual(['editInEditor', 'copy', 'commandLine', undefined]);
  });
});

describe('describeError: what went wrong and what to do', () => {
  it('names where a token refused (401) came from, KB_TOKEN or the profile, with the next step for it', () => {
    const error = new ApiError({ status: 401, message: 'Invalid or revoked token', url: 'http://x/v1/ns_list', method: 'GET' });
    const url = 'http://x';
    expect(describeError(error, { profile: 'staging', url, tokenSource: 'profile' })).toEqual({
      tone: 'error',
      text: 'Invalid or revoked token (401)',
      help: 'The token came from profile "staging" (http://x): log in again with `kb auth login --profile staging`, or remove the profile with `kb auth remove staging`. r retries.',
      keys: ['refresh'],
    });
    expect(describeError(error, { profile: 'staging', url, tokenSource: 'env' }).help).toBe(
      'The token came from KB_TOKEN (it overrides the token of profile "staging"): set KB_TOKEN to a valid token, or unset it. r retries.',
    );
    expect(describeError(error, { profile: undefined, url, tokenSource: 'env' }).help).toBe('The token came from KB_TOKEN: set KB_TOKEN to a valid token, or unset it. r retries.');
    // A read-only token asked to write: the token works, its scope does not allow it.
    const readOnly = new ApiError({ status: 403, message: 'This token is read-only: it cannot write', url: 'http://x/v1/ns_create', method: 'POST' });
    expect(describeError(readOnly, { profile: 'staging', url, tokenSource: 'profile' }).help).toBe('This token may read, not write: log in with a token of full scope (`kb auth login --profile staging`).');
    // Where it came from is not known: both ways to fix it.
    expect(describeError(error, { profile: 'staging', url }).help).toBe('The token was refused: log in again with `kb auth login --profile staging`, or set KB_TOKEN. r retries.');
  });

  it('keeps the server\'s own help where it gives one, and says what a network failure means', () => {
    const conflict = new ApiError({ status: 400, message: 'Invalid request body', help: 'Allowed fields: key.', url: 'u', method: 'POST' });
    expect(describeError(conflict, undefined).help).toBe('Allowed fields: key.');
    const network = new NetworkError('refused', 'http://127.0.0.1:9/v1/ns_list', 'GET', 'connection refused');
    expect(describeError(network, undefined)).toMatchObject({ text: 'cannot reach http://127.0.0.1:9/v1/ns_list: connection refused' });
  });
});

describe('text helpers', () => {
  it('printable makes newlines and tabs spaces, and shows other controls (escapes, bidi overrides) as the CLI does', () => {
    expect(printable('two\nlines\tand \u001B[31mred')).toBe('two lines and \\x1b[31mred');
    expect(printable('invoice\u202Etxt.exe \u0085 \u0007')).toBe('invoice\\u202etxt.exe \\x85 \\x07');
  });

  it('upsertRow keeps byte order (uppercase before lowercase) and replaces a row of the same key', () => {
    const rows: Row[] = [{ key: 'B', description: null }, { key: 'a', description: null }];
    expect(upsertRow(rows, { key: 'Z', description: null }).map((row) => row.key)).toEqual(['B', 'Z', 'a']);
    expect(upsertRow(rows, { key: 'a', description: 'new' })).toEqual([{ key: 'B', description: null }, { key: 'a', description: 'new' }]);
  });

  it('count spells plurals', () => {
    expect([count(1, 'base'), count(10_000, 'namespace'), count(2, 'match')]).toEqual(['1 base', '10,000 namespaces', '2 matches']);
  });

  it('thousands writes whole numbers as toLocaleString("en-US") does', () => {
    const numbers = [0, 7, 42, 999, 1_000, 12_345, 100_000, 999_999, 1_000_000, 123_456_789];
    expect(numbers.map(thousands)).toEqual(numbers.map((n) => n.toLocaleString('en-US')));
  });
});

describe('sortRows', () => {
  const rows = [{ key: 'a', description: 'pear' }, { key: 'B', description: null }, { key: 'c', description: 'Apple' }, { key: 'd', description: 'apple' }];
  it('keeps key order as it comes, reverses it, and sorts by description with the rows without one last', () => {
    expect(sortRows(rows, { by: 'key', descending: false })).toBe(rows);
    expect(sortRows(rows, { by: 'key', descending: true }).map((row) => row.key)).toEqual(['d', 'c', 'B', 'a']);
    expect(sortRows(rows, { by: 'description', descending: false }).map((row) => row.key)).toEqual(['c', 'd', 'a', 'B']);
    expect(sortRows(rows, { by: 'description', descending: true }).map((row) => row.key)).toEqual(['a', 'c', 'd', 'B']);
  });
});

describe('the table columns', () => {
  it('make the key column as wide as the longest key, within 45% of the width, and give the rest to the description', () => {
    expect(columns([{ key: 'abc', description: null }, { key: 'a-longer-key', description: null }], 100)).toEqual({ key: 12, description: 100 - 2 - 12 - 2 });
    expect(columns([{ key: 'k'.repeat(63), description: null }], 60)).toEqual({ key: 26, description: 30 });
  });
});

describe('small words', () => {
  it('ago says how long since, in the largest whole unit; under 5 seconds, just now', () => {
    expect([ago(0, 0), ago(0, 999), ago(0, 4_999), ago(0, 5_000), ago(0, 125_000), ago(0, 7_300_000)]).toEqual([
      'just now',
      'just now',
      'just now',
      '5s ago',
      '2m ago',
      '2h ago',
    ]);
    // A clock read before the load landed is not a negative age.
    expect(ago(10_000, 9_000)).toBe('just now');
  });

  it('osc52 is the "set clipboard" sequence with the text in base64', () => {
    expect(osc52('docs')).toBe('\u001B]52;c;ZG9jcw==\u0007');
    expect(osc52('日本')).toBe(`\u001B]52;c;${Buffer.from('日本').toString('base64')}\u0007`);
  });
});
