import { describe, expect, it } from 'vitest';
import { runKb } from '../helpers/cli.js';
import { servedForTmux, SKIPPED, TMUX } from '../helpers/tmux.js';
import { withoutWatch } from '../helpers/watch.js';

/**
 * The built kb tui in tmux, told of changes by GET /v1/watch (docs/tui.md): with --refresh 0 no timer refreshes the
 * list, so only the stream can show what another process changed, and no key is pressed for it.
 */
describe('kb tui in a real terminal (tmux): lists kept live by the stream', () => {
  const served = servedForTmux([['ns', 'create', 'docs'], ['ns', 'create', 'zeta']]);

  async function kbOk(args: string[]): Promise<void> {
    const result = await runKb(args, { env: served.env });
    expect(result.code, result.stderr).toBe(0);
  }

  it.skipIf(!TMUX)(`a namespace created by another process appears with no key pressed, the selection and the filter kept; the header says live${SKIPPED}`, async () => {
    const tui = served.session();
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

  it.skipIf(!TMUX)(`a namespace's bases: one created, changed and deleted by another process shows so with no key pressed${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(100, 30, '--refresh', '0', 'zeta');
    await tui.waitFor((s) => /live$/m.test(s.split('\n')[0] ?? '') && s.includes('No bases in this namespace yet'));
    await kbOk(['base', 'create', 'zeta', 'faq', '--description', 'first words']);
    await tui.waitFor((s) => /^[> ] faq +first words/m.test(s));
    await kbOk(['base', 'update', 'zeta/faq', '--description', 'second words']);
    await tui.waitFor((s) => /^[> ] faq +second words/m.test(s));
    await kbOk(['base', 'delete', 'zeta/faq', '--yes']);
    const emptied = await tui.waitFor('No bases in this namespace yet');
    expect(emptied).not.toMatch(/faq/);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  }, 120_000);

  it.skipIf(!TMUX)(`against a deployment without GET /v1/watch the header gives the refresh period${SKIPPED}`, async () => {
    const old = await withoutWatch(served.server?.url ?? '');
    try {
      const tui = served.session({ ...served.env, KB_URL: old.url, KB_TOKEN: served.token });
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
