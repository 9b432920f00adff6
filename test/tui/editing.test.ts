import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbClient } from '../../src/client/client.js';
import { tempDir } from '../helpers/server.js';
import { selected, tuiFixture } from './fixture.js';
import { KEY, orgClient, type AppOptions, type Screen } from './harness.js';

const tui = tuiFixture('tui-editing');
let scripts: string;
beforeAll(() => {
  scripts = tempDir('kb-editors-');
});
afterAll(() => {
  rmSync(scripts, { recursive: true, force: true });
});

/** An editor: a shell script that does `body` to the file it is given ($1), as a person in vi would. */
function editor(name: string, body: string): string {
  const path = join(scripts, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function open(org: string, options: Partial<AppOptions> = {}): Promise<{ client: KbClient; screen: Screen }> {
  const { client } = await orgClient(tui.server, org);
  await client.nsCreate({ key: 'alpha', description: 'First' });
  await client.nsCreate({ key: 'docs', description: 'Old words' });
  const screen = tui.open({ client, organization: org, ...options });
  await screen.waitFor('docs');
  return { client, screen };
}


describe('kb tui: E edits the description in $VISUAL/$EDITOR', () => {
  it('hands the editor a file holding the description, sends what it saved, and says so', async () => {
    const seen = join(scripts, 'seen.txt');
    const { client, screen } = await open('editor-save', {
      editor: editor('rewrite', `cp "$1" ${seen}\nprintf 'Written in the editor\\n' > "$1"`),
    });
    await screen.press('j', 'E');
    const frame = await screen.waitFor('Saved the description of namespace docs.');
    expect(readFileSync(seen, 'utf8')).toBe('Old words\n');
    expect(screen.terminal.suspended).toBe(1);
    expect(frame).toMatch(/^> docs +Written in the editor$/m);
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'Written in the editor' });
  });

  it('an editor given as a command with arguments runs through the shell, as git runs it', async () => {
    const script = editor('with-args', `[ "$1" = "--wait" ] || exit 9\nprintf 'With arguments\\n' > "$2"`);
    const { client, screen } = await open('editor-args', { editor: `${script} --wait` });
    await screen.press('j', 'E');
    await screen.waitFor('Saved the description of namespace docs.');
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'With arguments' });
  });

  it('an unchanged file sends nothing and says so', async () => {
    const { client, screen } = await open('editor-unchanged', { editor: 'true' });
    await screen.press('j', 'E');
    expect(await screen.waitFor('Unchanged: nothing was sent for namespace docs.')).toMatch(/^> docs +Old words$/m);
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'Old words' });
  });

  it('an emptied file cancels: nothing is sent, and the way to clear a description is named', async () => {
    const { client, screen } = await open('editor-emptied', { editor: editor('empty', ': > "$1"') });
    await screen.press('j', 'E');
    const frame = await screen.waitFor('The file was emptied: nothing was sent for namespace docs.');
    expect(frame).toContain('To clear a description: e, then empty + enter.');
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'Old words' });
  });

  it('checks what was saved with the shared rule before sending: 1,025 characters send nothing', async () => {
    const { client, screen } = await open('editor-long', { editor: editor('long', `printf '%1025s' '' | tr ' ' x > "$1"`) });
    await screen.press('j', 'E');
    const frame = await screen.waitFor('Not saved:');
    expect(frame).toContain('Error: Not saved: a description is 1 to 1024 characters; nothing was sent.');
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'Old words' });
  });

  it('an editor that fails sends nothing, and the UI keeps running', async () => {
    const { client, screen } = await open('editor-fails', { editor: 'exit 3;' });
    await screen.press('j', 'E');
    await screen.waitFor('Error: the editor "exit 3;" exited with 3: nothing was sent.');
    await screen.press('k');
    expect(selected(screen.frame())).toBe('alpha');
    expect(await client.nsList()).toContainEqual({ key: 'docs', description: 'Old words' });
  });

  it('works on a base too, through the same flow: from the list and from the base screen', async () => {
    const { client, screen } = await open('editor-base', { editor: editor('base', `printf 'Base words\\n' > "$1"`) });
    await client.baseCreate({ namespace: 'docs', key: 'faq', description: 'Questions' });
    await screen.press('j', KEY.enter);
    await screen.waitFor('> faq');
    await screen.press('E');
    await screen.waitFor('Saved the description of base faq.');
    expect((await client.baseList('docs')).map(({ key, description }) => ({ key, description }))).toEqual([{ key: 'faq', description: 'Base words' }]);
    await client.baseUpdate({ namespace: 'docs', base: 'faq', data: { description: 'Again' } });
    await screen.press('r');
    await screen.waitFor(/^> faq +Again$/m);
    await screen.press(KEY.enter, 'E');
    const frame = await screen.waitFor('Saved the description of base faq.');
    expect(frame).toMatch(/^description +Base words$/m);
  });
});

describe('kb tui: the : command line', () => {
  it(':ns KEY opens a namespace, :ns comes back to the namespaces, and an unknown command says so', async () => {
    const { client, screen } = await open('command-line');
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    await screen.press(':');
    await screen.type('ns docs');
    expect(screen.frame()).toContain(':ns docs');
    await screen.press(KEY.enter);
    await screen.waitFor('command-line › docs › bases (1)');

    await screen.press(':');
    await screen.type('nope');
    await screen.press(KEY.enter);
    let frame = screen.frame();
    expect(frame).toContain('Error: Unknown command: :nope');
    expect(frame).toContain('Commands: :ns [KEY], :ctx [NAME] (:profile), :help, :q.');

    await screen.press(':');
    await screen.type('ns no!');
    await screen.press(KEY.enter);
    expect(screen.frame()).toContain('Error: Not a namespace key: no!: a key is 3 to 63 characters');

    await screen.press(':');
    await screen.type('ns');
    await screen.press(KEY.enter);
    frame = await screen.waitFor('command-line › namespaces (2)');
    expect(selected(frame)).toBe('alpha');
  });

  it('esc closes the command line without running it; letters typed there are text, not commands', async () => {
    const { screen } = await open('command-esc');
    await screen.press(':');
    await screen.type('q');
    await screen.press(KEY.escape);
    const frame = screen.frame();
    expect(frame).toContain('command-esc › namespaces (2)');
    expect(frame).not.toContain(':q');
  });
});

describe('kb tui: c copies the selected key', () => {
  it('puts the key on the clipboard and says what it did: sent it to the terminal (OSC 52)', async () => {
    const { screen } = await open('copy');
    await screen.press('j', 'c');
    expect(screen.terminal.copied).toEqual(['docs']);
    expect(screen.frame()).toContain("Sent docs to the terminal's clipboard (OSC 52)");
  });

  it('on a base\'s screen, copies the base key', async () => {
    const { client, screen } = await open('copy-base');
    await client.baseCreate({ namespace: 'docs', key: 'faq' });
    await screen.press('j', KEY.enter);
    await screen.waitFor('> faq');
    await screen.press(KEY.enter, 'c');
    expect(screen.terminal.copied).toEqual(['faq']);
    expect(screen.frame()).toContain('copy-base › docs › base faq');
    expect(screen.frame()).toContain("Sent faq to the terminal's clipboard (OSC 52)");
  });
});
