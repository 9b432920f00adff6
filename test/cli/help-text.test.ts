import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES, environmentTable, joinParagraphs, renderDefinitions, wrapWords } from '../../src/cli/help-text.js';
import { ROOT } from '../helpers/cli.js';

describe('help text as paragraphs', () => {
  it('joins the lines of a paragraph, and keeps blank lines, indented lines and list items', () => {
    const source = 'Serves the API, so you can run\nyour own instance.\n\nOn PostgreSQL, use pg_dump:\n  pg_dump --file kb.dump\n- one item\n- another,\ncontinued\n\nends --yes\n--yes starts a line.';
    expect(joinParagraphs(source)).toBe(
      'Serves the API, so you can run your own instance.\n\nOn PostgreSQL, use pg_dump:\n  pg_dump --file kb.dump\n- one item\n- another, continued\n\nends --yes --yes starts a line.',
    );
  });

  it('wraps words to a width, cutting only a word wider than it', () => {
    expect(wrapWords('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrapWords('abcdefghijkl x', 5)).toEqual(['abcde', 'fghij', 'kl x']);
  });

  it('lays out definitions with a hanging indent, a long label on a line of its own', () => {
    const text = renderDefinitions([['A', 'alpha beta gamma delta'], ['LONG_LABEL_HERE', 'text']], 20, 4);
    expect(text).toBe('  A  alpha beta gamma\n     delta\n  LONG_LABEL_HERE\n     text');
  });

  it('lists every variable src/config/env.ts reads, and fits 60 columns', () => {
    const read = [...readFileSync(`${ROOT}src/config/env.ts`, 'utf8').matchAll(/env\.([A-Z_]+)/g)].map((match) => match[1] as string);
    const listed = ENVIRONMENT_VARIABLES.map(([name]) => name).join(' ');
    for (const name of new Set(read)) if (name !== 'TERM') expect(listed, name).toContain(name);
    for (const line of environmentTable(60).split('\n')) expect(line.length, line).toBeLessThanOrEqual(60);
  });
});
