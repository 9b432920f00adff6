import { isObject, quickFailure, REFUSED } from '../api/quick.js';
import type { RawReply } from '../client/client.js';
import { exitCodeForStatus } from '../client/errors.js';
import { CliError, UsageError } from './errors.js';
import { readFileText } from './input.js';
import type { IO } from './io.js';
import { escapeControls, escapeJsonControls } from './text.js';
import { EXIT } from '../client/exit-codes.js';

/** What `kb api` was asked for, as parsed flags. */
export interface ApiRequestOptions {
  /** Relative to {url}/v1, with or without a leading slash; may carry a query string. */
  path: string;
  method?: string | undefined;
  /** -f: `key=value`, the value a string. `key[sub]=value` nests, `key[]=value` appends (for both kinds). */
  rawFields?: readonly string[];
  /** -F: `key=value`, the value typed (numbers, true/false, null), `@file` a file's text, `@-` stdin's. */
  typedFields?: readonly string[];
  /** A file to send as the body, or `-` for stdin. */
  input?: string | undefined;
  /** -H: `Name: value`, repeatable. */
  headers?: readonly string[];
}

/** Where `-` and `@-` read from: the command's IO. */
export type Stdin = Pick<IO, 'isStdinTTY' | 'readStdin'>;

export interface PreparedRequest {
  method: string;
  /** Relative to {url}/v1, with the query string the fields made, if any. */
  path: string;
  body?: string;
  /** From -H, names in lower case; absent without any. */
  headers?: Record<string, string>;
}

/** Headers kb sets itself: the token and the host of the deployment, and those of the connection that undici owns. */
const OWN_HEADERS: Record<string, string> = {
  authorization: 'kb sends the token of the profile in use (--profile, KB_TOKEN) itself',
  host: 'kb sends the host of the deployment in use (--profile, KB_URL) itself',
  'content-length': 'kb measures the body itself',
  'transfer-encoding': 'kb sends the body whole',
  connection: 'kb keeps its connections itself',
};
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** -H 'Name: value': a header to send, as curl and `gh api` take it; those kb sets itself are refused. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? text.trim() : text.slice(0, colon).trim();
  if (colon <= 0 || !HEADER_NAME.test(name)) {
    throw new UsageError(`Invalid header ${JSON.stringify(text)}: expected Name: value`, 'For example: -H "Accept-Language: en".');
  }
  const value = text.slice(colon + 1).trim();
  if (/[\r\n\0]/.test(value)) throw new UsageError(`Invalid header ${name}: its value holds a line break or NUL`);
  const own = OWN_HEADERS[name.toLowerCase()];
  if (own !== undefined) throw new UsageError(`-H ${name} is refused: ${own}`, 'Nothing was sent.');
  return [name.toLowerCase(), value];
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const FIELD_KEY = /^([^[\]=]+)((?:\[[^[\]]*\])*)$/;
const METHOD = /^[A-Za-z]+$/;

/** A -F field's value as JSON would have it: true, false, null and numbers are typed, anything else is a string. */
export function typedValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (JSON_NUMBER.test(text)) {
    const number = Number(text);
    // An integer beyond 2^53 would silently change; it stays the text it was.
    if (Number.isFinite(number) && (!/^-?\d+$/.test(text) || Number.isSafeInteger(number))) return number;
  }
  return text;
}

/** A field of `kb api`: its key (maybe nested, `data[description]`) and its value, typed or not. */
export interface Field {
  key: string;
  value: unknown;
}

function splitField(field: string): { key: string; value: string } {
  const at = field.indexOf('=');
  if (at <= 0) throw new UsageError(`Invalid field ${JSON.stringify(field)}: expected key=value`, 'For example: -f key=docs -F count=3.');
  return { key: field.slice(0, at), value: field.slice(at + 1) };
}

/** -f key=value: the value is a string, whatever it looks like. */
export function rawField(field: string): Field {
  return splitField(field);
}

/** -F key=value: true, false, null and numbers are JSON values; `@file` is the file's text and `@-` stdin's. */
export async function typedField(field: string, stdin: Stdin): Promise<Field> {
  const { key, value } = splitField(field);
  if (value.startsWith('@')) return { key, value: await readTextSource(stdin, value.slice(1), `-F ${key}`) };
  return { key, value: typedValue(value) };
}

/** The fields in the order `gh api` takes them: -f, then -F. */
export async function parseFields(rawFields: readonly string[], typedFields: readonly string[], stdin: Stdin): Promise<Field[]> {
  const typed: Field[] = [];
  for (const field of typedFields) typed.push(await typedField(field, stdin));
  return [...rawFields.map(rawField), ...typed];
}

type Container = Record<string, unknown> | unknown[];

/** Sets an own property, so that `__proto__` and the like are ordinary keys, never the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The JSON body the fields describe, as `gh api` builds it: `a[b]=1` is {"a":{"b":1}}, `a[]=1 -f a[]=2` is {"a":[1,2]}. */
export function fieldsToBody(fields: readonly Field[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const { key, value } of fields) {
    const match = FIELD_KEY.exec(key);
    if (!match) throw new UsageError(`Invalid field key ${JSON.stringify(key)}: expected name, name[sub] or name[]`);
    const steps = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((step) => step[1] as string)];
    let target: Container = body;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as string;
      const last = i === steps.length - 1;
      const nextIsAppend = !last && steps[i + 1] === '';
      if (step === '') {
        if (!Array.isArray(target)) throw new UsageError(`Invalid field key ${JSON.stringify(key)}: [] must follow a name`);
        if (!last) throw new UsageError(`Invalid field key ${JSON.stringify(key)}: [] must come last`);
        target.push(value);
        break;
      }
      if (Array.isArray(target)) throw new UsageError(`Invalid field key ${JSON.stringify(key)}: [] must come last`);
      if (last) {
        if (Object.hasOwn(target, step)) throw new UsageError(`Field ${JSON.stringify(key)} is given twice`);
        setOwn(target, step, value);
        break;
      }
      const existing = Object.hasOwn(target, step) ? target[step] : undefined;
      if (existing === undefined) {
        const created: Container = nextIsAppend ? [] : {};
        setOwn(target, step, created);
        target = created;
      } else if (nextIsAppend ? Array.isArray(existing) : isObject(existing)) {
        target = existing as Container;
      } else {
        throw new UsageError(`Field ${JSON.stringify(key)} conflicts with another field that sets ${JSON.stringify(steps.slice(0, i + 1).join('.'))}`);
      }
    }
  }
  return body;
}

function withQuery(path: string, fields: readonly Field[]): string {
  if (fields.length === 0) return path;
  const query = new URLSearchParams(fields.map(({ key, value }): [string, string] => [key, String(value)])).toString();
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

/**
 * The text of a file, or of stdin for `-`, as it is (not trimmed). A file that cannot be read, is too large or is not
 * UTF-8 is a usage error naming the flag it came from (src/cli/input.ts).
 */
export async function readTextSource(stdin: Stdin, source: string, flag: string): Promise<string> {
  if (source === '-') {
    if (stdin.isStdinTTY) throw new UsageError(`${flag} - reads stdin, but stdin is a terminal`, 'Pipe the content in, or give the path of a file.');
    return stdin.readStdin();
  }
  return readFileText(source, flag);
}

/** Percent-encodings (UTF-8, and IIS's `%uXXXX`) decoded once; a malformed one is left as it is. */
function decodeOnce(text: string): string {
  return text
    .replace(/%u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/(?:%[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
}

/**
 * Whether a path would climb out of /v1 once a server or a proxy resolved it: a segment that some server reads as `.`
 * or `..`, written plainly, percent-encoded once or more (`%2e%2e`, `%252e`), as `%u002e` or full-width dots (which
 * NFKC makes dots), with matrix parameters (`..;x`, which Tomcat and Jetty take for `..`) or a trailing NUL or blank,
 * or between backslashes, which some servers take for slashes.
 */
function leavesApiPrefix(path: string): boolean {
  let pathname = path.split(/[?#]/, 1)[0] ?? '';
  for (let round = 0; round < 8; round++) {
    const decoded = decodeOnce(pathname);
    if (decoded === pathname) break;
    pathname = decoded;
  }
  return pathname.split(/[/\\]/).some((segment) => {
    const core = segment.normalize('NFKC').split(';', 1)[0] ?? '';
    return /^\.{1,2}$/.test(core.replace(/[\s\0]+$/, ''));
  });
}

/** PATH as the API document writes it (`/v1/ns_list`): its /v1 is the deployment's base, sent once, as gh strips its own. */
function withoutApiBase(path: string): string {
  const relative = path.replace(/^\/?v1(?=[/?#]|$)/, '');
  return relative.startsWith('/') ? relative : `/${relative}`;
}

/**
 * The request `kb api` sends: GET, or POST when fields or input are given; fields make a JSON body, or the query
 * string for a GET (and beside --input, as `gh api` does).
 */
export async function prepareApiRequest(options: ApiRequestOptions, stdin: Stdin): Promise<PreparedRequest> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(options.path)) {
    throw new UsageError(`PATH is relative to the deployment's /v1, not a URL: ${options.path}`, 'For example: kb api ns_list. Pick the deployment with --profile or KB_URL.');
  }
  const path = withoutApiBase(options.path);
  if (leavesApiPrefix(path)) {
    throw new UsageError(
      `PATH must stay under the deployment's /v1: ${JSON.stringify(options.path)} has a . or .. segment`,
      'The token is sent with the request, so kb sends it only to the API. For example: kb api ns_list.',
    );
  }
  if (options.method !== undefined && !METHOD.test(options.method)) throw new UsageError(`Invalid method ${JSON.stringify(options.method)}`);
  if (options.input === '-' && (options.typedFields ?? []).some((field) => field.includes('=@-'))) {
    throw new UsageError('--input - and -F key=@- both read stdin', 'Read one of them from a file.');
  }
  const given = (options.headers ?? []).map(parseHeader);
  const headers = given.length === 0 ? {} : { headers: Object.fromEntries(given) };
  const fields = await parseFields(options.rawFields ?? [], options.typedFields ?? [], stdin);
  const hasPayload = fields.length > 0 || options.input !== undefined;
  const method = options.method?.toUpperCase() ?? (hasPayload ? 'POST' : 'GET');
  if (options.input !== undefined) {
    return { method, path: withQuery(path, fields), body: await readTextSource(stdin, options.input, '--input'), ...headers };
  }
  if (fields.length === 0) return { method, path, ...headers };
  if (method === 'GET' || method === 'HEAD') return { method, path: withQuery(path, fields), ...headers };
  return { method, path, body: JSON.stringify(fieldsToBody(fields)), ...headers };
}

/**
 * The reply as `kb api` prints it: JSON indented on a terminal, one line when piped; anything else as it came. On a
 * terminal, what would drive or reorder it is escaped (as `\uXXXX` in JSON, the same value).
 */
export function renderReply(reply: Pick<RawReply, 'text'>, pretty: boolean): string {
  if (reply.text === '') return '';
  let value: unknown;
  try {
    value = JSON.parse(reply.text);
  } catch {
    // Not JSON (a proxy's HTML page, plain text): to a terminal, with its control characters escaped.
    const text = pretty ? escapeControls(reply.text, { keepLayout: true }) : reply.text;
    return text.endsWith('\n') ? text : `${text}\n`;
  }
  return `${pretty ? escapeJsonControls(JSON.stringify(value, null, 2)) : JSON.stringify(value)}\n`;
}

/** `HTTP-Name` for `http-name`, as headers are usually written. */
function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

/**
 * `kb api -i`: the status line and the headers, sorted by name, before the body (as `gh api -i`); a server's words
 * have their control characters escaped on a terminal.
 */
export function renderHead(reply: Pick<RawReply, 'status' | 'headers'>, terminal: boolean, reasons: Readonly<Record<number, string | undefined>>): string {
  const show = (text: string) => (terminal ? escapeControls(text) : text);
  const lines = [`HTTP/1.1 ${reply.status} ${reasons[reply.status] ?? ''}`.trimEnd()];
  for (const name of Object.keys(reply.headers ?? {}).sort()) {
    const value = reply.headers?.[name];
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) lines.push(`${headerCase(name)}: ${show(one)}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** The error a reply other than 2xx ends `kb api` with: the envelope's message and help, the exit code of its status. */
export function replyFailure(reply: RawReply, hasToken: boolean): CliError | undefined {
  if (reply.status >= 200 && reply.status < 300) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.text);
  } catch {
    parsed = undefined;
  }
  const failure = quickFailure(parsed);
  const envelope = failure === REFUSED ? undefined : failure;
  const message = envelope ? `${escapeControls(envelope.message)} (HTTP ${reply.status})` : `${reply.url} answered HTTP ${reply.status}`;
  // A server's help is one line, as its message: a newline in it is shown, not followed.
  let help = envelope?.help ? escapeControls(envelope.help) : undefined;
  if (reply.status === 401 && !hasToken) help = 'No token is configured for this deployment: run `kb auth login`, or set KB_TOKEN.';
  return new CliError(message, reply.status >= 400 ? exitCodeForStatus(reply.status) : EXIT.failure, help, reply.requestId);
}
