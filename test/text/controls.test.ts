import { describe, expect, it } from 'vitest';
import { escapeControls, escapeJsonControls } from '../../src/text/controls.js';

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

describe('escapeJsonControls', () => {
  it('gives the same JSON value with nothing left that drives or reorders a terminal', () => {
    const value = { [HOSTILE]: [HOSTILE, 1, null, { nested: HOSTILE }] };
    const json = escapeJsonControls(JSON.stringify(value, null, 2));
    expect(JSON.parse(json)).toEqual(value);
    // eslint-disable-next-line no-control-regex
    expect(json.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
  });
});
