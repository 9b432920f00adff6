import type { Key } from 'ink';

/** What a key does on a list or a detail screen (docs/contract.md, The TUI); text fields never see these. */
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
  | 'describe'
  | 'refresh'
  | 'filter'
  | 'sortByKey'
  | 'sortByDescription'
  | 'copy'
  | 'commandLine'
  | 'openByKey'
  | 'help'
  | 'yaml'
  | 'mark'
  | 'back'
  | 'quit';

/** A key as the TUI reads it: Ink's, or a bracketed paste (`paste`, its text the input), which is never a command. */
export type Keypress = Key & { paste?: boolean };

/** Enter: the terminal sends CR; a bare LF (ctrl-j) counts too. A paste is text, whatever it holds. */
export function isEnter(input: string, key: Keypress): boolean {
  if (key.paste === true) return false;
  return key.return || input === '\r' || input === '\n';
}

/** What the key means on any screen; `commandFor` keeps only the commands of the screen it is asked for. */
function anyCommandFor(input: string, key: Keypress): Command | undefined {
  if (key.paste === true) return undefined;
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.pageUp) return 'pageUp';
  if (key.pageDown) return 'pageDown';
  if (key.home) return 'first';
  if (key.end) return 'last';
  if (isEnter(input, key)) return 'open';
  if (key.escape) return 'back';
  // As in k9s: ctrl-d deletes, d describes.
  if (key.ctrl && input === 'd' && !key.meta) return 'delete';
  if (key.ctrl || key.meta) return undefined;
  switch (input) {
    case 'k': return 'up';
    case 'j': return 'down';
    case 'g': return 'first';
    case 'G': return 'last';
    case 'n': return 'new';
    case 'e': return 'edit';
    case 'E': return 'editInEditor';
    case 'd': return 'describe';
    case 'r': return 'refresh';
    case '/': return 'filter';
    case 's': return 'sortByKey';
    case 'S': return 'sortByDescription';
    case 'c': return 'copy';
    case ':': return 'commandLine';
    case 'o': return 'openByKey';
    case '?': return 'help';
    case 'y': return 'yaml';
    case ' ': return 'mark';
    case 'q': return 'quit';
    default: return undefined;
  }
}

/**
 * One hint of the key-help line: the key as typed, what it does, and how much it matters (1 to 9, 5 unless told):
 * a narrow terminal drops the hints that matter least first, and never the way to help or out. As k9s keeps its most
 * used keys, those that open, create, edit and delete (enter, n, e, d) come before copy and sort; a key the screen
 * tells the user to press (`hintsFor`'s `named`) comes before all (10).
 */
export type Hint = readonly [keys: string, does: string, rank?: number];

/** The screens with keys of their own: each one's help (`?`) and key-help line list those keys, and no others. */
export type HelpTopic = 'namespaces' | 'bases' | 'base' | 'help' | 'yaml';

interface Binding {
  /** The keys as the help writes them: names ("PgUp", "esc", "ctrl-c") or the characters typed, "/" between keys of a pair, ", " between groups. */
  keys: string;
  /** What the keys are for `commandFor`: on a screen a binding is not `on`, they do nothing. */
  commands: readonly Command[];
  does: string;
  on: readonly HelpTopic[];
  /** Its place on the key-help line, if it has one. */
  hint?: Hint;
}

const LISTS: readonly HelpTopic[] = ['namespaces', 'bases'];
const SCREENS: readonly HelpTopic[] = ['namespaces', 'bases', 'base'];

/**
 * Every key of every screen, once: the one source of what the keys do (`commandFor`), of the help of `?`, and of
 * the key-help line, so the three cannot disagree. In the order the help lists them and the key-help line shows them.
 */
const BINDINGS: readonly Binding[] = [
  { keys: 'up/down, j/k', commands: ['up', 'down'], does: 'move the selection', on: LISTS, hint: ['j/k', 'move', 1] },
  { keys: 'PgUp/PgDn', commands: ['pageUp', 'pageDown'], does: 'move a page', on: LISTS },
  { keys: 'g/Home, G/End', commands: ['first', 'last'], does: 'go to the first / the last row', on: LISTS },
  { keys: 'enter', commands: ['open'], does: 'open the selected namespace', on: ['namespaces'], hint: ['enter', 'open', 8] },
  { keys: 'enter', commands: ['open'], does: 'open the selected base', on: ['bases'], hint: ['enter', 'open', 8] },
  { keys: 'n', commands: ['new'], does: 'new namespace (a form: key, then description)', on: ['namespaces'], hint: ['n', 'new', 7] },
  { keys: 'n', commands: ['new'], does: 'new base (a form: key, then description)', on: ['bases'], hint: ['n', 'new', 7] },
  { keys: 'e', commands: ['edit'], does: 'edit the description here, on one line', on: SCREENS, hint: ['e', 'edit', 7] },
  {
    keys: 'E',
    commands: ['editInEditor'],
    does: 'edit the description in $VISUAL / $EDITOR (unchanged or emptied: nothing is sent)',
    on: SCREENS,
    hint: ['E', '$EDITOR', 5],
  },
  { keys: 'd', commands: ['describe'], does: 'describe the namespace: its whole key and description (as y)', on: ['namespaces'], hint: ['d', 'describe', 3] },
  { keys: 'd', commands: ['describe'], does: 'describe the base: its namespace, whole key and description (as enter)', on: ['bases'], hint: ['d', 'describe', 3] },
  {
    keys: 'ctrl-d',
    commands: ['delete'],
    does: 'delete the namespace (asks first; one that holds bases asks again, with their count, and deletes them with it)',
    on: ['namespaces'],
    // Below the filter's: a namespace is deleted far less often than a base.
    hint: ['ctrl-d', 'delete', 4],
  },
  { keys: 'ctrl-d', commands: ['delete'], does: 'delete the base, or the bases marked (asks first: y confirms, any other key cancels)', on: ['bases', 'base'], hint: ['ctrl-d', 'delete', 6] },
  { keys: 'space', commands: ['mark'], does: 'mark the base (again: unmark), for ctrl-d to delete all those marked', on: ['bases'], hint: ['space', 'mark', 3] },
  { keys: '/', commands: ['filter'], does: 'filter by key or description, a regular expression ignoring case (! first inverts): type to narrow, enter keeps, esc clears', on: LISTS, hint: ['/', 'filter', 6] },
  { keys: 's', commands: ['sortByKey'], does: 'sort by key; again: the other way', on: LISTS, hint: ['s/S', 'sort', 4] },
  { keys: 'S', commands: ['sortByDescription'], does: 'sort by description; again: the other way', on: LISTS },
  { keys: 'c', commands: ['copy'], does: 'copy the key to the clipboard (OSC 52: works over ssh)', on: SCREENS, hint: ['c', 'copy', 4] },
  {
    keys: ':',
    commands: ['commandLine'],
    does: 'command line: :ns (namespaces), :ns KEY (open one), :ctx (pick a profile), :ctx NAME or :profile NAME (switch to it), :help, :q (quit)',
    on: SCREENS,
    hint: [':', 'command', 5],
  },
  { keys: 'y', commands: ['yaml'], does: 'the selected row as YAML, in a view that scrolls (esc closes it)', on: SCREENS, hint: ['y', 'yaml', 2] },
  { keys: 'r', commands: ['refresh'], does: 'refresh now (lists also refresh by themselves while idle)', on: SCREENS, hint: ['r', 'refresh', 2] },
  { keys: 'o', commands: ['openByKey'], does: 'open a base by key (when the deployment cannot list bases)', on: ['bases'], hint: ['o', 'open by key', 7] },
  { keys: 'esc', commands: ['back'], does: 'clear the filter, else go back', on: ['bases'], hint: ['esc', 'back', 8] },
  { keys: 'esc', commands: ['back'], does: 'clear the filter', on: ['namespaces'], hint: ['esc', 'clear filter', 8] },
  { keys: 'esc', commands: ['back'], does: 'back to the list', on: ['base'], hint: ['esc', 'back', 8] },
  { keys: '?', commands: ['help'], does: 'this help', on: SCREENS, hint: ['?', 'help', 9] },
  { keys: 'q, ctrl-c', commands: ['quit'], does: 'quit', on: SCREENS, hint: ['q', 'quit', 9] },
  { keys: 'up/down, j/k', commands: ['up', 'down'], does: 'scroll', on: ['help', 'yaml'], hint: ['j/k', 'scroll', 5] },
  { keys: 'PgUp/PgDn', commands: ['pageUp', 'pageDown'], does: 'scroll a page', on: ['help', 'yaml'] },
  { keys: 'g/Home, G/End', commands: ['first', 'last'], does: 'go to the top / the bottom', on: ['yaml'] },
  { keys: 'esc, y, ?, enter', commands: ['back', 'yaml', 'help', 'open'], does: 'close the YAML', on: ['yaml'], hint: ['esc', 'close', 9] },
  { keys: 'q, ctrl-c', commands: ['quit'], does: 'quit', on: ['yaml'], hint: ['q', 'quit', 9] },
  { keys: 'esc, ?, enter', commands: ['back', 'help', 'open'], does: 'close the help', on: ['help'], hint: ['esc/?', 'close help', 9] },
  { keys: 'q, ctrl-c', commands: ['quit'], does: 'quit', on: ['help'], hint: ['q', 'quit', 9] },
];

const COMMANDS = new Map<HelpTopic, ReadonlySet<Command>>(
  (['namespaces', 'bases', 'base', 'help', 'yaml'] as const).map((topic) => [
    topic,
    new Set(BINDINGS.filter((binding) => binding.on.includes(topic)).flatMap((binding) => binding.commands)),
  ]),
);

/** What the key does on the screen of `topic` (docs/contract.md, The TUI); undefined when it does nothing there. */
export function commandFor(input: string, key: Keypress, topic: HelpTopic): Command | undefined {
  const command = anyCommandFor(input, key);
  return command !== undefined && COMMANDS.get(topic)?.has(command) ? command : undefined;
}

/** The rank of a hint whose key the screen's words name ("n creates one"): kept before any other. */
export const NAMED_RANK = 10;

/**
 * The key-help line of a screen: its keys that have a hint, but for the commands it cannot give right now; those of
 * the commands `named` (what the screen tells the user to press) are the last a narrow terminal drops.
 */
export function hintsFor(topic: HelpTopic, unavailable: readonly Command[] = [], named: readonly Command[] = []): readonly Hint[] {
  return BINDINGS.filter(
    (binding): binding is Binding & { hint: Hint } =>
      binding.hint !== undefined && binding.on.includes(topic) && !binding.commands.every((command) => unavailable.includes(command)),
  ).map(({ hint, commands }) => (commands.some((command) => named.includes(command)) ? [hint[0], hint[1], NAMED_RANK] : hint));
}

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

export const FILTER_HINTS: readonly Hint[] = [
  ['type', 'filter', 6],
  ['enter', 'keep', 8],
  ['esc', 'clear', 9],
  ['up/down', 'move', 1],
];

export const CONFIRM_HINTS: readonly Hint[] = [
  ['y', 'delete', 9],
  ['any other key', 'cancel', 9],
];

export const PROMPT_HINTS: readonly Hint[] = [
  ['enter', 'run', 8],
  ['esc', 'cancel', 9],
];

/** The keys of the forms (n, e), the prompts (/, :) and the question of ctrl-d, which every screen's help ends with. */
const FIELD_KEYS: readonly Hint[] = [
  ['enter, tab', 'next field; enter on the last field submits (in a prompt: runs it)'],
  ['shift-tab', 'previous field'],
  ['left/right, Home/End', 'move in the field'],
  ['backspace, ctrl-u', 'delete a character, clear up to the cursor'],
  ['ctrl-k', 'clear from the cursor to the end'],
  ['up/down', 'while filtering (/): move the selection; on the command line (:): earlier lines, kept across runs'],
  ['tab', 'on the command line (:): complete a command, a namespace key after :ns, a profile after :ctx'],
  ['esc', 'cancel (in the filter: clear it)'],
  ['letters', 'text, never commands, while a field has the focus'],
  ['empty key', 'a generated key (ns_<uuid>, kb_<uuid>) is shown: enter accepts it; an empty description is none (in an edit: cleared)'],
  ['y, any other key', 'after ctrl-d: delete, or cancel'],
  ['ctrl-c', 'in a form holding typed text: asks first (y quits, any other key goes back)'],
  ['paste', 'text, never commands: a field takes it whole, a list runs nothing'],
];

const TITLES: Record<HelpTopic, string> = { namespaces: 'Namespaces', bases: 'Bases of a namespace', base: 'A base', help: 'This help', yaml: 'The YAML view' };

/** What --readonly takes away: the keys that create, edit or delete. */
export const WRITES: readonly Command[] = ['new', 'edit', 'editInEditor', 'delete', 'mark'];

/** What a write key says under --readonly, rather than doing nothing silently. */
export const READ_ONLY_STATUS = { tone: 'warning', text: 'Read-only (kb tui --readonly): nothing is created, edited or deleted.' } as const;

/** The help of `?` on one screen: its keys (with `readonly`, none that writes), then those of the forms and prompts it opens. */
export function helpSections(topic: HelpTopic, readonly = false): readonly { title: string; keys: readonly Hint[] }[] {
  const offered = (binding: Binding) => binding.on.includes(topic) && !(readonly && binding.commands.every((command) => WRITES.includes(command)));
  return [
    { title: TITLES[topic], keys: BINDINGS.filter(offered).map(({ keys, does }) => [keys, does] as const) },
    ...(topic === 'help' || topic === 'yaml' ? [] : [{ title: 'Forms (n, e), prompts (/, :) and questions (ctrl-d)', keys: FIELD_KEYS }]),
  ];
}
