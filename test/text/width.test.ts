import { describe, expect, it } from 'vitest';
import stringWidth from '../../node_modules/ink/node_modules/string-width/index.js';
import { cell } from '../../src/tui/text.js';
import { displayWidth, truncate } from '../../src/text/width.js';

describe('displayWidth', () => {
  it.each([
    ['abc', 3],
    ['日本語', 6],
    ['한국어', 6],
    ['ｶﾀｶﾅ', 4],
    ['ＡＢ', 4],
    ['e\u0301', 1],
    ['ก้', 1],
    ['😀', 2],
    ['👩‍💻', 2],
    ['👍🏽', 2],
    ['🇯🇵', 2],
    ['❤️', 2],
    ['✔', 1],
    ['a\u200Bb', 2],
  ])('%j takes %i columns', (text, width) => {
    expect(displayWidth(text)).toBe(width);
  });
});

describe('truncate', () => {
  it('cuts to a number of columns with an ellipsis, never through a wide character or an emoji sequence', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('日本語です', 6)).toBe('日本…');
    expect(truncate('日本語です', 5)).toBe('日本…');
    expect(truncate('ab👩‍💻cd', 4)).toBe('ab…');
    expect(truncate('ab👩‍💻cd', 5)).toBe('ab👩‍💻…');
    expect(truncate('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301…');
  });
});

describe('display width: what Ink measures, the lists measure alike', () => {
  const samples = [
    'plain ascii', '日本語のテキスト', '한국어', 'ｶﾞｷﾞ', 'e\u0301cole', 'nai\u0308ve', '👩‍👩‍👧 family', '🇫🇷🇩🇪', '1️⃣ keycap',
    '✔︎ text-style', 'zero\u200Bwidth', 'Ωmega', 'mixed 日本 and 🎉 and e\u0301',
    // Decomposed Hangul (jamo), as macOS writes file names: whole syllable blocks, and malformed runs that add up.
    '\u1112\u1161\u11AB\u1100\u116E\u11A8 decomposed', '\u1100\u1100\u1161', '\u1100\uAC00', '\u1100\u1161\u11A8\u11A8', '\u1161 alone', '\uA960\u1161',
  ];
  it('agrees with the string-width Ink uses, on wide characters, emoji sequences and combining marks', () => {
    for (const text of samples) expect(displayWidth(text), text).toBe(stringWidth(text));
  });

  it('truncate keeps whole graphemes within the width and ends with "…"; cell pads to exactly the width', () => {
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdefg', 6)).toBe('abcde…');
    // A wide character that would straddle the edge goes: the cell is a column short rather than half a character.
    expect(truncate('日本語のテキスト', 6)).toBe('日本…');
    expect(truncate('日本語のテキスト', 7)).toBe('日本語…');
    expect(truncate('e\u0301e\u0301e\u0301e\u0301', 3)).toBe('e\u0301e\u0301…');
    expect(truncate('👩‍👩‍👧👩‍👩‍👧', 3)).toBe('👩‍👩‍👧…');
    for (const text of samples) for (const width of [1, 2, 5, 9]) expect(stringWidth(cell(text, width)), `${text} in ${width}`).toBe(width);
  });
});
