// Built into dist/vendor/warm-tui.js (scripts/build.mjs) for scripts/vendor-cache-writer.mjs: draws kb's terminal UI
// on a stand-in terminal, with one screen of namespaces, moves down and up, and quits, so that the vendor code cache
// holds the parts of React that `kb tui` runs to draw its first screen. The client is never called.
import { EventEmitter } from 'node:events';
import { loadTui } from '../src/tui/load.ts';

function standInTerminal() {
  const stdout = Object.assign(new EventEmitter(), { isTTY: true, columns: 120, rows: 40, write: () => true });
  const pending = [];
  const stdin = Object.assign(new EventEmitter(), {
    isTTY: true,
    setEncoding() {},
    setRawMode(raw) {
      // Once the app listens for keys: down, up, quit.
      if (raw) setImmediate(() => ['j', 'k', 'q'].forEach((key) => stdin.press(key)));
    },
    resume() {},
    pause() {},
    ref() {},
    unref() {},
    read: () => pending.shift() ?? null,
    press(key) {
      pending.push(key);
      stdin.emit('readable');
    },
  });
  return { stdin, stdout };
}

export async function warmTui() {
  const { runTui } = await loadTui();
  const { stdin, stdout } = standInTerminal();
  const namespaces = Array.from({ length: 100 }, (_, i) => ({ key: `namespace-${i}`, description: i % 3 === 0 ? null : `Namespace ${i}` }));
  await runTui({
    client: {},
    deployment: { profile: 'local', url: 'http://127.0.0.1:8080' },
    organization: 'local',
    namespaces: Promise.resolve(namespaces),
    color: true,
    refreshSeconds: 0,
    editor: 'vi',
    stdin,
    stdout,
    stderr: stdout,
  });
}
