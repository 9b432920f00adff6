import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKb, startServe, type ServeProcess } from '../helpers/cli.js';
import { SKIPPED, terminalEnv, TMUX, TmuxSession } from '../helpers/tmux.js';
import { withoutWatch } from '../helpers/watch.js';

/**
 * The built kb tui in tmux, told of changes by GET /v1/watch (docs/tui.md): with --refresh 0 no timer refreshes the
 * list, so only the stream can show what another process changed, and no key is pressed for it.
 */
describe('kb tui in a real terminal (tmux): lists kept live by the stream', () => {
  let serve: ServeProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let token = '';
  const sessions: TmuxSession[] = [];

  beforeAll(async () => {
    if (!TMUX) return;
    env = terminalEnv();
    // Saves the profile `local`, which the TUI and the other process use.
    serve = await startServe([], env);
    token = /shown only this once:\s+(\S+)/.exec(serve.stdout())?.[1] ?? '';
    expect(token).not.toBe('');
    for (const args of [['ns', 'create', 'docs'], ['ns', 'create', 'zeta']]) {
      const created = await runKb(args, { env });
      expect(created.code, created.stderr).toBe(0);
    }
  });

  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.kill()));
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  function session(sessionEnv = env): TmuxSession {
    const created = new TmuxSession(sessionEnv);
    sessions.push(created);
    return created;
  }

  async function kbOk(args: string[]): Promise<void> {
    const result = await runKb(args, { env });
    expect(result.code, result.stderr).toBe(0);
  }

  it.skipIf(!TMUX)(`a namespace created by another process appears with no key pressed, the selection and the filter kept; the header says live${SKIPPED}`, async () => {
    const tui = session();
    await tui.start(100, 30, '--refresh', '0');
    const first = await tui.waitFor((s) => /^kb .* live$/m.test(s) && /^> docs/m.test(s));
    expect(first.split('\n')[0]).toMatch(/org local {2}live$/);
    await tui.keys('j');
    await tui.waitFor((s) => /^> zeta/m.test(s));
    await kbOk(['ns', 'create', 'alpha']);
    // No key since the j: only the stream can draw alpha, and the selection stays on zeta.
    const updated = await tui.waitFor((s) => /^ {2}alpha/m.test(s));
    expect(updated).toMatch(/^> zeta/m);
    await tui.keys('/');
    await tui.waitFor('esc clears it');
    await tui.text('e');
    await tui.waitFor((s) => /^\/e *$/m.test(s));
    await tui.keys('Enter');
    await tui.waitFor('filter "e"');
    await kbOk(['ns', 'create', 'beta']);
    await kbOk(['ns', 'create', 'gamma']);
    // gamma has no e: the filter keeps it out, and beta, which has one, comes in.
    const filtered = await tui.waitFor((s) => /^ {2}beta/m.test(s));
    expect(filtered).toContain('filter "e"');
    expect(filtered).not.toMatch(/^ {2}(gamma|alpha|docs)/m);
    expect(filtered).toMatch(/^> zeta/m);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  }, 120_000);

  it.skipIf(!TMUX)(`against a deployment without GET /v1/watch the header gives the refresh period${SKIPPED}`, async () => {
    const old = await withoutWatch(serve?.url ?? '');
    try {
      const tui = session({ ...env, KB_URL: old.url, KB_TOKEN: token });
      await tui.start(100, 30, '--refresh', '3');
      const screen = await tui.waitFor((s) => /^[> ] docs/m.test(s));
      expect(screen.split('\n')[0]).toMatch(/ {2}every 3s$/);
      await tui.keys('q');
      expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
    } finally {
      old.server.closeAllConnections();
      old.server.close();
    }
  }, 120_000);
});
