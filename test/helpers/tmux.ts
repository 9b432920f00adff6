import { execFile, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { isolatedEnv, KB_BIN, runKb, type ServeProcess, startServe } from './cli.js';
import { tempDir } from './temp.js';

const run = promisify(execFile);

/** Whether tmux is installed: the tests that drive the built kb tui in a real terminal need it. */
export const TMUX = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
export const SKIPPED = TMUX ? '' : ' [skipped: tmux is not installed]';
/** How long a wait for a frame lasts before it fails, showing the screen. */
export const WAIT_MS = 20_000;

/** The environment of an interactive shell: not CI (kb tui refuses CI), not inside another tmux. */
export function terminalEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return isolatedEnv({ CI: undefined, CONTINUOUS_INTEGRATION: undefined, TMUX: undefined, TMUX_PANE: undefined, FORCE_COLOR: undefined, ...extra });
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * `kb tui` (the built bin) in a detached tmux session of its own (its own server, on a socket in a temp dir), then
 * its exit code on screen ("kb-exit=N"). As test/e2e/tui-tmux.test.ts drives it.
 */
export class TmuxSession {
  readonly dir = tempDir('kb-tmux-');

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  tmux(...args: string[]): Promise<{ stdout: string }> {
    return run('tmux', ['-S', join(this.dir, 'socket'), '-f', '/dev/null', ...args], { env: this.env });
  }

  async start(columns: number, rows: number, ...flags: string[]): Promise<void> {
    const command = `${quote(process.execPath)} ${quote(KB_BIN)} tui ${flags.map(quote).join(' ')}; echo "kb-exit=$?"; sleep 120`;
    await this.tmux('new-session', '-d', '-s', 'tui', '-x', String(columns), '-y', String(rows), command);
  }

  /** The screen as text, lines wrapped by the terminal joined again; with `escapes`, with its colors too. */
  async screen(escapes = false): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-J', ...(escapes ? ['-e'] : []), '-t', 'tui')).stdout;
  }

  async waitFor(check: string | ((screen: string) => boolean), what = String(check), escapes = false): Promise<string> {
    const test = typeof check === 'string' ? (s: string) => s.includes(check) : check;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const screen = await this.screen(escapes);
      if (test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${screen}`);
      await sleep(50);
    }
  }

  /** Keys by tmux's names ("Enter", "Escape", "C-d") or as text. */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', 'tui', ...keys);
  }

  /** Text, sent as it is (no key names). */
  async text(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', 'tui', '-l', text);
  }

  /** Bytes, exactly, in one write to the terminal (`send-keys -H`). */
  async bytes(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return;
    await this.tmux('send-keys', '-t', 'tui', '-H', ...Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')));
  }

  /**
   * One key (a tmux key name), then a frame only it can make: a key sent before the last one's frame was drawn may be
   * read with it in one chunk (ESC and "/" are then one alt key), and a check met by an older frame proves nothing.
   */
  async press(key: string, frame: string | ((screen: string) => boolean)): Promise<string> {
    await this.keys(key);
    return this.waitFor(frame);
  }

  /** Text typed in one write (send-keys -l), then a frame only it can make. */
  async type(text: string, frame: string | ((screen: string) => boolean)): Promise<string> {
    await this.text(text);
    return this.waitFor(frame);
  }

  async kill(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The kb serve of a file of tmux tests, and the sessions its tests open (servedForTmux). */
export interface TmuxServed {
  /** The terminal environment, whose config dir holds the profile `local` of the server. */
  env: NodeJS.ProcessEnv;
  server: ServeProcess | undefined;
  /** The first token, which the server's first start printed. */
  token: string;
  /** A session of kb tui (in `env` unless told), killed after the file's tests. */
  session(env?: NodeJS.ProcessEnv): TmuxSession;
}

/**
 * The built kb serve for a file of tmux tests, in a terminal environment of its own (`extra` on top): started before
 * them, its first start saving the profile `local` and printing the token, then each command of `seed` run through kb;
 * stopped after them, with every session opened. Without tmux nothing starts (the tests skip).
 */
export function servedForTmux(seed: readonly (readonly string[])[], extra: Record<string, string | undefined> = {}): TmuxServed {
  const sessions: TmuxSession[] = [];
  const served: TmuxServed = {
    env: {},
    server: undefined,
    token: '',
    session(env = served.env) {
      const created = new TmuxSession(env);
      sessions.push(created);
      return created;
    },
  };
  beforeAll(async () => {
    if (!TMUX) return;
    served.env = terminalEnv(extra);
    served.server = await startServe([], served.env);
    served.token = /shown only this once:\s+(\S+)/.exec(served.server.stdout())?.[1] ?? '';
    // A hook's failure fails the file's tests, as an assertion would (a helper takes no global expect).
    if (served.token === '') throw new Error(`kb serve printed no first token:\n${served.server.stdout()}`);
    for (const args of seed) {
      const created = await runKb([...args], { env: served.env });
      if (created.code !== 0) throw new Error(`kb ${args.join(' ')} exited ${created.code}: ${created.stderr}`);
    }
  });
  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.kill()));
    if (served.server) {
      served.server.child.kill('SIGTERM');
      await served.server.exited;
    }
  });
  return served;
}
