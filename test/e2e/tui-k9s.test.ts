import { beforeAll, describe, expect, it } from 'vitest';
import { runKb } from '../helpers/cli.js';
import { servedForTmux, SKIPPED, TMUX } from '../helpers/tmux.js';

/** The built kb tui in tmux against kb serve: what a k9s user tries first, and nothing created by accident. */
describe("kb tui in a real terminal (tmux): k9s's habits, nothing created by accident", () => {
  const served = servedForTmux([['ns', 'create', 'docs', '--description', 'Product docs'], ['base', 'create', 'docs', 'faq', '--description', 'Questions']]);
  // A second profile, `staging`, points at the same server.
  beforeAll(async () => {
    if (!TMUX) return;
    const login = await runKb(['auth', 'login', '--profile', 'staging', '--url', served.server?.url ?? '', '--with-token'], { env: served.env, input: `${served.token}\n` });
    expect(login.code, login.stderr).toBe(0);
  });

  it.skipIf(!TMUX)(`n, enter, enter shows a generated key and creates nothing; enter then creates it${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(120, 30, '--refresh', '0');
    await tui.waitFor((s) => /^> docs +Product docs/m.test(s));
    await tui.keys('n');
    await tui.waitFor('New namespace');
    await tui.keys('Enter', 'Enter');
    const screen = await tui.waitFor('was empty: enter accepts');
    const generated = /enter accepts (ns_[0-9a-f-]{36})/.exec(screen)?.[1] ?? '';
    expect(generated).not.toBe('');
    let listed = await runKb(['ns', 'list', '--json'], { env: served.env });
    expect(JSON.parse(listed.stdout).map((ns: { key: string }) => ns.key)).toEqual(['docs']);
    await tui.keys('Enter');
    await tui.waitFor(`Created namespace ${generated}.`);
    listed = await runKb(['ns', 'list', '--json'], { env: served.env });
    expect(JSON.parse(listed.stdout).map((ns: { key: string }) => ns.key)).toEqual(['docs', generated].sort());
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  }, 120_000);

  it.skipIf(!TMUX)(`d describes a base, ctrl-d asks before it deletes; :ctx picks a profile; a wrong name lists them all${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(120, 30, 'docs', '--refresh', '0');
    await tui.waitFor((s) => /^> faq +Questions/m.test(s));
    await tui.keys('d');
    await tui.waitFor((s) => /^description +Questions$/m.test(s));
    await tui.keys('Escape');
    await tui.waitFor((s) => /^> faq +Questions/m.test(s));
    await tui.keys('C-d');
    await tui.waitFor('Delete base faq in namespace docs, with all its data?');
    await tui.keys('n');
    await tui.waitFor('Cancelled: base faq was not deleted.');

    await tui.text(':ctx stag');
    await tui.keys('Enter');
    let screen = await tui.waitFor('no profile named stag');
    expect(screen).toMatch(/^>\*local {2}\(in use\)$/m);
    expect(screen).toMatch(/^ {2}staging$/m);
    expect(screen).not.toContain('--profile');
    await tui.keys('j', 'Enter');
    screen = await tui.waitFor((s) => /^kb {2}profile staging/.test(s) && /namespaces \(\d+\)/.test(s));
    await tui.text(':ctx');
    await tui.keys('Enter');
    screen = await tui.waitFor('profiles (2)');
    expect(screen).toMatch(/^>\*staging {2}\(in use\)$/m);
    await tui.keys('Escape');
    await tui.text(':ctx lo');
    await tui.keys('Tab');
    await tui.waitFor(':ctx local');
    await tui.keys('Enter');
    await tui.waitFor((s) => /^kb {2}profile local/.test(s));
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  }, 120_000);

  it.skipIf(!TMUX)(`ctrl-d deletes an empty namespace after y; one with bases after a second y that names their count${SKIPPED}`, async () => {
    // "aa-" and "ab-" sort before every other key: the first rows.
    for (const args of [['ns', 'create', 'aa-empty'], ['base', 'create', 'ab-team', 'roster', '--create-namespace'], ['base', 'create', 'ab-team', 'wiki']]) {
      const made = await runKb(args, { env: served.env });
      expect(made.code, made.stderr).toBe(0);
    }
    const tui = served.session();
    await tui.start(120, 30, '--refresh', '0');
    await tui.waitFor((s) => /^> aa-empty/m.test(s));
    await tui.press('C-d', 'Delete namespace aa-empty?');
    await tui.press('y', 'Deleted namespace aa-empty.');
    await tui.waitFor((s) => /^> ab-team/m.test(s));
    await tui.press('C-d', 'Delete namespace ab-team?');
    await tui.press('y', 'Namespace ab-team holds 2 bases: delete it and them, with all their data?');
    await tui.press('y', 'Deleted namespace ab-team and its 2 bases.');
    const listed = await runKb(['ns', 'list', '--json'], { env: served.env });
    const keys = JSON.parse(listed.stdout).map((ns: { key: string }) => ns.key);
    expect(keys).not.toContain('aa-empty');
    expect(keys).not.toContain('ab-team');
    expect(keys).toContain('docs');
    await tui.press('q', 'kb-exit=');
    expect(await tui.screen()).toContain('kb-exit=0');
  }, 120_000);

  it.skipIf(!TMUX)(`--readonly: read-only in the header, ctrl-d refused in words; a long key elided in the list, whole in d; :profile picks${SKIPPED}`, async () => {
    const made = await runKb(['ns', 'create', '--description', 'elided', '--json'], { env: served.env });
    expect(made.code, made.stderr).toBe(0);
    const key = (JSON.parse(made.stdout) as { key: string }).key;
    const shown = `${key.slice(0, 11)}…${key.slice(-4)}`;
    const tui = served.session();
    await tui.start(120, 30, '--readonly', '--refresh', '0');
    let screen = await tui.waitFor((s) => /^> docs +Product docs/m.test(s));
    expect(screen.split('\n')[0]).toMatch(/^kb {2}read-only {2}profile local/);
    expect(screen).toMatch(new RegExp(`^  ${shown} +elided$`, 'm'));
    expect(screen).not.toContain(key);
    await tui.press('C-d', 'Note: Read-only (kb tui --readonly): nothing is created, edited or deleted.');
    await tui.press('/', (s) => /^\/ *$/m.test(s) || s.includes('enter keeps the filter'));
    await tui.type('elided', (s) => /(^|[^0-9])1 match /m.test(s));
    await tui.press('Enter', (s) => new RegExp(`^> ${shown} +elided$`, 'm').test(s) && s.includes('filter "elided"'));
    screen = await tui.press('d', `key: "${key}"`);
    expect(screen).toContain(`namespace ${key}`);
    await tui.press('Escape', (s) => new RegExp(`^> ${shown} +elided$`, 'm').test(s));
    await tui.type(':profile', ':profile');
    screen = await tui.press('Enter', 'profiles (2)');
    expect(screen).toMatch(/^>\*local {2}\(in use\)$/m);
    expect(screen).toMatch(/^ {2}staging$/m);
    await tui.press('Escape', (s) => s.includes('filter "elided"') && !s.includes('profiles (2)'));
    await tui.press('q', 'kb-exit=');
    expect(await tui.screen()).toContain('kb-exit=0');
  }, 120_000);
});
