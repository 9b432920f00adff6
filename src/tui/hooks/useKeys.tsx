import { type Key, useApp, useInput } from 'ink';
import { createContext, type ReactNode, type RefObject, useCallback, useContext, useLayoutEffect, useMemo, useRef, useState } from 'react';

export type KeyHandler = (input: string, key: Key) => void;

/** A key with no flag set: what Ink reports for plain text. */
const PLAIN: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false,
  end: false, return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false,
  meta: false, super: false, hyper: false, capsLock: false, numLock: false,
};

/** What a control character means as a key of its own. */
function controlKey(char: string): [string, Key] {
  if (char === '\r' || char === '\n') return ['\r', { ...PLAIN, return: true }];
  if (char === '\t') return ['', { ...PLAIN, tab: true }];
  if (char === '\u007F') return ['', { ...PLAIN, delete: true }];
  if (char === '\b') return ['', { ...PLAIN, backspace: true }];
  const code = char.charCodeAt(0);
  if (code >= 1 && code <= 26) return [String.fromCharCode(code + 96), { ...PLAIN, ctrl: true }];
  return ['', PLAIN];
}

/**
 * The keys in what Ink reports as one input. Ink splits escape sequences (arrows, shift-tab) but hands over
 * everything else read at once as one string, as for a paste: keys typed quickly (tmux send-keys, a fast typist
 * on a slow machine) can arrive as "faq\tFrequently asked", whose tab must still move to the next field.
 */
export function splitKeys(input: string, key: Key): [string, Key][] {
  if (input.length <= 1) return [[input, key]];
  if (!/\p{Cc}/u.test(input)) return OPENS_PROMPT.test(input) && !key.ctrl && !key.meta ? text(input) : [[input, key]];
  const keys: [string, Key][] = [];
  for (const part of input.replace(/\r\n/g, '\r').split(/(\p{Cc})/u)) {
    if (part === '') continue;
    keys.push(...(/^\p{Cc}$/u.test(part) ? [controlKey(part)] : text(part)));
  }
  return keys;
}

/**
 * Text read at once that begins with `:` or `/` (`:q`, `:ns docs`, `/faq` typed quickly, over ssh say) is that key, then
 * the rest: on a list the key opens its command line or filter, which takes the rest as typed; in a text field the
 * text is the same either way. Any other text stays one key, so a paste on a list is never read as commands.
 */
const OPENS_PROMPT = /^[:/]./su;

function text(part: string): [string, Key][] {
  const [first, rest] = OPENS_PROMPT.test(part) ? [part.slice(0, 1), part.slice(1)] : [part, ''];
  const keys: [string, Key][] = [[first, { ...PLAIN, shift: /^[A-Z]$/.test(first) }]];
  if (rest !== '') keys.push([rest, { ...PLAIN, shift: /^[A-Z]$/.test(rest) }]);
  return keys;
}

/** Keys typed ahead while a request runs are kept, up to this many. */
const MAX_QUEUED_KEYS = 256;

interface Router {
  target: RefObject<KeyHandler | undefined>;
  /** Changes after every key, so every component that takes keys renders (and claims) before the next one. */
  tick: number;
  /** Hands waiting keys to the component holding the focus, if no render is due first. */
  drain(): void;
}

const KeyRouterContext = createContext<Router | undefined>(undefined);

/**
 * The one subscription to the keyboard, and the order of things: a key goes to the component that holds the focus
 * as of the latest render, and the next key waits for the render that follows. Ink renders a state change in a
 * later task, not at once, so without this a quick second key (a fast typist, key repeat, tmux send-keys) would
 * reach a handler of the render before: one that sees an old state (and loses the first key's text), or one that
 * has just passed the focus on (a list that has just opened a form).
 */
export function KeyRouter({ children }: { children: ReactNode }) {
  const { exit } = useApp();
  const target = useRef<KeyHandler | undefined>(undefined);
  const queue = useRef<[string, Key][]>([]);
  const awaitingRender = useRef(false);
  const [tick, setTick] = useState(0);

  const drain = useCallback(() => {
    while (!awaitingRender.current && queue.current.length > 0) {
      const handler = target.current;
      // Nobody holds the focus (a delete is running): the keys wait for whoever takes it next.
      if (handler === undefined) return;
      const [input, key] = queue.current.shift() as [string, Key];
      awaitingRender.current = true;
      // The render after this key says who holds the focus next.
      target.current = undefined;
      setTick((n) => n + 1);
      handler(input, key);
    }
  }, []);

  const onInput = useCallback(
    (input: string, key: Key) => {
      for (const each of splitKeys(input, key)) {
        // Ink quits on a ctrl-c read alone; one read with other keys is split here, so it quits here.
        if (each[1].ctrl && each[0] === 'c') return exit();
        if (queue.current.length < MAX_QUEUED_KEYS) queue.current.push(each);
      }
      drain();
    },
    [drain, exit],
  );
  useInput(onInput);

  useLayoutEffect(() => {
    awaitingRender.current = false;
    drain();
  }, [tick, drain]);

  const router = useMemo(() => ({ target, tick, drain }), [tick, drain]);
  return <KeyRouterContext.Provider value={router}>{children}</KeyRouterContext.Provider>;
}

/**
 * Gives `handler` the keys while `active`. Exactly one component on screen is active at a time (a list, a form, a
 * confirmation, the help); it claims the keys each time it renders, which it does after every key.
 */
export function useKeys(handler: KeyHandler, active: boolean): void {
  const router = useContext(KeyRouterContext);
  if (router === undefined) throw new Error('useKeys outside <KeyRouter>');
  if (active) router.target.current = handler;
  // Keys typed while nobody held the focus (a delete was running) go to whoever takes it, without waiting for another key.
  useLayoutEffect(() => {
    if (active) router.drain();
  });
}
