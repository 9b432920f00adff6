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
  | 'editInEditor'
  | 'delete'
  | 'refresh'
  | 'filter'
  | 'sortByKey'
  | 'sortByDescription'
  | 'copy'
  | 'commandLine'
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
    case 'E': return 'editInEditor';
    case 'd': return 'delete';
    case 'r': return 'refresh';
    case '/': return 'filter';
    case 's': return 'sortByKey';
    case 'S': return 'sortByDescription';
    case 'c': return 'copy';
    case ':': return 'commandLine';
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

export const PROMPT_HINTS: readonly Hint[] = [
  ['enter', 'run', 8],
  ['esc', 'cancel', 9],
];

/** The screens `?` explains: each lists the keys that work there, and no others. */
export type HelpTopic = 'namespaces' | 'bases' | 'base';

interface Binding {
  keys: string;
  does: string;
  on: readonly HelpTopic[];
}

const LISTS: readonly HelpTopic[] = ['namespaces', 'bases'];
const ALL: readonly HelpTopic[] = ['namespaces', 'bases', 'base'];

/** Every key of the screens, once: the help of each screen is the keys whose `on` names it. */
const BINDINGS: readonly Binding[] = [
  { keys: 'up/down, j/k', does: 'move the selection', on: LISTS },
  { keys: 'PgUp/PgDn', does: 'move a page', on: LISTS },
  { keys: 'g/Home, G/End', does: 'go to the first / the last row', on: LISTS },
  { keys: 'enter', does: 'open the selected namespace', on: ['namespaces'] },
  { keys: 'enter', does: 'open the selected base', on: ['bases'] },
  { keys: 'n', does: 'new namespace (a form: key, then description)', on: ['namespaces'] },
  { keys: 'n', does: 'new base (a form: key, then description)', on: ['bases'] },
  { keys: 'e', does: 'edit the description here, on one line', on: ALL },
  { keys: 'E', does: 'edit the description in $VISUAL / $EDITOR (unchanged or emptied: nothing is sent)', on: ALL },
  { keys: 'd', does: 'namespaces cannot be deleted (the kb API has no namespace delete)', on: ['namespaces'] },
  { keys: 'd', does: 'delete the base (asks first: y confirms, any other key cancels)', on: ['bases', 'base'] },
  { keys: 's', does: 'sort by key; again: the other way', on: LISTS },
  { keys: 'S', does: 'sort by description; again: the other way', on: LISTS },
  { keys: '/', does: 'filter by key or description: type to narrow, enter keeps, esc clears', on: LISTS },
  { keys: 'c', does: 'copy the key to the clipboard (OSC 52: works over ssh)', on: ALL },
  { keys: 'r', does: 'refresh now (lists also refresh by themselves while idle)', on: ALL },
  { keys: 'o', does: 'open a base by key (when the deployment cannot list bases)', on: ['bases'] },
  { keys: ':', does: 'command line: :ns (namespaces), :ns KEY (open one), :q (quit)', on: ALL },
  { keys: 'esc', does: 'clear the filter, else go back', on: ['bases'] },
  { keys: 'esc', does: 'clear the filter', on: ['namespaces'] },
  { keys: 'esc', does: 'back to the list', on: ['base'] },
  { keys: '?', does: 'this help', on: ALL },
  { keys: 'q, ctrl-c', does: 'quit', on: ALL },
];

/** The help of `?` on one screen: its keys, then those of the forms it opens. */
export function helpSections(topic: HelpTopic): readonly { title: string; keys: readonly Hint[] }[] {
  const title = topic === 'namespaces' ? 'Namespaces' : topic === 'bases' ? 'Bases of a namespace' : 'A base';
  return [
    { title, keys: BINDINGS.filter((binding) => binding.on.includes(topic)).map(({ keys, does }) => [keys, does] as const) },
    {
      title: 'Forms (n, e) and prompts (/, :)',
      keys: [
        ['enter, tab', 'next field; enter on the last field submits'],
        ['shift-tab', 'previous field'],
        ['left/right, Home/End', 'move in the field'],
        ['backspace, ctrl-u', 'delete a character, clear up to the cursor'],
        ['esc', 'cancel'],
        ['letters', 'text, never commands, while a field has the focus'],
        ['empty key', 'the server generates one; an empty description is none (in an edit: cleared)'],
      ],
    },
  ];
}
