/**
 * A fast reader of resources files, for the files `kb export` writes and those written like them: JSON, and the
 * block YAML of plain maps, lists and one-line scalars. It makes plain values and keeps no parse tree; where a
 * problem needs a line and column, `locate` reads the text once more and notes the places of the paths asked for.
 * A text beyond what it reads (anchors, tags, block or multi-line scalars, flow collections other than [] and {},
 * a duplicate key, a syntax error) makes it answer undefined, and the full YAML parser reads the file instead, with
 * its own messages: this reader gives the same values as that parser, or none.
 */

/** A path into the file's value, as zod reports it. */
export type Path = readonly PropertyKey[];

/** Where the nodes at some paths are, by `pathId`: their first character, the end of a scalar, and a map's keys. */
export interface Places {
  nodes: Map<string, { start: number; end: number }>;
  /** The key of the pair whose value is at this path. */
  keys: Map<string, number>;
}

export interface FastRead {
  value: unknown;
  /** The places of the nodes at these paths and of their ancestors. */
  locate(paths: readonly Path[]): Places;
}

export function pathId(path: Path): string {
  return path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${String(step)}`)).join('');
}

/** Answered when the text is beyond this reader. */
class Beyond extends Error {}

function beyond(): never {
  throw new Beyond();
}

/** What `locate` wants noted: the ids of the paths asked for and of their ancestors, and where to note them. */
interface Recorder {
  wanted: Set<string>;
  places: Places;
}

function recorder(paths: readonly Path[]): Recorder {
  const wanted = new Set<string>();
  for (const path of paths) for (let length = 0; length <= path.length; length++) wanted.add(pathId(path.slice(0, length)));
  return { wanted, places: { nodes: new Map(), keys: new Map() } };
}

export function readResourcesText(text: string): FastRead | undefined {
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return undefined;
  try {
    if (first === '{' || first === '[') {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return undefined;
      }
      // A key given twice: JSON.parse keeps the last, YAML (and kb) call it an error.
      new JsonScanner(text).scan();
      return {
        value,
        locate: (paths) => {
          const record = recorder(paths);
          new JsonScanner(text, record).scan();
          return record.places;
        },
      };
    }
    const value = new YamlReader(text).read();
    return {
      value,
      locate: (paths) => {
        const record = recorder(paths);
        new YamlReader(text, record).read();
        return record.places;
      },
    };
  } catch (error) {
    // Nesting too deep for the stack is left to the full parser too, which says what it makes of it.
    if (error instanceof Beyond || error instanceof RangeError) return undefined;
    throw error;
  }
}

/**
 * Walks JSON that JSON.parse has taken, to find a key given twice in an object and, for `locate`, the places of nodes.
 */
class JsonScanner {
  #at = 0;

  constructor(
    private readonly text: string,
    private readonly record?: Recorder,
  ) {}

  scan(): void {
    this.#value('');
  }

  #space(): void {
    const { text } = this;
    let at = this.#at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
      else break;
    }
    this.#at = at;
  }

  /** The end of the string that starts at `at` (its closing quote + 1). */
  #stringEnd(at: number): number {
    const { text } = this;
    let i = at + 1;
    for (;;) {
      const quote = text.indexOf('"', i);
      if (quote < 0) beyond();
      let slashes = 0;
      while (text.charCodeAt(quote - 1 - slashes) === 0x5c) slashes++;
      if (slashes % 2 === 0) return quote + 1;
      i = quote + 1;
    }
  }

  #note(id: string, start: number, end: number): void {
    if (this.record?.wanted.has(id)) this.record.places.nodes.set(id, { start, end });
  }

  #value(id: string): void {
    this.#space();
    const { text } = this;
    const start = this.#at;
    const c = text[start];
    if (c === '{') {
      this.#note(id, start, start + 1);
      this.#at++;
      const keys = new Set<string>();
      this.#space();
      if (text[this.#at] === '}') {
        this.#at++;
        return;
      }
      for (;;) {
        this.#space();
        const keyStart = this.#at;
        const keyEnd = this.#stringEnd(keyStart);
        const raw = text.slice(keyStart + 1, keyEnd - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(keyStart, keyEnd)) as string) : raw;
        if (keys.has(key)) beyond();
        keys.add(key);
        const child = `${id}.${key}`;
        if (this.record?.wanted.has(child)) this.record.places.keys.set(child, keyStart);
        this.#at = keyEnd;
        this.#space();
        this.#at++; // the colon
        this.#value(child);
        this.#space();
        if (text[this.#at++] === '}') return;
      }
    }
    if (c === '[') {
      this.#note(id, start, start + 1);
      this.#at++;
      this.#space();
      if (text[this.#at] === ']') {
        this.#at++;
        return;
      }
      for (let index = 0; ; index++) {
        this.#value(`${id}[${index}]`);
        this.#space();
        if (text[this.#at++] === ']') return;
      }
    }
    const end = c === '"' ? this.#stringEnd(start) : scalarEnd(text, start);
    this.#note(id, start, end);
    this.#at = end;
  }
}

/** The end of a JSON number, true, false or null. */
function scalarEnd(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c) || c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return i;
    i++;
  }
}

// The YAML 1.2 core schema's plain scalars other than strings, as the `yaml` package resolves them.
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const INT_OCT = /^0o[0-7]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** Where a plain scalar can be other than a string: empty, or starting with a digit, + - . ~ n N t T f F. */
const MAYBE_NOT_STRING = /^(?:$|[-+.~0-9nNtTfF])/;

/** Whether a plain scalar with this text is read as something other than a string. */
export function isPlainNonString(text: string): boolean {
  if (!MAYBE_NOT_STRING.test(text)) return false;
  return NULL.test(text) || BOOL.test(text) || INT.test(text) || INT_OCT.test(text) || INT_HEX.test(text) || FLOAT_NAN.test(text) || FLOAT.test(text);
}

/** The words that keyEnd takes and YAML reads as null or a boolean. */
const NOT_STRING_WORDS = new Set(['null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE']);

function resolvePlain(text: string): unknown {
  if (!MAYBE_NOT_STRING.test(text)) return text;
  if (NULL.test(text)) return null;
  if (BOOL.test(text)) return text[0] === 't' || text[0] === 'T';
  if (INT.test(text)) return parseInt(text, 10);
  if (INT_OCT.test(text)) return parseInt(text.slice(2), 8);
  if (INT_HEX.test(text)) return parseInt(text.slice(2), 16);
  if (FLOAT_NAN.test(text)) return text.slice(-3).toLowerCase() === 'nan' ? NaN : text[0] === '-' ? -Infinity : Infinity;
  if (FLOAT.test(text)) return parseFloat(text);
  return text;
}

/**
 * The end (the colon) of the key that starts at `at`, or -1: a key this reader takes is a plain word of letters,
 * digits, _ and - (not starting with a digit or -), then a colon and a space or the end of the line. (A loop, not a
 * regular expression: this runs for every line of a file.)
 */
function keyEnd(text: string, at: number): number {
  let i = at;
  let c = text.charCodeAt(i);
  if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f)) return -1;
  for (;;) {
    c = text.charCodeAt(++i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d) continue;
    if (c !== 0x3a) return -1;
    const after = text.charCodeAt(i + 1);
    return after === 0x20 || after === 0x0a || Number.isNaN(after) ? i : -1;
  }
}
const DOUBLE_QUOTED = /"(?:[^"\\]|\\.)*"/y;
const SINGLE_QUOTED = /'(?:[^']|'')*'/y;
/** Characters no file of this reader holds (the full parser decides what they mean): tabs, CR, controls, a BOM. */
// eslint-disable-next-line no-control-regex
const REFUSED = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\uFEFF]/;
/** What a plain scalar may not start with (`-`, `?` and `:` may when followed by a non-space). */
const INDICATOR = /^[,[\]{}#&*!|>'"%@`]|^[-?:](?: |$)/;

/**
 * The block YAML subset. Lines are read one at a time: `#line` is the current line, from `#start` (the first
 * character after the indentation, or after a `- ` read on it) to `#end`.
 */
class YamlReader {
  #lineStart = 0;
  #start = 0;
  #end = 0;
  #indent = 0;
  #next = 0;
  #done = false;

  constructor(
    private readonly text: string,
    private readonly record?: Recorder,
  ) {}

  read(): unknown {
    if (REFUSED.test(this.text)) beyond();
    this.#advance();
    if (this.#done) beyond();
    const value = this.#node(this.#indent, this.record === undefined ? undefined : '');
    if (!this.#done) beyond();
    return value;
  }

  /** Moves to the next line that is neither blank nor a comment. */
  #advance(): void {
    const { text } = this;
    while (this.#next <= text.length) {
      const lineStart = this.#next;
      let end = text.indexOf('\n', lineStart);
      if (end < 0) end = text.length;
      this.#next = end + 1;
      let start = lineStart;
      while (text.charCodeAt(start) === 0x20) start++;
      if (start === end || text[start] === '#') continue;
      if (text.startsWith('---', lineStart) || text.startsWith('...', lineStart) || text[lineStart] === '%') beyond();
      this.#lineStart = lineStart;
      this.#start = start;
      this.#end = end;
      this.#indent = start - lineStart;
      return;
    }
    this.#done = true;
  }

  #note(id: string | undefined, start: number, end: number): void {
    if (id !== undefined && this.record?.wanted.has(id)) this.record.places.nodes.set(id, { start, end });
  }

  /** The id of a child node, only when places are being noted (ids cost time and memory otherwise). */
  #child(id: string | undefined, step: string): string | undefined {
    return this.record === undefined ? undefined : `${id ?? ''}${step}`;
  }

  #isItem(): boolean {
    const c = this.text.charCodeAt(this.#start + 1);
    return this.text[this.#start] === '-' && (c === 0x20 || this.#start + 1 === this.#end);
  }

  /** The node that starts at the current line, which is indented by `indent`. */
  #node(indent: number, id: string | undefined): unknown {
    if (this.#isItem()) return this.#list(indent, id);
    if (keyEnd(this.text, this.#start) >= 0) return this.#map(indent, id);
    return beyond();
  }

  #list(indent: number, id: string | undefined): unknown[] {
    this.#note(id, this.#start, this.#start);
    const list: unknown[] = [];
    while (!this.#done && this.#indent === indent && this.#isItem()) {
      const itemId = this.#child(id, `[${list.length}]`);
      let start = this.#start + 1;
      while (this.text.charCodeAt(start) === 0x20) start++;
      if (start === this.#end || this.text[start] === '#') {
        list.push(this.#nested(indent, itemId, start, false));
        continue;
      }
      // The rest of the line is read as a line of its own, indented to where it starts.
      this.#indent = start - this.#lineStart;
      this.#start = start;
      if (keyEnd(this.text, start) >= 0) list.push(this.#map(this.#indent, itemId));
      else if (this.#isItem()) beyond();
      else list.push(this.#inline(start, itemId, indent));
    }
    if (!this.#done && this.#indent > indent) beyond();
    return list;
  }

  #map(indent: number, id: string | undefined): Record<string, unknown> {
    this.#note(id, this.#start, this.#start);
    const map: Record<string, unknown> = {};
    const { text } = this;
    while (!this.#done && this.#indent === indent) {
      const colon = keyEnd(text, this.#start);
      if (colon < 0) beyond();
      const key = text.slice(this.#start, colon);
      if (key === '__proto__' || NOT_STRING_WORDS.has(key) || Object.hasOwn(map, key)) beyond();
      const keyId = this.#child(id, `.${key}`);
      if (keyId !== undefined && this.record?.wanted.has(keyId)) this.record.places.keys.set(keyId, this.#start);
      let start = colon + 1;
      while (text.charCodeAt(start) === 0x20) start++;
      map[key] = start === this.#end || text[start] === '#' ? this.#nested(indent, keyId, start, true) : this.#inline(start, keyId, indent);
    }
    if (!this.#done && this.#indent > indent) beyond();
    return map;
  }

  /**
   * The value of a key or item with nothing after it on its line: the node on the lines below, more indented (or
   * a list at the key's own indentation), or null.
   */
  #nested(indent: number, id: string | undefined, emptyAt: number, ofKey: boolean): unknown {
    this.#advance();
    if (!this.#done && (this.#indent > indent || (ofKey && this.#indent === indent && this.#isItem()))) return this.#node(this.#indent, id);
    this.#note(id, emptyAt, emptyAt);
    return null;
  }

  /** A scalar (or [] or {}) from `start` to the end of the line; the next line must not go on with it. */
  #inline(start: number, id: string | undefined, indent: number): unknown {
    const { text } = this;
    const end = this.#end;
    let value: unknown;
    let valueEnd: number;
    const c = text[start];
    if (c === '"' || c === "'") {
      const pattern = c === '"' ? DOUBLE_QUOTED : SINGLE_QUOTED;
      pattern.lastIndex = start;
      if (!pattern.test(text) || pattern.lastIndex > end) beyond();
      valueEnd = pattern.lastIndex;
      const quoted = text.slice(start, valueEnd);
      if (c === "'") value = quoted.slice(1, -1).replaceAll("''", "'");
      else {
        try {
          // JSON's escapes are a subset of YAML's, with the same meanings; YAML's others are left to the full parser.
          value = JSON.parse(quoted);
        } catch {
          beyond();
        }
      }
    } else if (c === '[' || c === '{') {
      valueEnd = start + 2;
      if (text[start + 1] !== (c === '[' ? ']' : '}')) beyond();
      value = c === '[' ? [] : {};
    } else {
      let plain = text.slice(start, end);
      const comment = plain.indexOf(' #');
      if (comment >= 0) plain = plain.slice(0, comment);
      plain = plain.trimEnd();
      if (INDICATOR.test(plain) || plain.includes(': ') || plain.endsWith(':')) beyond();
      valueEnd = start + plain.length;
      value = resolvePlain(plain);
    }
    // After the value: spaces, and a comment.
    let after = valueEnd;
    while (text.charCodeAt(after) === 0x20) after++;
    if (after !== end && !(text[after] === '#' && after > valueEnd)) beyond();
    this.#note(id, start, valueEnd);
    this.#advance();
    // A line indented more would go on with a plain scalar, or be an error: either way, for the full parser.
    if (!this.#done && this.#indent > indent) beyond();
    return value;
  }
}
