/** How many terminal columns text takes, and text cut to a width: the one measure of the CLI's tables and the TUI. */
import { eastAsianWidth } from 'get-east-asian-width';

/** Printable ASCII, where one character is one column: the fast path for keys and most descriptions. */
const ASCII = /^[\x20-\x7E]*$/;

// The rules of string-width 8, which Ink measures with (and whose get-east-asian-width this is): the CLI's tables and
// the TUI's lists measure text as Ink does, so a line cut here is never wrapped there.
// Made on first use: the segmenter and these `v`-flag patterns (built at run time: the TypeScript target predates
// them) cost some 50 ms to make, which the first screen of an ASCII list never pays.
let unicode: { graphemes: Intl.Segmenter; visible: RegExp; emoji: RegExp } | undefined;
function unicodeRules(): NonNullable<typeof unicode> {
  unicode ??= {
    graphemes: new Intl.Segmenter(),
    visible: new RegExp('[^\\p{Default_Ignorable_Code_Point}\\p{Control}\\p{Format}\\p{Nonspacing_Mark}\\p{Enclosing_Mark}\\p{Surrogate}]', 'v'),
    emoji: new RegExp('^\\p{RGI_Emoji}$', 'v'),
  };
  return unicode;
}
const SPACING_MARK = /\p{Spacing_Mark}/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/gu;

/** Columns one grapheme takes: 0 (a lone combining mark, a zero-width joiner), 1, or 2 (wide, emoji). */
function graphemeWidth(segment: string): number {
  const rules = unicodeRules();
  const visible = segment.search(rules.visible);
  if (visible === -1) return 0;
  if (rules.emoji.test(segment) || /^[\d#*]\u20E3$/.test(segment)) return 2;
  if (segment.includes('\u200D') && (segment.match(PICTOGRAPHIC)?.length ?? 0) >= 2) return 2;
  const hangul = hangulJamoWidth(segment.slice(visible), rules.visible);
  if (hangul !== undefined) return hangul;
  const [first = '', ...rest] = Array.from(segment.slice(visible));
  // Spacing marks and halfwidth forms after the first character take columns of their own (ｶﾞ is two).
  const trailing = rest.filter((char) => SPACING_MARK.test(char) || (char >= '\uFF00' && char <= '\uFFEF'));
  return trailing.reduce<number>((sum, char) => sum + eastAsianWidth(char.codePointAt(0) ?? 0), eastAsianWidth(first.codePointAt(0) ?? 0));
}

const isLeadingJamo = (code: number): boolean => (code >= 0x1100 && code <= 0x115f) || (code >= 0xa960 && code <= 0xa97c);
const isVowelJamo = (code: number): boolean => (code >= 0x1160 && code <= 0x11a7) || (code >= 0xd7b0 && code <= 0xd7c6);
const isTrailingJamo = (code: number): boolean => (code >= 0x11a8 && code <= 0x11ff) || (code >= 0xd7cb && code <= 0xd7fb);

/**
 * Columns of a grapheme that starts with Hangul jamo (decomposed Korean, as macOS writes file names): each modern
 * leading + vowel (+ trailing) syllable block takes two, unmatched jamo add up, and what follows the jamo adds its own
 * width; undefined for any other grapheme. As string-width 8.3 measures them.
 */
function hangulJamoWidth(visibleSegment: string, visible: RegExp): number | undefined {
  const codes = Array.from(visibleSegment)
    .filter((char) => visible.test(char))
    .map((char) => char.codePointAt(0) ?? 0);
  let width = 0;
  for (let index = 0; index < codes.length; index++) {
    const code = codes[index] ?? 0;
    if (!isLeadingJamo(code) && !isVowelJamo(code) && !isTrailingJamo(code)) {
      if (width === 0) return undefined;
      return codes.slice(index).reduce((sum, rest) => sum + eastAsianWidth(rest), width);
    }
    if (isLeadingJamo(code) && isVowelJamo(codes[index + 1] ?? 0)) {
      width += 2;
      index += isTrailingJamo(codes[index + 2] ?? 0) ? 2 : 1;
    } else {
      width += eastAsianWidth(code);
    }
  }
  return codes.length === 0 ? undefined : width;
}

/** Columns the text takes on a terminal: East Asian wide characters and emoji take two, combining marks none. */
export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  let width = 0;
  for (const { segment } of unicodeRules().graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

/**
 * The text cut to at most `width` columns, ending with "…" when it was cut. It is cut between graphemes (a letter
 * with its combining marks, a whole emoji sequence), never inside one, so a wide character that does not fit
 * leaves a column short rather than half a character.
 */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (ASCII.test(text)) return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
  if (displayWidth(text) <= width) return text;
  let kept = '';
  let used = 0;
  for (const { segment } of unicodeRules().graphemes.segment(text)) {
    const columns = graphemeWidth(segment);
    if (used + columns > width - 1) break;
    kept += segment;
    used += columns;
  }
  return `${kept}…`;
}
