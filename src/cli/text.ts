/**
 * Text from a server, made safe and measured for a terminal. Escaping keeps a key or description from moving the
 * cursor, recolouring or retitling the terminal, or reordering what it shows; display width is what a terminal
 * gives a string, so columns line up around wide characters, emoji and combining marks.
 */

/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const code = char.codePointAt(0) as number;
  return NAMED[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * Control characters as visible escapes (`\x1b`, `\n`, `\u202e`); everything else as it is. `keepLayout` keeps newlines and
 * tabs, for kb's (and oclif's) own messages, which are laid out with them.
 */
export function escapeControls(text: string, options: { keepLayout?: boolean } = {}): string {
  return text.replace(UNSAFE, (char) => (options.keepLayout && (char === '\n' || char === '\t') ? char : escapeOne(char)));
}

/** Takes no column of its own: combining marks, joiners, variation selectors, tags, skin-tone modifiers. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}\u{1F3FB}-\u{1F3FF}]$/u;
/** East Asian Wide and Fullwidth (Hangul, CJK, kana, fullwidth forms), and emoji shown as emoji by default. */
const WIDE =
  /^[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uA960-\uA97F\uAC00-\uD7A3\uF900-\uFAFF\uFE10-\uFE19\uFE30-\uFE6F\uFF00-\uFF60\uFFE0-\uFFE6\u{1B000}-\u{1B2FF}\u{1F200}-\u{1F2FF}\u{20000}-\u{3FFFD}\p{Emoji_Presentation}]$/u;
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const REGIONAL_INDICATOR = /^[\u{1F1E6}-\u{1F1FF}]$/u;
const ZWJ = '\u200D';
const EMOJI_PRESENTATION_SELECTOR = '\uFE0F';

interface Cluster {
  text: string;
  width: number;
}

/**
 * The text as the terminal cells it fills: each cluster is a base character with what attaches to it (marks,
 * a second regional indicator, whatever follows a zero-width joiner), so a cut never splits one.
 */
function clusters(text: string): Cluster[] {
  const result: Cluster[] = [];
  let joined = false;
  for (const char of text) {
    const last = result[result.length - 1];
    if (last !== undefined && (joined || ZERO_WIDTH.test(char))) {
      last.text += char;
      // A text-style pictograph followed by the emoji selector (❤️) is shown as a two-column emoji.
      if (char === EMOJI_PRESENTATION_SELECTOR && last.width === 1 && PICTOGRAPHIC.test(last.text.slice(0, 1))) last.width = 2;
      joined = char === ZWJ;
      continue;
    }
    joined = false;
    // Two regional indicators are one flag.
    if (last !== undefined && REGIONAL_INDICATOR.test(char) && [...last.text].length === 1 && REGIONAL_INDICATOR.test(last.text)) {
      last.text += char;
      continue;
    }
    result.push({ text: char, width: ZERO_WIDTH.test(char) ? 0 : WIDE.test(char) ? 2 : 1 });
  }
  return result;
}

/** The number of terminal columns the text takes (after escaping: control characters are not measured). */
export function displayWidth(text: string): number {
  // Printable ASCII, the usual case, is one column a character.
  if (/^[\x20-\x7E]*$/.test(text)) return text.length;
  return clusters(text).reduce((sum, cluster) => sum + cluster.width, 0);
}

/** The text cut to at most `width` columns, ending in `…` where it was cut. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let used = 0;
  let kept = '';
  for (const cluster of clusters(text)) {
    if (used + cluster.width > width - 1) break;
    kept += cluster.text;
    used += cluster.width;
  }
  return `${kept}…`;
}

/** The text padded with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
