import { readFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import YAML from 'yaml';
import { isolatedEnv, ROOT } from '../helpers/cli.js';
import { describeRun, kb, TEST_TIMEOUT_MS, type TimedRun } from '../helpers/cli-e2e.js';

interface Manifest {
  commands: Record<string, { hidden?: boolean; aliases?: string[] }>;
}

const manifest = JSON.parse(readFileSync(`${ROOT}oclif.manifest.json`, 'utf8')) as Manifest;
const visible = Object.keys(manifest.commands).filter((id) => manifest.commands[id]?.hidden !== true);
const commands = visible.map((id) => id.split(':'));
/** Every alias of a visible command (`ns ls`): its --help is the command's, and must fit as well. */
const aliases = visible.flatMap((id) => manifest.commands[id]?.aliases ?? []).map((id) => id.split(':'));
/** Every topic package.json declares, so that a new one is checked without editing this file. */
const topics = Object.keys((JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { oclif: { topics: Record<string, unknown> } }).oclif.topics).map((name) =>
  name.split(':'),
);

/** Lines of the help wider than `width` columns (help text is ASCII). */
function overWide(text: string, width: number): string[] {
  return text.split('\n').filter((line) => line.length > width);
}

/**
 * Lines of prose broken where they did not need to be: within a run of lines of one indentation (no table row, list
 * item, example or option line), a line after which the next line's first word would still have fitted. That is a
 * paragraph hard-wrapped in the source and wrapped again: "...so you can run" / "your own instance". A DESCRIPTION's
 * lines indented past its paragraphs are written as they are (a command, a file's lines), not prose.
 */
function raggedBreaks(text: string, width: number): string[] {
  const prose = (line: string) => {
    const body = line.trimStart();
    return body !== '' && !/\S {2,}\S/.test(body) && !/^(\$|[-*] |<options|\[default|-)/.test(body) && !body.endsWith('\\');
  };
  const indentOf = (line: string) => line.length - line.trimStart().length;
  const lines = text.split('\n');
  const found: string[] = [];
  let section = '';
  for (let i = 0; i + 1 < lines.length; i++) {
    const line = lines[i] as string;
    const next = lines[i + 1] as string;
    if (/^[A-Z][A-Z ]*$/.test(line)) section = line;
    if (section === 'DESCRIPTION' && indentOf(line) > 2) continue;
    if (!prose(line) || !prose(next) || indentOf(line) !== indentOf(next)) continue;
    const word = next.trimStart().split(' ')[0] as string;
    if (line.length + 1 + word.length <= width - 2) found.push(`${line}⏎\n${next}`);
  }
  return found;
}

/**
 * `kb ARGS` piped, as a terminal WIDTH columns wide would show it (OCLIF_COLUMNS; piped, help is 80 wide), run once
 * for every test that reads it: each command's help is read by several of them.
 */
const runs = new Map<string, Promise<TimedRun>>();
function help(args: readonly string[], width = 80): Promise<TimedRun> {
  const id = `${width} ${args.join(' ')}`;
  let run = runs.get(id);
  if (run === undefined) runs.set(id, (run = kb(args, { env: isolatedEnv(width === 80 ? {} : { OCLIF_COLUMNS: String(width) }) })));
  return run;
}

describe.concurrent('help wraps to the terminal as paragraphs', { timeout: TEST_TIMEOUT_MS }, () => {
  it('the check finds a hard-wrapped paragraph and a line too wide', ({ expect }) => {
    const ragged = '  Serves the whole kb API from an SQLite database, so you can run\n  your own instance, and test scripts without a remote deployment.';
    expect(raggedBreaks(ragged, 80)).toHaveLength(1);
    expect(raggedBreaks(`DESCRIPTION\n${ragged}`, 80)).toHaveLength(1);
    expect(raggedBreaks(`DESCRIPTION\n  In YAML:\n    version: 1\n    namespaces: []`, 80)).toEqual([]);
    expect(overWide(`  ${'x'.repeat(79)}`, 80)).toHaveLength(1);
  });

  for (const width of [80, 60]) {
    it(`kb apply --help and kb import --help at ${width} columns: the file's example is YAML that kb reads`, async ({ expect }) => {
      for (const command of ['apply', 'import']) {
        const result = await help([command, '--help'], width);
        const label = describeRun(result);
        // The lines indented under "In YAML flow style:", up to the next paragraph.
        const example = /In YAML flow style:\n\n((?: {4}.*\n)+)/.exec(result.stdout)?.[1];
        expect(example, label).toBeDefined();
        const yaml = (example as string).replace(/^ {4}/gm, '');
        if (width === 80) expect(yaml, label).toBe('version: 1\nnamespaces: [{key: docs, description: Docs, bases: [{key: faq}]}]\n');
        expect(YAML.parse(yaml), label).toEqual({ version: 1, namespaces: [{ key: 'docs', description: 'Docs', bases: [{ key: 'faq' }] }] });
      }
    });
  }

  for (const width of [80, 60]) {
    it(`every command's --help, the topics' and the root's, piped at ${width} columns: no line wider, no ragged paragraph`, async ({ expect }) => {
      const all = [[], ...topics, ...commands, ...aliases].map((words) => [...words, '--help']);
      all.push(['help'], ['help', 'ns'], ['help', 'serve', 'token'], ['help', 'exit-codes'], ['help', 'environment']);
      const results = await Promise.all(all.map((args) => help(args, width)));
      results.forEach((result, i) => {
        const label = `kb ${all[i]?.join(' ')} at ${width} columns:\n${describeRun(result)}`;
        expect(result.code, label).toBe(0);
        expect(overWide(result.stdout, width), label).toEqual([]);
        expect(raggedBreaks(result.stdout, width), label).toEqual([]);
      });
    });
  }

  it('every example has the prompt, and a long one breaks between words with a shell continuation', async ({ expect }) => {
    const [login, token] = await Promise.all([help(['auth', 'login', '--help']), help(['auth', 'token', '--help'])]);
    for (const result of [login, token]) {
      const examples = result.stdout.split('\nEXAMPLES\n')[1] ?? '';
      const commandLines = examples.split('\n').filter((line) => line.startsWith('    ') && !line.startsWith('        '));
      expect(commandLines.length, describeRun(result)).toBeGreaterThan(0);
      for (const line of commandLines) expect(line, describeRun(result)).toMatch(/^ {4}\$ /);
    }
    expect(login.stdout).toContain('    $ echo "$STAGING_TOKEN" | kb auth login --profile staging --url \\\n');
  });

  it('every command\'s examples: one command each, with the prompt, and no glob a shell would expand', async ({ expect }) => {
    const results = await Promise.all(commands.map((words) => help([...words, '--help'])));
    results.forEach((result, i) => {
      const label = `kb ${commands[i]?.join(' ')} --help:\n${describeRun(result)}`;
      const examples = (result.stdout.split('\nEXAMPLES\n')[1] ?? '').split(/\n[A-Z][A-Z ]+\n/)[0] ?? '';
      const lines = examples.split('\n');
      lines.forEach((line, j) => {
        const previous = lines[j - 1] ?? '';
        // After a command line comes a blank line, or the line a ` \` continues, indented under it.
        if (/^ *\$ /.test(previous) || previous.endsWith(' \\')) {
          if (previous.endsWith(' \\')) expect(line, label).toMatch(/^ {6,}\S/);
          else expect(line, label).toBe('');
        }
        // zsh stops at an unquoted word with [...] in it ("no matches found"): such a word is quoted in an example.
        if (/^ *\$ /.test(line)) expect(line.replace(/'[^']*'|"[^"]*"/g, "''"), label).not.toMatch(/\S\[[^\]\s]*\]/);
      });
    });
  });

  it('--json says what it does in kb\'s words, alike on every command that takes it', async ({ expect }) => {
    const results = await Promise.all(commands.map((words) => help([...words, '--help'])));
    const withJson = results.filter((result) => /^ {2}\$ kb .*\[--json\]/m.test(result.stdout));
    expect(withJson.length).toBeGreaterThan(10);
    for (const result of results) {
      expect(result.stdout, describeRun(result)).not.toContain('Format output as json');
      if (withJson.includes(result)) expect(result.stdout, describeRun(result)).toMatch(/^ {2}(?: {4})?--json +Print the data as JSON: one document, nothing else\.$/m);
    }
  });

  it('kb help exit-codes and kb help environment print the root help\'s tables alone', async ({ expect }) => {
    const [root, codes, environment] = await Promise.all([help(['--help']), help(['help', 'exit-codes']), help(['help', 'environment'])]);
    expect(codes.stdout.split('\n')[0]).toBe('EXIT CODES');
    expect(codes.stdout).toMatch(/^ {2}4 +authentication: no token configured, 401\/403$/m);
    expect(root.stdout).toContain(codes.stdout);
    expect(environment.stdout.split('\n')[0]).toBe('ENVIRONMENT');
    expect(environment.stdout).toMatch(/^ {2}KB_TOKEN +The token/m);
    expect(environment.stdout).toMatch(/^ {2}CI +Set \(and not 0 or false\): no colors, no spinners, no prompts/m);
    expect(root.stdout).toContain(environment.stdout);
  });

  it('the check covers every command, its aliases and every topic', ({ expect }) => {
    expect(commands.map((words) => words.join(' '))).toEqual(expect.arrayContaining(['ns view', 'base view', 'completion', 'serve token revoke']));
    expect(aliases.map((words) => words.join(' '))).toEqual(expect.arrayContaining(['ns ls', 'base ls', 'serve token ls']));
    expect(topics.map((words) => words.join(' '))).toEqual(expect.arrayContaining(['auth', 'ns', 'base', 'serve', 'serve token']));
  });

  it('a topic lists each command once, its aliases only in the command\'s own help (as gh)', async ({ expect }) => {
    const [ns, base, tokens, list] = await Promise.all([help(['ns', '--help']), help(['base', '--help']), help(['serve', 'token', '--help']), help(['ns', 'list', '--help'])]);
    expect(ns.stdout, describeRun(ns)).toMatch(/^ {2}ns list +List the namespaces/m);
    expect(ns.stdout, describeRun(ns)).not.toMatch(/^ {2}ns ls /m);
    expect(base.stdout, describeRun(base)).not.toMatch(/^ {2}base ls /m);
    expect(tokens.stdout, describeRun(tokens)).not.toMatch(/^ {2}serve token ls /m);
    expect(list.stdout, describeRun(list)).toContain('ALIASES\n  $ kb ns ls\n');
  });

  it('the topics name what their commands do, view included', async ({ expect }) => {
    const root = await help(['--help']);
    expect(root.stdout, describeRun(root)).toMatch(/^ {2}ns +List, view, create, update and delete namespaces$/m);
    expect(root.stdout, describeRun(root)).toMatch(/^ {2}base +List, view, create, update and delete the bases of a namespace$/m);
  });

  it('the serve token topic says what the topic holds', async ({ expect }) => {
    const result = await help(['serve', '--help']);
    expect(result.stdout).toMatch(/^ {2}serve token +Manage the local server's bearer tokens$/m);
  });
});
