/**
 * Characters of a server's text that must not reach a terminal as they are: they would move the cursor, recolour or
 * retitle the terminal, or reorder what it shows (a bidi override makes `exe.txt` read `txt.exe`), or they show as
 * nothing at all (a zero-width space makes `do\u200bcs` look like `docs`). The CLI and the TUI show them alike, as
 * visible escapes.
 */

/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const code = char.codePointAt(0) as number;
  if (NAMED[char] !== undefined) return NAMED[char];
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** As JSON writes a character: `\\uXXXX`, a surrogate pair beyond the BMP. */
function jsonEscape(char: string): string {
  let escaped = '';
  for (let index = 0; index < char.length; index++) escaped += `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`;
  return escaped;
}

/**
 * What a terminal draws as nothing: the default-ignorable code points (zero-width space and joiners, word joiner, soft
 * hyphen, BOM, variation selectors, tag characters, Hangul fillers...), the line and paragraph separators, and the
 * interlinear annotation marks.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u2028\u2029\uFFF9-\uFFFB]/u;
const VARIATION_OR_FILLER = /^[\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u115F\u1160]$/u;
const JOINER = /^[\u200C\u200D]$/;
/** A letter or mark that a joiner may shape, in scripts that need them (Arabic, Indic): none of ASCII. */
const JOINABLE = /^[^\0-\x7F]$/u;
const LETTER_OR_MARK = /^[\p{L}\p{M}]$/u;

// Made on first use, and only for text that holds an invisible character (see src/text/width.ts for why lazily).
let rules: { graphemes: Intl.Segmenter; emoji: RegExp } | undefined;
function emojiRules(): NonNullable<typeof rules> {
  rules ??= { graphemes: new Intl.Segmenter(), emoji: new RegExp('^\\p{RGI_Emoji}$', 'v') };
  return rules;
}

function isJoinable(char: string | undefined): boolean {
  return char !== undefined && JOINABLE.test(char) && LETTER_OR_MARK.test(char);
}

/**
 * Invisible characters written with `escape`, but those a terminal draws as part of something visible: inside an
 * emoji (👨‍👩‍👧, ❤️, a flag of tag characters), a variation selector after a character that is not ASCII (↔︎, an
 * ideographic variant), a joiner between two letters of a script that shapes with it (Persian's non-joiner).
 */
function escapeInvisible(text: string, escape: (char: string) => string): string {
  if (!INVISIBLE.test(text)) return text;
  const { graphemes, emoji } = emojiRules();
  const chars = Array.from(text);
  let out = '';
  let index = 0;
  for (const { segment } of graphemes.segment(text)) {
    const length = Array.from(segment).length;
    if (!INVISIBLE.test(segment) || emoji.test(segment)) {
      out += segment;
      index += length;
      continue;
    }
    const first = chars[index] as string;
    for (let end = index + length; index < end; index++) {
      const char = chars[index] as string;
      const drawn =
        !INVISIBLE.test(char) ||
        (VARIATION_OR_FILLER.test(char) && index > 0 && JOINABLE.test(first) && !INVISIBLE.test(first)) ||
        (JOINER.test(char) && isJoinable(chars[index - 1]) && isJoinable(chars[index + 1]));
      out += drawn ? char : escape(char);
    }
  }
  return out;
}

/**
 * Control characters as visible escapes (`\x1b`, `\n`, `\u202e`); everything else as it is. `keepLayout` keeps newlines and
 * tabs, for kb's (and oclif's) own messages, which are laid out with them; `layoutAsSpace` makes them spaces, for one
 * line of a list.
 */
export function escapeControls(text: string, options: { keepLayout?: boolean; layoutAsSpace?: boolean } = {}): string {
  const escaped = text.replace(UNSAFE, (char) => {
    const layout = char === '\n' || char === '\t' || char === '\r';
    if (layout && options.layoutAsSpace) return ' ';
    return options.keepLayout && (char === '\n' || char === '\t') ? char : escapeOne(char);
  });
  return escapeInvisible(escaped, escapeOne);
}

/** What JSON.stringify leaves as it is of UNSAFE: DEL, the C1 controls and the bidi characters. */
const UNSAFE_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** Whether text holds a character that JSON.stringify (or YAML) would leave to drive or reorder a terminal, or to hide. */
export function hasJsonUnsafe(text: string): boolean {
  return text.search(UNSAFE_IN_JSON) !== -1 || escapeInvisible(text, jsonEscape) !== text;
}

/**
 * JSON text (as JSON.stringify writes it) with the characters that would drive or reorder a terminal, or that it
 * would draw as nothing, written as `\uXXXX` escapes: the same JSON value, byte for byte different only where a
 * terminal would have been fooled. Outside strings JSON has none of them, so escaping them anywhere is escaping them
 * within strings.
 */
export function escapeJsonControls(json: string): string {
  return escapeInvisible(json.replace(UNSAFE_IN_JSON, jsonEscape), jsonEscape);
}
