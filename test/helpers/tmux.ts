import { execFile, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isolatedEnv, KB_BIN } from './cli.js';
import { tempDir } from './temp.js';

const run = promisify(execFile);

/** Whether tmux is installed: the tests that drive the built kb tui in a real terminal need it. */
export const TMUX = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
export const SKIPPED = TMUX ? '' : ' [skipped: tmux is not installed]';
const WAIT_MS = 20_000;

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

  /** The screen as text, lines wrapped by the terminal joined again. */
  async screen(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-J', '-t', 'tui')).stdout;
  }

  async waitFor(check: string | ((screen: string) => boolean), what = String(check)): Promise<string> {
    const test = typeof check === 'string' ? (s: string) => s.includes(check) : check;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const screen = await this.screen();
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

  async kill(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
