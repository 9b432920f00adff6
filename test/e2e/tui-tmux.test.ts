import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runKb } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { servedForTmux, SKIPPED, terminalEnv, TMUX, type TmuxSession, WAIT_MS } from '../helpers/tmux.js';
import { startProxy } from '../tui/proxy.js';

const ESC = '\u001B';

/**
 * A test here takes a step per key, each waiting up to WAIT_MS for its frame: its own bound is above a few of those, so
 * that a frame that never comes fails with the screen it waited on, not vitest's 30 s.
 */
const TEST_TIMEOUT_MS = 120_000;

describe('kb tui in a real terminal (tmux), against kb serve', { timeout: TEST_TIMEOUT_MS }, () => {
  const served = servedForTmux([['ns', 'create', 'docs', '--description', 'Product docs']]);

  it.skipIf(!TMUX)(`creates a base with keys sent to the built kb tui, and the API has it; q exits 0${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(100, 30);
    let screen = await tui.waitFor((s) => s.includes('org local') && /^> docs +Product docs/m.test(s));
    expect(screen.split('\n')[0]).toMatch(/^kb {2}profile local {2}url http:\/\/127\.0\.0\.1:\d+ {2}org local/);
    expect(screen).toContain('? help  q quit');

    await tui.press('Enter', 'local › docs › bases (0)');
    await tui.press('n', 'New base in namespace docs');
    await tui.type('faq', (s) => /^> key +\[faq +\]/m.test(s));
    await tui.press('Tab', (s) => /^> description +\[ *\]/m.test(s));
    await tui.type('Frequently asked', (s) => /^> description +\[Frequently asked +\]/m.test(s));
    screen = await tui.press('Enter', 'Created base faq.');
    expect(screen).toMatch(/^> faq +Frequently asked/m);

    const reply = await fetch(`${served.server?.url}/v1/base_list?namespace=docs`, { headers: { authorization: `Bearer ${served.token}` } });
    expect(await reply.json()).toEqual({ success: true, data: [{ namespace: 'docs', key: 'faq', description: 'Frequently asked' }] });

    await tui.keys('q');
    screen = await tui.waitFor('kb-exit=');
    expect(screen).toContain('kb-exit=0');
    // The alternate screen is given back: what the UI drew is gone.
    expect(screen).not.toContain('local › docs › bases');
  });

  it.skipIf(!TMUX)(`shows column headers and counts, sorts with s, and picks up a namespace that kb ns create made in another process${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(100, 30, '--refresh', '1');
    let screen = await tui.waitFor((s) => /^local › namespaces \(1\) +1\/1$/m.test(s));
    expect(screen).toMatch(/^ {2}KEY↑ +DESCRIPTION$/m);
    expect(screen).toMatch(/^> docs +Product docs$/m);

    const created = await runKb(['ns', 'create', 'from-another-process', '--description', 'made by kb ns create'], { env: served.env });
    expect(created.code, created.stderr).toBe(0);
    // The frame of the refresh that brought it: with --refresh 1 on a loaded machine, a frame drawn later may show the
    // next refresh under way ("refreshing…") in place of when the list was updated (CI met it).
    screen = await tui.waitFor((s) => s.includes('from-another-process') && /updated (just now|\d+s ago)/.test(s));
    expect(screen).toContain('local › namespaces (2)');
    // The selection stayed on docs, which the new namespace now follows.
    expect(screen).toMatch(/^> docs +Product docs\n {2}from-another-process +made by kb ns create$/m);

    screen = await tui.press('s', 'KEY↓');
    expect(screen).toMatch(/^ {2}from-another-process +made by kb ns create\n> docs +Product docs$/m);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`E opens $EDITOR on the description, sends what it saved, and redraws the UI${SKIPPED}`, async () => {
    const dir = tempDir('kb-tmux-editor-');
    const editor = join(dir, 'editor');
    writeFileSync(editor, `#!/bin/sh\n[ -t 0 ] || exit 7\nsed -i 's/Product docs/Product documentation, edited/' "$1"\n`);
    chmodSync(editor, 0o755);
    const tui = served.session({ ...served.env, EDITOR: editor, VISUAL: undefined });
    await tui.start(100, 30, '--refresh', '0');
    await tui.waitFor((s) => /^> docs +Product docs$/m.test(s));
    await tui.keys('E');
    const screen = await tui.waitFor('Saved the description of namespace docs.');
    expect(screen.split('\n')[0]).toMatch(/^kb {2}profile local {2}url http:\/\/127\.0\.0\.1:\d+ {2}org local/);
    expect(screen).toMatch(/^> docs +Product documentation, edited$/m);
    const listed = await runKb(['ns', 'list', '--json'], { env: served.env });
    expect(JSON.parse(listed.stdout)).toContainEqual({ key: 'docs', description: 'Product documentation, edited' });
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`at 60 columns, wide characters and emoji are cut with "…" and nothing wraps${SKIPPED}`, async () => {
    const wide = '日本語のドキュメントと説明文がここに長く続きます 🎉🎉🎉';
    const created = await runKb(['ns', 'create', 'wide-text', '--description', wide], { env: served.env });
    expect(created.code, created.stderr).toBe(0);
    const tui = served.session();
    await tui.start(60, 20, '--refresh', '0');
    const screen = await tui.waitFor('wide-text');
    const lines = screen.split('\n');
    // capture-pane -J joins what the terminal wrapped: a line over 60 columns is one that wrapped.
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(60);
    const row = lines.find((line) => line.includes('wide-text')) ?? '';
    expect(row).toMatch(/^ {2}wide-text +日本語のドキュメント.*…$/);
    expect(stringWidth(row)).toBeGreaterThanOrEqual(58);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`a server's escape sequences and bidi overrides show as escapes, as the CLI shows them, and drive nothing${SKIPPED}`, async () => {
    // Clears the screen, retitles the window, then reverses the rest of the line.
    const hostile = `ok${ESC}[2J${ESC}]0;pwned\u0007\u202Eexe.txt`;
    const created = await runKb(['ns', 'create', 'hostile-text', '--description', hostile], { env: served.env });
    expect(created.code, created.stderr).toBe(0);
    const tui = served.session();
    await tui.start(120, 20, '--refresh', '0');
    const screen = await tui.waitFor('hostile-text');
    const row = screen.split('\n').find((line) => line.includes('hostile-text')) ?? '';
    expect(row).toContain('ok\\x1b[2J\\x1b]0;pwned\\x07\\u202eexe.txt');
    // The screen was not cleared: the header is still drawn above the list.
    expect(screen.split('\n')[0]).toMatch(/^kb {2}profile local/);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  for (const columns of [60, 120]) {
    it.skipIf(!TMUX)(`at ${columns} columns the key line names enter, n, e, ? help and q first (s/S and : where they fit), and ? lists every key in columns that stay apart${SKIPPED}`, async () => {
      const tui = served.session();
      await tui.start(columns, 50, '--refresh', '0');
      // The tests before this one have edited docs' description: only its key is certain.
      let screen = await tui.waitFor((s) => /^> docs /m.test(s));
      const keyLine = screen.split('\n').find((line) => line.includes('? help')) ?? '';
      for (const hint of ['enter open', 'n new', 'e edit', '? help', 'q quit']) expect(keyLine).toContain(hint);
      // Copy and sort matter less than open, new and edit: they go first on a narrow terminal.
      if (columns < 80) for (const hint of ['s/S sort', 'c copy']) expect(keyLine).not.toContain(hint);
      if (columns >= 120) for (const hint of ['s/S sort', ': command', 'E $EDITOR', 'c copy']) expect(keyLine).toContain(hint);

      // Its last line too: tmux may be read while the terminal is still drawing the frame.
      screen = await tui.press('?', (s) => s.includes('Help: keys (namespaces)') && /^ {2}q, ctrl-c {3,}\S/m.test(s));
      for (const line of screen.split('\n')) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
      for (const keys of ['s', 'S', 'E', 'c', ':', 'r', '/', '?', 'q, ctrl-c']) {
        expect(screen).toMatch(new RegExp(`^ {2}${keys.replace(/[/.*+?^${}()|[\]\\]/g, '\\$&')} {3,}\\S`, 'm'));
      }
      expect(screen).toMatch(/^ {2}: {3,}command line: :ns \(namespaces\), :ns/m);
      await tui.press('Escape', (s) => !s.includes('Help: keys') && /^> docs /m.test(s));
      // One key at a time, as typed: the command line opens on ":", then takes the text.
      await tui.type(':', ':ns lists namespaces');
      await tui.type('q', (s) => /^:q *$/m.test(s));
      expect(await tui.press('Enter', 'kb-exit=')).toContain('kb-exit=0');
    });
  }

  it.skipIf(!TMUX)(`at 80x24 a namespace's bases keep enter, n, e and ctrl-d on the key line, and an empty namespace shows the n it names${SKIPPED}`, async () => {
    const created = await runKb(['ns', 'create', 'empty-80', '--description', 'nothing in it'], { env: served.env });
    expect(created.code, created.stderr).toBe(0);
    const tui = served.session();
    await tui.start(80, 24, 'docs', '--refresh', '0');
    // The first test created faq in docs.
    let screen = await tui.waitFor((s) => /^> faq /m.test(s));
    let keyLine = screen.split('\n').find((line) => line.includes('? help')) ?? '';
    for (const hint of ['enter open', 'n new', 'e edit', 'ctrl-d delete', 'esc back', '? help', 'q quit']) expect(keyLine).toContain(hint);
    for (const hint of ['c copy', 's/S sort']) expect(keyLine).not.toContain(hint);

    await tui.type(':', (s) => /^: *$/m.test(s));
    await tui.type('ns empty-80', (s) => /^:ns empty-80 *$/m.test(s));
    screen = await tui.press('Enter', 'No bases in this namespace yet: n creates one.');
    keyLine = screen.split('\n').find((line) => line.includes('? help')) ?? '';
    expect(keyLine).toContain('n new');
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`quits on :q sent at once, as a quick typist over ssh sends it${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(100, 30);
    await tui.waitFor((s) => /^> docs /m.test(s));
    // One write: the list reads ":" (opening the command line) and hands it the rest.
    await tui.text(':q');
    await tui.keys('Enter');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`marks the selection with ">" and uses no color with NO_COLOR; with color, the selection is colored${SKIPPED}`, async () => {
    // An SGR sequence that sets a foreground color (16 colors, bright, or 256/RGB).
    const color = new RegExp(`${ESC}\\[[0-9;]*(3[0-7]|9[0-7]|38;[0-9;]+)m`);
    const colored = served.session();
    await colored.start(100, 30);
    const withColor = await colored.waitFor((s) => s.includes('> docs'), 'the list, in color', true);
    expect(withColor).toMatch(color);

    const plain = served.session({ ...served.env, NO_COLOR: '1' });
    await plain.start(100, 30);
    const withoutColor = await plain.waitFor((s) => s.includes('> docs'), 'the list, without color', true);
    expect(withoutColor).not.toMatch(color);
    expect(withoutColor).toMatch(/^.*> docs/m);
  });

  /** The selected row once every key sent before has been read: `?` opens the help only after them, esc closes it. */
  async function selectedAfterAll(tui: TmuxSession): Promise<string> {
    await tui.press('?', 'Help: keys');
    const screen = await tui.press('Escape', (s) => !s.includes('Help: keys') && /^> \S+/m.test(s));
    return /^> (\S+)/m.exec(screen)?.[1] ?? '';
  }

  it.skipIf(!TMUX)(`reads every key: send-keys -l jjj moves three rows, j j k one, twenty j twenty; a bracketed paste of dd runs nothing${SKIPPED}`, async () => {
    const created = await runKb(['ns', 'create', 'keys'], { env: served.env });
    expect(created.code, created.stderr).toBe(0);
    for (let i = 1; i <= 30; i++) {
      const reply = await fetch(`${served.server?.url}/v1/base_create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${served.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: 'keys', key: `k${String(i).padStart(2, '0')}` }),
      });
      expect(reply.status).toBe(200);
    }
    const tui = served.session();
    await tui.start(100, 40, '--refresh', '0');
    await tui.waitFor((s) => /^> docs /m.test(s));
    await tui.type(':', (s) => /^: *$/m.test(s));
    await tui.type('ns keys', (s) => /^:ns keys *$/m.test(s));
    await tui.press('Enter', (s) => /^> k01 /m.test(s));

    await tui.text('jjj');
    expect(await selectedAfterAll(tui)).toBe('k04');
    await tui.keys('j', 'j', 'k');
    expect(await selectedAfterAll(tui)).toBe('k05');
    await tui.keys(...Array.from({ length: 20 }, () => 'j'));
    expect(await selectedAfterAll(tui)).toBe('k25');

    // tmux sends a buffer as a bracketed paste (-p) when the application asked for the mode, as kb tui does.
    await tui.tmux('set-buffer', 'dd');
    await tui.tmux('paste-buffer', '-p', '-t', 'tui');
    await tui.keys('k');
    expect(await selectedAfterAll(tui)).toBe('k24');
    expect(await tui.screen()).not.toContain('Delete base');
    const listed = await runKb(['base', 'list', 'keys', '--json'], { env: served.env });
    expect(JSON.parse(listed.stdout)).toHaveLength(30);

    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
  });

  it.skipIf(!TMUX)(`kb tui NS --readonly starts in that namespace and offers no create, edit or delete${SKIPPED}`, async () => {
    // The namespace keys and its bases come from the test before.
    const tui = served.session();
    await tui.start(120, 30, 'keys', '--readonly', '--refresh', '0');
    let screen = await tui.waitFor((s) => /^> k01 /m.test(s));
    expect(screen).toContain('local › keys › bases (30)');
    const keyLine = screen.trimEnd().split('\n').at(-1) ?? '';
    for (const hint of ['n new', 'e edit', 'E $EDITOR', 'ctrl-d delete']) expect(keyLine).not.toContain(hint);
    expect(keyLine).toContain('? help');
    expect(screen.split('\n')[0]).toMatch(/^kb {2}read-only {2}profile local/);
    await tui.keys('C-d');
    await tui.waitFor('Read-only (kb tui --readonly): nothing is created, edited or deleted.');
    // n does nothing here: the help that ? opens after it is the first frame since, and no form came.
    await tui.keys('n');
    screen = await tui.press('?', 'Help: keys (bases)');
    expect(screen).not.toContain('Delete base');
    expect(screen).not.toContain('New base');
    expect(screen).not.toMatch(/delete the base/);
    await tui.keys('q');
    expect(await tui.waitFor('kb-exit=')).toContain('kb-exit=0');
    const listed = await runKb(['base', 'list', 'keys', '--json'], { env: served.env });
    expect(JSON.parse(listed.stdout)).toHaveLength(30);
  });

  it.skipIf(!TMUX)(`refuses --verbose on the terminal it draws on (the trace would scribble over it), exit 2${SKIPPED}`, async () => {
    const tui = served.session();
    await tui.start(100, 30, '--verbose');
    const screen = await tui.waitFor('kb-exit=');
    expect(screen).toContain('kb-exit=2');
    expect(screen).toContain('Error: --verbose (or KB_DEBUG=1) writes a trace to stderr, which is the terminal kb tui draws on');
    expect(screen).toContain('Send it to a file: `kb tui --verbose 2>trace.log`.');
  });

  it.skipIf(!TMUX)(`with no profile configured, says how to log in or start kb serve, and exits 4${SKIPPED}`, async () => {
    const tui = served.session(terminalEnv());
    await tui.start(100, 30);
    const screen = await tui.waitFor('kb-exit=');
    expect(screen).toContain('kb-exit=4');
    expect(screen).toContain('Error: no kb deployment is configured');
    expect(screen).toContain(
      'Run `kb auth login --url URL`, or start a local server with `kb serve` (it saves the profile `local`), or set KB_URL.',
    );
    expect(screen).not.toMatch(/raw mode/i);
  });

  it.skipIf(!TMUX)(`a namespace whose bases are slow to come holds up no other: esc, and the next one opens at once${SKIPPED}`, async () => {
    // A deployment slow to answer one namespace's bases (a proxy in front of kb serve holds them): the built kb tui,
    // back out and into another namespace, shows its bases while the first list is still unanswered.
    // Namespaces of its own, listed after every other test's, which it runs after.
    for (const args of [['ns', 'create', 'zz-held'], ['ns', 'create', 'zz-open'], ['base', 'create', 'zz-open', 'guide-slow', '--description', 'while another waits']]) {
      const created = await runKb(args, { env: served.env });
      expect(created.code, created.stderr).toBe(0);
    }
    const proxy = await startProxy(served.server?.url ?? '', { hold: (url) => url.includes('base_list') && url.includes('namespace=zz-held') });
    try {
      const tui = served.session({ ...served.env, KB_URL: proxy.url, KB_TOKEN: served.token });
      await tui.start(100, 30);
      await tui.waitFor('zz-held');
      await tui.type('/', (s) => s.includes('esc clears it'));
      await tui.type('zz-held', (s) => /^\/zz-held *$/m.test(s) && s.includes('1 match'));
      await tui.press('Enter', 'filter "zz-held"');
      await tui.press('Enter', (s) => s.includes('local › zz-held › bases') && s.includes('Loading bases'));
      for (const deadline = Date.now() + WAIT_MS; proxy.held < 1 && Date.now() < deadline; ) await sleep(20);
      expect(proxy.held).toBe(1);
      // The namespaces again: after the frame of zz-held's bases, only the esc can draw them. (Sent before that frame,
      // the next key could be read with the esc as one alt key: test/tui/keys.test.ts.)
      await tui.press('Escape', (s) => /^local › namespaces \(\d+\/\d+\) +filter "zz-held"/m.test(s));
      // The filter "zz-held" is still on: `/` edits it, ctrl-u clears the line, and the new text filters.
      await tui.type('/', (s) => s.includes('esc clears it') && /^\/zz-held *$/m.test(s));
      await tui.press('C-u', (s) => /^\/ *$/m.test(s));
      await tui.type('zz-open', (s) => /^\/zz-open *$/m.test(s) && s.includes('1 match'));
      await tui.press('Enter', 'filter "zz-open"');
      const screen = await tui.press('Enter', 'guide-slow');
      expect(screen).toMatch(/^> guide-slow +while another waits/m);
      await tui.keys('q');
    } finally {
      proxy.release();
      await proxy.close();
    }
  });

});
