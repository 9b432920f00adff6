import { describe, expect, it } from 'vitest';
import { escapeControls, escapeJsonControls } from '../../src/text/controls.js';
import { displayWidth } from '../../src/text/width.js';

const HOSTILE = 'a\u0000b\u0007c\u001B[2Jd\u007Fe\u0085f\u009Bg\u061Ch\u200Ei\u202Aj\u202Ek\u2066l\u2069m\nn\to\rp';

describe('escapeControls', () => {
  it('shows every control and bidi character as a visible escape', () => {
    expect(escapeControls(HOSTILE)).toBe(
      'a\\x00b\\x07c\\x1b[2Jd\\x7fe\\x85f\\x9bg\\u061ch\\u200ei\\u202aj\\u202ek\\u2066l\\u2069m\\nn\\to\\rp',
    );
  });

  it('keeps newlines and tabs for kb\'s own messages, or makes them spaces for a line of a list', () => {
    expect(escapeControls('one\n\ttwo\r\u001B', { keepLayout: true })).toBe('one\n\ttwo\\r\\x1b');
    expect(escapeControls('one\n\ttwo\r\u001B', { layoutAsSpace: true })).toBe('one  two \\x1b');
  });

  it('leaves other text as it is: wide characters, emoji, combining marks, right-to-left letters', () => {
    const text = '日本語 👩‍💻 e\u0301 שלום مرحبا';
    expect(escapeControls(text)).toBe(text);
  });
});

describe('escapeControls: invisible characters, which would make two texts look the same', () => {
  it.each([
    ['do\u200Bcs', 'do\\u200bcs'],
    ['do\u200Ccs', 'do\\u200ccs'],
    ['do\u200Dcs', 'do\\u200dcs'],
    ['\uFEFFdocs', '\\ufeffdocs'],
    ['do\u00ADcs', 'do\\xadcs'],
    ['do\u2060cs', 'do\\u2060cs'],
    ['one\u2028two\u2029three', 'one\\u2028two\\u2029three'],
    ['docs\u{E0041}\u{E007F}', 'docs\\u{e0041}\\u{e007f}'],
    ['do\u034Fcs', 'do\\u034fcs'],
    ['d\uFE00ocs', 'd\\ufe00ocs'],
    ['\u3164', '\\u3164'],
    ['a\u180Eb', 'a\\u180eb'],
    ['\uFFF9note\uFFFB', '\\ufff9note\\ufffb'],
  ])('escapes %j as %s', (text, shown) => {
    expect(escapeControls(text)).toBe(shown);
    expect(escapeControls(text, { layoutAsSpace: true })).toBe(shown);
  });

  it.each([
    ['emoji joined by ZWJ', 'family 👨‍👩‍👧 and 🧑🏽‍💻'],
    ['an emoji presentation selector', 'heart ❤️ and ☺️'],
    ['a flag of tag characters', 'flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿'],
    ['a keycap', 'key 1️⃣'],
    ['a text presentation selector after a symbol', 'arrow ↔︎'],
    ['an ideographic variation sequence', '葛󠄀城'],
    ['a zero-width non-joiner in Persian', 'می‌خواهم'],
    ['a zero-width joiner in Devanagari', 'क्‍ष'],
  ])('keeps %s, which a terminal draws', (_, text) => {
    expect(escapeControls(text)).toBe(text);
  });

  it('measures the escape, so that look-alikes take different widths', () => {
    expect(displayWidth(escapeControls('do\u200Bcs'))).toBe(10);
    expect(displayWidth(escapeControls('docs'))).toBe(4);
  });
});

describe('escapeJsonControls', () => {
  it('writes invisible characters as \\uXXXX (tag characters as their surrogate pair), keeping emoji, the same value', () => {
    const value = { text: 'do\u200Bcs \uFEFF \u00AD \u2028 tag\u{E0041} 👨‍👩‍👧 ❤️ 🏴󠁧󠁢󠁳󠁣󠁴󠁿' };
    const json = escapeJsonControls(JSON.stringify(value));
    expect(json).toBe('{"text":"do\\u200bcs \\ufeff \\u00ad \\u2028 tag\\udb40\\udc41 👨‍👩‍👧 ❤️ 🏴󠁧󠁢󠁳󠁣󠁴󠁿"}');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('gives the same JSON value with nothing left that drives or reorders a terminal', () => {
    const value = { [HOSTILE]: [HOSTILE, 1, null, { nested: HOSTILE }] };
    const json = escapeJsonControls(JSON.stringify(value, null, 2));
    expect(JSON.parse(json)).toEqual(value);
    // eslint-disable-next-line no-control-regex
    expect(json.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
  });
});
