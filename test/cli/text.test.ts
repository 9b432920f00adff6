import { describe, expect, it } from 'vitest';
import { renderObject, renderTable } from '../../src/cli/output.js';
import { displayWidth, escapeControls } from '../../src/cli/text.js';

describe('escapeControls', () => {
  it('shows C0, DEL, C1 and bidirectional controls as escapes, and leaves other text as it is', () => {
    expect(escapeControls('red\u001B[31m bell\u0007 del\u007F csi\u009B rlo\u202E nl\n tab\t cr\r')).toBe(
      'red\\x1b[31m bell\\x07 del\\x7f csi\\x9b rlo\\u202e nl\\n tab\\t cr\\r',
    );
    expect(escapeControls('日本語 👩‍💻 é ok')).toBe('日本語 👩‍💻 é ok');
  });

  it('keeps newlines and tabs when asked (messages of our own, and oclif\'s, are laid out with them)', () => {
    expect(escapeControls('a\nb\u001B', { keepLayout: true })).toBe('a\nb\\x1b');
    expect(escapeControls('Parsing --port \n\tExpected an integer\r', { keepLayout: true })).toBe('Parsing --port \n\tExpected an integer\\r');
  });
});

describe('renderTable', () => {
  const rows = [
    { key: 'docs', description: '日本語の説明です、とても長い説明' },
    { key: 'emoji-key', description: 'launch 🚀 notes\u001B[2J' },
  ];
  const columns = [
    { header: 'KEY', get: (row: (typeof rows)[number]) => row.key },
    { header: 'DESCRIPTION', get: (row: (typeof rows)[number]) => row.description },
  ];

  it('lines up columns by display width and escapes control characters; not a terminal: nothing is cut', () => {
    expect(renderTable({ columns: undefined }, rows, columns)).toBe(
      [
        'KEY        DESCRIPTION',
        'docs       日本語の説明です、とても長い説明',
        'emoji-key  launch 🚀 notes\\x1b[2J',
        '',
      ].join('\n'),
    );
  });

  it('on a terminal, fits its width: the widest column gives way, cut with …', () => {
    const table = renderTable({ columns: 30 }, rows, columns);
    const lines = table.trimEnd().split('\n');
    expect(lines).toEqual(['KEY        DESCRIPTION', 'docs       日本語の説明です、…', 'emoji-key  launch 🚀 notes\\x1…']);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(30);
  });

  it('on a terminal too narrow for every column, cuts each no narrower than 8 columns', () => {
    const wide = [{ key: 'a-very-long-namespace-key', description: 'a long description too' }];
    const lines = renderTable({ columns: 12 }, wide, columns).trimEnd().split('\n');
    expect(lines).toEqual(['KEY       DESCRIP…', 'a-very-…  a long …']);
  });
});

describe('renderObject', () => {
  it('escapes control characters in values', () => {
    expect(renderObject({ key: 'docs', organization: 'evil\u001B]0;title\u0007' })).toBe('key:          docs\norganization: evil\\x1b]0;title\\x07\n');
  });
});
