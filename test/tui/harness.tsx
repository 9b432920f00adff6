import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { KbClient } from '../../src/client/client.js';
import { hashToken } from '../../src/server/tokens.js';
import { App } from '../../src/tui/app.js';
import type { Terminal } from '../../src/tui/terminal.js';
import type { TuiClient, TuiDeployment } from '../../src/tui/types.js';
import type { TestServer } from '../helpers/server.js';

/** What a terminal sends for each key. */
export const KEY = {
  enter: '\r',
  escape: '\u001B',
  tab: '\t',
  shiftTab: '\u001B[Z',
  up: '\u001B[A',
  down: '\u001B[B',
  home: '\u001B[H',
  end: '\u001B[F',
  pageUp: '\u001B[5~',
  pageDown: '\u001B[6~',
  backspace: '\u007F',
  ctrlU: '\u0015',
  ctrlD: '\u0004',
} as const;

/** What a terminal in bracketed-paste mode sends for pasted text. */
export function pasted(text: string): string {
  return `\u001B[200~${text}\u001B[201~`;
}

export interface Screen {
  terminal: RecordingTerminal;
  /** The last frame, without escape codes. */
  frame(): string;
  lines(): string[];
  /** Sends keys one at a time, as a person types them; each returns once the app has drawn the frame after it. */
  press(...keys: string[]): Promise<void>;
  /** Types text one character at a time. */
  type(text: string): Promise<void>;
  /** Sends keys all at once, each its own write, without waiting for the app to draw in between. */
  burst(...keys: string[]): void;
  /** Waits until the frame passes the check (a string it contains, a pattern, or a predicate); returns that frame. */
  waitFor(check: string | RegExp | ((frame: string) => boolean), what?: string): Promise<string>;
  /** Changes the size of the fake terminal and tells the app, as a SIGWINCH would. */
  resize(columns: number, rows: number): void;
  unmount(): void;
}

export interface AppOptions {
  client: TuiClient;
  deployment?: TuiDeployment;
  organization?: string;
  color?: boolean;
  columns?: number;
  rows?: number;
  /** Seconds between refreshes of an idle list: 0 (off) unless told, so a test sees only the loads it makes. */
  refreshSeconds?: number;
  /**
   * The lists kept live by GET /v1/watch: off unless told (the client's `stream` hidden, as a client that cannot
   * stream), for the same reason. test/e2e/tui-live.test.ts drives the live lists in a real terminal.
   */
  live?: boolean;
  /** The editor of `E` (run through the shell, as kb tui runs it). */
  editor?: string;
  namespace?: string;
  readonly?: boolean;
  connect?: (profile: string) => Promise<{ client: TuiClient; deployment: TuiDeployment }>;
  profiles?: () => Promise<readonly string[]>;
  historyFile?: string;
}

/**
 * The terminal of the app under test: the clipboard records what was copied, and the editor runs for real (the
 * harness's fake screen has nothing to leave or restore, so suspending only counts).
 */
export class RecordingTerminal implements Terminal {
  readonly copied: string[] = [];
  suspended = 0;
  constructor(readonly editor: string) {}
  copy(text: string): void {
    this.copied.push(text);
  }
  suspend<T>(run: () => T): T {
    this.suspended++;
    return run();
  }
}

export const WAIT_MS = 10_000;

/** The client without `stream`: the app then refreshes its lists on its timer alone, as against a deployment without watch. */
function withoutStream(client: TuiClient): TuiClient {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'stream') return undefined;
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the client itself: its private fields are not the proxy's.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The app in ink-testing-library's fake terminal, which is 100 columns wide and does not say its height; the
 * harness gives it a fixed height (24 rows unless told), since the lists render only the rows that fit.
 */
export function renderApp(options: AppOptions): Screen {
  const size = { columns: options.columns ?? 100, rows: options.rows ?? 24 };
  const deployment = options.deployment ?? { profile: 'test', url: 'http://127.0.0.1:9' };
  const terminal = new RecordingTerminal(options.editor ?? 'false');
  const app = render(
    <App
      client={options.live === true ? options.client : withoutStream(options.client)}
      deployment={deployment}
      terminal={terminal}
      refreshSeconds={options.refreshSeconds ?? 0}
      organization={options.organization}
      color={options.color ?? false}
      namespace={options.namespace}
      readonly={options.readonly}
      connect={options.connect && (options.live === true ? options.connect : async (profile) => {
        const next = await (options.connect as NonNullable<AppOptions['connect']>)(profile);
        return { ...next, client: withoutStream(next.client) };
      })}
      profiles={options.profiles}
      historyFile={options.historyFile}
    />,
  );
  Object.defineProperty(app.stdout, 'columns', { configurable: true, get: () => size.columns });
  Object.defineProperty(app.stdout, 'rows', { configurable: true, get: () => size.rows });
  app.stdout.emit('resize');

  const frame = () => stripVTControlCharacters(app.lastFrame() ?? '');
  const screen: Screen = {
    terminal,
    frame,
    lines: () => frame().split('\n'),
    async press(...keys) {
      for (const key of keys) {
        // Every key is followed by a render (the app's key router sees to it), and every render by a frame.
        let before = app.frames.length;
        app.stdin.write(key);
        if (key === KEY.escape) {
          // Ink holds a lone ESC until its next turn (it may start a sequence), and only then hands it over.
          await new Promise((resolve) => setImmediate(resolve));
          before = app.frames.length;
        }
        const deadline = Date.now() + WAIT_MS;
        while (app.frames.length === before) {
          if (Date.now() > deadline) throw new Error(`no frame after the key ${JSON.stringify(key)}; the last frame:\n${frame()}`);
          await sleep(1);
        }
      }
    },
    burst(...keys) {
      for (const key of keys) app.stdin.write(key);
    },
    async type(text) {
      for (const char of text) await screen.press(char);
    },
    async waitFor(check, what) {
      const test = typeof check === 'string' ? (f: string) => f.includes(check) : check instanceof RegExp ? (f: string) => check.test(f) : check;
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const current = frame();
        if (test(current)) return current;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what ?? String(check)}; the last frame:\n${current}`);
        await sleep(10);
      }
    },
    resize(columns, rows) {
      size.columns = columns;
      size.rows = rows;
      app.stdout.emit('resize');
    },
    unmount: () => app.unmount(),
  };
  return screen;
}

/** A real client for a fresh organization of its own on the test server, so tests never see each other's data. */
export async function orgClient(server: TestServer, org: string): Promise<{ client: KbClient; token: string; orgId: number }> {
  const token = await server.newToken(org);
  const principal = await server.store.authenticate(hashToken(token));
  if (principal === null) throw new Error('the new token does not authenticate');
  return { client: new KbClient({ url: server.url, token, retries: 0 }), token, orgId: principal.orgId };
}

/** A fake terminal for runTui: TTY streams that record what is written and accept keys. */
export class FakeTerminal {
  readonly stdout = Object.assign(new EventEmitter(), {
    isTTY: true,
    columns: 100,
    rows: 24,
    written: '',
    write(chunk: string) {
      this.written += chunk;
      return true;
    },
  });
  readonly stdin = Object.assign(new EventEmitter(), {
    isTTY: true,
    /** Whether the app has put the terminal in raw mode, which it does once it listens for keys. */
    raw: false,
    pending: [] as string[],
    setEncoding() {},
    setRawMode(this: { raw: boolean }, raw: boolean) {
      this.raw = raw;
    },
    resume() {},
    pause() {},
    ref() {},
    unref() {},
    read(this: { pending: string[] }) {
      return this.pending.shift() ?? null;
    },
  });

  press(key: string): void {
    this.stdin.pending.push(key);
    this.stdin.emit('readable');
  }

  streams(): { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } {
    return {
      stdin: this.stdin as unknown as NodeJS.ReadStream,
      stdout: this.stdout as unknown as NodeJS.WriteStream,
      stderr: this.stdout as unknown as NodeJS.WriteStream,
    };
  }
}
