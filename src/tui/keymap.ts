import type { Key } from 'ink';

/** What a key does on a list or a detail screen (CONTRACT section 5); text fields never see these. */
export type Command =
  | 'up'
  | 'down'
  | 'pageUp'
  | 'pageDown'
  | 'first'
  | 'last'
  | 'open'
  | 'new'
  | 'edit'
  | 'delete'
  | 'refresh'
  | 'filter'
  | 'openByKey'
  | 'help'
  | 'back'
  | 'quit';

/** Enter: the terminal sends CR; a bare LF (ctrl-j) counts too. */
export function isEnter(input: string, key: Key): boolean {
  return key.return || input === '\r' || input === '\n';
}

export function commandFor(input: string, key: Key): Command | undefined {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.pageUp) return 'pageUp';
  if (key.pageDown) return 'pageDown';
  if (key.home) return 'first';
  if (key.end) return 'last';
  if (isEnter(input, key)) return 'open';
  if (key.escape) return 'back';
  if (key.ctrl || key.meta) return undefined;
  switch (input) {
    case 'k': return 'up';
    case 'j': return 'down';
    case 'g': return 'first';
    case 'G': return 'last';
    case 'n': return 'new';
    case 'e': return 'edit';
    case 'd': return 'delete';
    case 'r': return 'refresh';
    case '/': return 'filter';
    case 'o': return 'openByKey';
    case '?': return 'help';
    case 'q': return 'quit';
    default: return undefined;
  }
}

/**
 * One hint of the key-help line: the key as typed, what it does, and how much it matters (1 to 9, 5 unless told):
 * a narrow terminal drops the hints that matter least first, and never the way to help or out.
 */
export type Hint = readonly [keys: string, does: string, rank?: number];

export const HINTS = {
  move: ['j/k', 'move', 1],
  open: ['enter', 'open', 4],
  new: ['n', 'new', 6],
  edit: ['e', 'edit', 5],
  delete: ['d', 'delete', 5],
  filter: ['/', 'filter', 3],
  refresh: ['r', 'refresh', 2],
  openByKey: ['o', 'open by key', 7],
  back: ['esc', 'back', 8],
  help: ['?', 'help', 9],
  quit: ['q', 'quit', 9],
} as const satisfies Record<string, Hint>;

export const FORM_HINTS: readonly Hint[] = [
  ['enter/tab', 'next field', 8],
  ['shift-tab', 'previous', 3],
  ['enter on last', 'submit', 7],
  ['esc', 'cancel', 9],
];

export const EDIT_HINTS: readonly Hint[] = [
  ['enter', 'save', 8],
  ['empty + enter', 'clear', 7],
  ['ctrl-u', 'erase', 3],
  ['esc', 'cancel', 9],
];

export const CONFIRM_HINTS: readonly Hint[] = [
  ['y', 'delete', 9],
  ['any other key', 'cancel', 9],
];

/** The full help of `?`: every key, by where it works. */
export const HELP_SECTIONS: readonly { title: string; keys: readonly Hint[] }[] = [
  {
    title: 'Lists (namespaces, bases)',
    keys: [
      ['up/down, j/k', 'move the selection'],
      ['PgUp/PgDn', 'move a page'],
      ['g/Home, G/End', 'go to the first / the last row'],
      ['enter', 'open the selected namespace or base'],
      ['n', 'new namespace or base (a form: key, then description)'],
      ['e', 'edit the description of the selected row'],
      ['d', 'delete the selected base (asks first: y confirms, any other key cancels)'],
      ['r', 'refresh from the server'],
      ['/', 'filter (by key or description)'],
      ['o', 'open a base by key (when the deployment cannot list bases)'],
      ['esc', 'clear the filter, else go back'],
      ['?', 'this help'],
      ['q', 'quit'],
    ],
  },
  {
    title: 'Filter',
    keys: [
      ['type', 'narrow the list live'],
      ['enter', 'keep the filter, back to the list (first match selected)'],
      ['esc', 'clear the filter'],
    ],
  },
  {
    title: 'Forms',
    keys: [
      ['enter, tab', 'next field; enter on the last field submits'],
      ['shift-tab', 'previous field'],
      ['left/right, Home/End', 'move in the field'],
      ['backspace, ctrl-u', 'delete a character, clear up to the cursor'],
      ['esc', 'cancel'],
      ['', 'letters typed in a field are text, never commands'],
      ['', 'a key left empty is generated; a description left empty is none (in an edit: cleared)'],
    ],
  },
  {
    title: 'Anywhere',
    keys: [
      ['ctrl-c', 'quit'],
    ],
  },
];
