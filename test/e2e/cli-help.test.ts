import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, ROOT } from '../helpers/cli.js';
import { describeRun, kb, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';

interface Manifest {
  commands: Record<string, { hidden?: boolean; aliases?: string[] }>;
}

const manifest = JSON.parse(readFileSync(`${ROOT}oclif.manifest.json`, 'utf8')) as Manifest;
const commands = Object.keys(manifest.commands)
  .filter((id) => manifest.commands[id]?.hidden !== true)
  .map((id) => id.split(':'));
const topics = [['auth'], ['ns'], ['base'], ['serve', 'token']];

/** Lines of the help wider than `width` columns (help text is ASCII). */
function overWide(text: string, width: number): string[] {
  return text.split('\n').filter((line) => line.length > width);
}

/**
 * Lines of prose broken where they did not need to be: within a run of lines of one indentation (no table row, list
 * item, example or option line), a line after which the next line's first word would still have fitted. That is a
 * paragraph hard-wrapped in the source and wrapped again: "...so you can run" / "your own instance".
 */
function raggedBreaks(text: string, width: number): string[] {
  const prose = (line: string) => {
    const body = line.trimStart();
    return body !== '' && !/\S {2,}\S/.test(body) && !/^(\$|[-*] |<options|\[default|-)/.test(body) && !body.endsWith('\\');
  };
  const indentOf = (line: string) => line.length - line.trimStart().length;
  const lines = text.split('\n');
  const found: string[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const line = lines[i] as string;
    const next = lines[i + 1] as string;
    if (!prose(line) || !prose(next) || indentOf(line) !== indentOf(next)) continue;
    const word = next.trimStart().split(' ')[0] as string;
    if (line.length + 1 + word.length <= width - 2) found.push(`${line}⏎\n${next}`);
  }
  return found;
}

describe.concurrent('help wraps to the terminal as paragraphs', { timeout: TEST_TIMEOUT_MS }, () => {
  it('the check finds a hard-wrapped paragraph and a line too wide', () => {
    const ragged = '  Serves the whole kb API from an SQLite database, so you can run\n  your own instance, and test scripts without a remote deployment.';
    expect(raggedBreaks(ragged, 80)).toHaveLength(1);
    expect(overWide(`  ${'x'.repeat(79)}`, 80)).toHaveLength(1);
  });

  for (const width of [80, 60]) {
    it(`every command's --help, the topics' and the root's, piped at ${width} columns: no line wider, no ragged paragraph`, async () => {
      // Piped, help is 80 columns wide; OCLIF_COLUMNS sets another width, as a narrower terminal would.
      const env = isolatedEnv(width === 80 ? {} : { OCLIF_COLUMNS: String(width) });
      const runs = [[], ...topics, ...commands].map((words) => [...words, '--help']);
      runs.push(['help', 'exit-codes'], ['help', 'environment']);
      const results = await Promise.all(runs.map((args) => kb(args, { env })));
      results.forEach((result, i) => {
        const label = `kb ${runs[i]?.join(' ')} at ${width} columns:\n${describeRun(result)}`;
        expect(result.code, label).toBe(0);
        expect(overWide(result.stdout, width), label).toEqual([]);
        expect(raggedBreaks(result.stdout, width), label).toEqual([]);
      });
    });
  }

  it('every example has the prompt, and a long one breaks between words with a shell continuation', async () => {
    const env = isolatedEnv();
    const [login, token] = await Promise.all([kb(['auth', 'login', '--help'], { env }), kb(['auth', 'token', '--help'], { env })]);
    for (const result of [login, token]) {
      const examples = result.stdout.split('\nEXAMPLES\n')[1] ?? '';
      const commandLines = examples.split('\n').filter((line) => line.startsWith('    ') && !line.startsWith('        '));
      expect(commandLines.length, describeRun(result)).toBeGreaterThan(0);
      for (const line of commandLines) expect(line, describeRun(result)).toMatch(/^ {4}\$ /);
    }
    expect(login.stdout).toContain('    $ echo "$STAGING_TOKEN" | kb auth login --profile staging --url \\\n');
  });

  it('kb help exit-codes and kb help environment print the root help\'s tables alone', async () => {
    const env = isolatedEnv();
    const [root, codes, environment] = await Promise.all([
      kb(['--help'], { env }),
      kb(['help', 'exit-codes'], { env }),
      kb(['help', 'environment'], { env }),
    ]);
    expect(codes.stdout.split('\n')[0]).toBe('EXIT CODES');
    expect(codes.stdout).toMatch(/^ {2}4 +authentication: no token configured, 401\/403$/m);
    expect(root.stdout).toContain(codes.stdout);
    expect(environment.stdout.split('\n')[0]).toBe('ENVIRONMENT');
    expect(environment.stdout).toMatch(/^ {2}KB_TOKEN +The token/m);
    expect(root.stdout).toContain(environment.stdout);
  });

  it('the serve token topic says what the topic holds', async () => {
    const result = await kb(['serve', '--help'], { env: isolatedEnv() });
    expect(result.stdout).toMatch(/^ {2}serve token +Manage the local server's bearer tokens$/m);
  });
});
