/**
 * A request's line in the JSON log, the one line every request pays for: the bytes pino writes for
 * `pino.child({ reqId }).info({ method, path, status, ms }, 'request')` with kb serve's options (level, time, the
 * request id, the fields in that order, msg), made without pino working them out field by field.
 *
 * To the log's buffer it is written byte by byte (`RequestLineBytes`): the request id and the path are copied a
 * character at a time as they are checked, the fixed parts from bytes made once (the start once a millisecond, the
 * part after the path once a status), the duration from its few characters (`hundredths`); the line itself is never
 * made as a string, joined, flattened and encoded. That takes about 200 ns a line in a loop of its own where the
 * string took 430, and kb serve at info 0.4 to 1.2 µs of CPU a request less, side by side (docs/performance.md). A
 * text that is not plain (anything but printable ASCII, a quote, a backslash: rare in an id or a path) or a method of
 * its own takes the string (`requestLineText`), escaped as JSON.stringify escapes, and its bytes as UTF-8.
 */

/** The line's start up to the time, and from the time to the request id's first character. */
const BEFORE_TIME = '{"level":"info","time":';
const BEFORE_ID = ',"reqId":"';
const LINE_END = Buffer.from(',"msg":"request"}\n', 'latin1');
const QUOTE = 0x22;

/** The method's field of a request line, for the methods routes answer: made once, not for every request. */
const METHOD_FIELDS = new Map(['GET', 'HEAD', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'].map((method) => [method, `,"method":${JSON.stringify(method)}`]));
/** The bytes from the request id's closing quote to the path's first character, for each of those methods and for none. */
const AFTER_ID = new Map<string | undefined, Buffer>([...METHOD_FIELDS, [undefined, '']].map(([method, field]) => [method, Buffer.from(`"${field},"path":"`, 'latin1')]));
/** The largest status whose bytes, from the path's closing quote to the milliseconds (`","status":404,"ms":`), are kept. */
const MOST_STATUS = 999;
/** The most bytes of a line besides its request id and path: the fixed parts, the longest method, time, status and ms. */
const MOST_BESIDES_TEXTS = 160;

/** The largest count of hundredths written from its parts: below it, the hundredths' decimal is the number's shortest. */
const MOST_HUNDREDTHS = 2 ** 30 - 1;

/** What JSON.stringify escapes in a string: a quote, a backslash, a control character, a surrogate (lone or not). */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON text, exactly as JSON.stringify writes it: a request id, a path and a method need no escape almost
 * always, and then are only quoted (JSON.stringify would also look at each character, and flatten the text first).
 */
function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * `Math.round(ms * 100) / 100` as JSON writes it (the shortest digits that read back as that number; null if it is not
 * finite), from its whole hundredths: their two parts' digits, where printing the fraction would work out a double's
 * shortest digits. Past some 120 days, or below zero, as JSON writes it.
 */
export function hundredths(ms: number): string {
  const count = Math.round(ms * 100);
  if (!(count >= 0 && count <= MOST_HUNDREDTHS)) return JSON.stringify(Math.round(ms * 100) / 100);
  const whole = Math.floor(count / 100);
  const part = count - whole * 100;
  if (part === 0) return `${whole}`;
  if (part % 10 === 0) return `${whole}.${part / 10}`;
  return part < 10 ? `${whole}.0${part}` : `${whole}.${part}`;
}

/**
 * The line as a string, for any texts and numbers (a field pino would leave out, as a method may be, is left out; a
 * number that is not finite is null), `path` already redacted. JSON.stringify quotes a string as pino's does, or
 * escapes more (a lone surrogate: pino before Node 25 leaves it as it is, which UTF-8 cannot hold), never differently
 * for a JSON reader.
 */
export function requestLineText(time: number, reqId: string, method: string | undefined, path: string, status: number, elapsedMs: number): string {
  const methodField = method === undefined ? '' : (METHOD_FIELDS.get(method) ?? `,"method":${JSON.stringify(method)}`);
  return `${BEFORE_TIME}${time},"reqId":${jsonString(reqId)}${methodField},"path":${jsonString(path)},"status":${JSON.stringify(status)},"ms":${hundredths(elapsedMs)},"msg":"request"}\n`;
}

/** Copies `bytes` into `into` at `at`; returns where they end. */
function putBytes(into: Buffer, at: number, bytes: Uint8Array): number {
  into.set(bytes, at);
  return at + bytes.length;
}

/**
 * Copies a text into `into` at `at`, a byte a character, if it is plain: printable ASCII without a quote or a
 * backslash, so that it is its own JSON string's inside and its own UTF-8. Returns where it ends, or -1 if it is not.
 */
function putPlain(into: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === QUOTE || code === 0x5c) return -1;
    into[at + i] = code;
  }
  return at + text.length;
}

/** Request lines written byte by byte into a buffer (the log's batch), with the line's start made once a millisecond. */
export class RequestLineBytes {
  #time = Number.NaN;
  #start: Uint8Array = Buffer.alloc(0);
  /** For each status met, the bytes from the path's closing quote to the milliseconds. */
  readonly #statuses: (Uint8Array | undefined)[] = [];

  /** The most bytes the line of a request with these texts takes. */
  static most(reqId: string, path: string): number {
    return MOST_BESIDES_TEXTS + reqId.length + path.length;
  }

  /**
   * Writes the line into `into` at `at`, which has room for `most(reqId, path)` bytes; returns where it ends, or -1 if
   * it holds what is written as a string (`requestLineText`), and then nothing written counts.
   */
  put(into: Buffer, at: number, time: number, reqId: string, method: string | undefined, path: string, status: number, elapsedMs: number): number {
    const afterId = AFTER_ID.get(method);
    if (afterId === undefined || !(Number.isInteger(status) && status >= 0 && status <= MOST_STATUS)) return -1;
    if (time !== this.#time) {
      this.#time = time;
      this.#start = Buffer.from(`${BEFORE_TIME}${time}${BEFORE_ID}`, 'latin1');
    }
    const afterPath = (this.#statuses[status] ??= Buffer.from(`","status":${status},"ms":`, 'latin1'));
    let end = putPlain(into, putBytes(into, at, this.#start), reqId);
    if (end < 0) return -1;
    end = putPlain(into, putBytes(into, end, afterId), path);
    if (end < 0) return -1;
    // The duration's few characters are always plain (digits, a dot; `null`, or an exponent, past its range).
    end = putPlain(into, putBytes(into, end, afterPath), hundredths(elapsedMs));
    return putBytes(into, end, LINE_END);
  }
}
