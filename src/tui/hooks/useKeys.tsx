import { type Key, useApp, useInput, useStdin } from 'ink';
import { createContext, type ReactNode, type RefObject, useCallback, useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Keypress } from '../keymap.js';
import { createSequenceFilter } from '../sequences.js';
import { PASTE_END, PASTE_START } from '../terminal.js';

/** Any handler of keys: a paste comes as one key, its text in `input` and `key.paste` set. */
export type KeyHandler = (input: string, key: Keypress) => void;

/** A key with no flag set: what Ink reports for plain text. */
const PLAIN: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false,
  end: false, return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false,
  meta: false, super: false, hyper: false, capsLock: false, numLock: false,
};

const ESC = '\u001B';

/** What a control character means as a key of its own, as Ink reports it read alone. */
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
 * The keys of text read at once without an escape (Ink hands over what came between two escape sequences as one
 * input): each character is a key, as if typed alone. `tmux send-keys -l jjj`, a held-down key over ssh and a fast
 * typist on a busy machine all send keys this way; only a bracketed paste is text (see createKeyReader).
 */
export function splitKeys(text: string): [string, Key][] {
  return Array.from(text.replace(/\r\n/g, '\r'), (char): [string, Key] =>
    /^\p{Cc}$/u.test(char) ? controlKey(char) : [char, { ...PLAIN, shift: /^[A-Z]$/.test(char) }],
  );
}

/**
 * Turns what Ink reads (`raw`, one input as its parser cut it: an escape sequence, or text between two) and what
 * Ink made of it (`input`, `key`) into keys. Text between PASTE_START and PASTE_END, which may come over several
 * reads, is one key with `paste` set: never commands, and a text field takes it whole. Sequences that are no key
 * (an unknown CSI, a control string) are left out (createSequenceFilter).
 */
export function createKeyReader(): (raw: string, input: string, key: Key) => [string, Keypress][] {
  let pasted: string[] | undefined;
  const unread = createSequenceFilter();
  return (raw, input, key) => {
    if (raw === PASTE_START) {
      pasted = [];
      return [];
    }
    if (pasted !== undefined) {
      if (raw !== PASTE_END) {
        // An escape sequence inside a paste is not text: it is dropped, as a text field drops control characters.
        if (!raw.startsWith(ESC)) pasted.push(raw);
        return [];
      }
      const text = pasted.join('').replace(/\r\n?/g, '\n');
      pasted = undefined;
      return text === '' ? [] : [[text, { ...PLAIN, paste: true }]];
    }
    if (raw === PASTE_END) return [];
    const rest = unread(raw, input, key);
    if (rest === undefined) return [];
    if (rest !== raw) return splitKeys(rest);
    // An escape sequence (an arrow, shift-tab, PgUp, a lone esc) is one key, as Ink read it.
    if (raw.startsWith(ESC) || Array.from(raw).length <= 1) return [[input, key]];
    return splitKeys(raw);
  };
}

/** Keys typed ahead while a request runs are kept, up to this many. */
const MAX_QUEUED_KEYS = 256;

/**
 * Keys handed on in a row within one turn of the event loop, at most. Each key waits for the render of the one before,
 * so a burst of keys is handed on from React's commits, one commit each, and React stops an app whose commits set
 * state more than 50 times in a row (its error #185, "Maximum update depth exceeded"): 80 arrow keys in one write
 * ended kb tui (test/e2e/tui-fuzz.test.ts met it). Past this many, the rest wait for the next turn.
 */
const KEYS_PER_TURN = 25;

/** What ctrl-c asks of the component holding the focus before quitting: true when it takes the key (to ask first). */
export type InterruptGuard = () => boolean;

interface Router {
  target: RefObject<KeyHandler | undefined>;
  interrupt: RefObject<InterruptGuard | undefined>;
  /** Changes after every key, so every component that takes keys renders (and claims) before the next one. */
  tick: number;
  /** Hands waiting keys to the component holding the focus, if no render is due first. */
  drain(): void;
}

const KeyRouterContext = createContext<Router | undefined>(undefined);

function isCtrlC([input, key]: [string, Keypress]): boolean {
  return key.ctrl && input === 'c' && key.paste !== true;
}

/**
 * The one subscription to the keyboard, and the order of things: a key goes to the component that holds the focus
 * as of the latest render, and the next key waits for the render that follows. Ink renders a state change in a
 * later task, not at once, so without this a quick second key (a fast typist, key repeat, tmux send-keys) would
 * reach a handler of the render before: one that sees an old state (and loses the first key's text), or one that
 * has just passed the focus on (a list that has just opened a form).
 *
 * Ctrl-C quits, in its turn after the keys before it, unless the component holding the focus asks first (a form
 * holding typed text); while nobody holds the focus (a request runs), it quits at once.
 */
export function KeyRouter({ children }: { children: ReactNode }) {
  const { exit } = useApp();
  const { internal_eventEmitter: events } = useStdin();
  const target = useRef<KeyHandler | undefined>(undefined);
  const interrupt = useRef<InterruptGuard | undefined>(undefined);
  const queue = useRef<[string, Keypress][]>([]);
  const awaitingRender = useRef(false);
  const raw = useRef<string | undefined>(undefined);
  const read = useRef(createKeyReader());
  const [tick, setTick] = useState(0);
  const handedOn = useRef(0);
  const nextTurn = useRef<NodeJS.Immediate | undefined>(undefined);

  const drain = useCallback(() => {
    while (!awaitingRender.current && queue.current.length > 0) {
      if (handedOn.current >= KEYS_PER_TURN) {
        nextTurn.current ??= setImmediate(() => {
          nextTurn.current = undefined;
          handedOn.current = 0;
          drain();
        });
        return;
      }
      handedOn.current++;
      const handler = target.current;
      const next = queue.current[0] as [string, Keypress];
      if (isCtrlC(next)) {
        queue.current.shift();
        const guard = handler === undefined ? undefined : interrupt.current;
        if (guard === undefined || !guard()) return exit();
        awaitingRender.current = true;
        target.current = undefined;
        interrupt.current = undefined;
        setTick((n) => n + 1);
        continue;
      }
      // Nobody holds the focus (a delete is running): the keys wait for whoever takes it next.
      if (handler === undefined) return;
      queue.current.shift();
      awaitingRender.current = true;
      // The render after this key says who holds the focus next.
      target.current = undefined;
      interrupt.current = undefined;
      setTick((n) => n + 1);
      handler(next[0], next[1]);
    }
  }, [exit]);

  // Ink's parser cut the input; this listener, added before useInput's, sees each piece as it came.
  useEffect(() => {
    const onRaw = (data: string) => {
      raw.current = data;
    };
    events.on('input', onRaw);
    return () => {
      events.off('input', onRaw);
    };
  }, [events]);

  const onInput = useCallback(
    (input: string, key: Key) => {
      const data = raw.current ?? input;
      raw.current = undefined;
      // A new turn of the event loop: no commit of React's comes before this one.
      handedOn.current = 0;
      for (const each of read.current(data, input, key)) {
        if (isCtrlC(each) && target.current === undefined && !awaitingRender.current) return exit();
        if (queue.current.length < MAX_QUEUED_KEYS || isCtrlC(each)) queue.current.push(each);
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

  const router = useMemo(() => ({ target, interrupt, tick, drain }), [tick, drain]);
  return <KeyRouterContext.Provider value={router}>{children}</KeyRouterContext.Provider>;
}

/**
 * Gives `handler` the keys while `active`. Exactly one component on screen is active at a time (a list, a form, a
 * confirmation, the help); it claims the keys each time it renders, which it does after every key. `onInterrupt`
 * is asked first when ctrl-c comes (see KeyRouter).
 */
export function useKeys(handler: KeyHandler, active: boolean, onInterrupt?: InterruptGuard): void {
  const router = useContext(KeyRouterContext);
  if (router === undefined) throw new Error('useKeys outside <KeyRouter>');
  if (active) {
    router.target.current = handler;
    router.interrupt.current = onInterrupt;
  }
  // Keys typed while nobody held the focus (a delete was running) go to whoever takes it, without waiting for another key.
  useLayoutEffect(() => {
    if (active) router.drain();
  });
}
