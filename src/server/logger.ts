import { randomBytes } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type BaseLogger, type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './log.js';
import { TOKEN_PREFIX, TOKEN_SECRET_LENGTH } from './tokens.js';

/**
 * The server's log: a pino logger writing the lines Fastify's logger would (Fastify's own is off: RequestLog), one
 * line per request (time, level, request id, method, path, status, duration), written to stderr through pino's
 * destination, asynchronously to anything but a file, so a request never waits for a reader.
 * kb serve's own lines go through the same destination: it is the one writer of stderr, so that no line is ever
 * spliced into another, and in JSON mode every line is one JSON object (docs/contract.md, Logging).
 */
export interface ServerLogger {
  /**
   * The log's pino logger, at the requests' level: each request's line is written through it (`requestFields`), and so
   * is any other line about a request, which carries the request's `reqId` first of its fields.
   */
  readonly pino: Logger;
  /**
   * kb serve's own lines (listening, profiles, signals, stopped), in the same format and stream as the requests',
   * written at any --log-level: --log-level chooses which requests are logged, not whether the server says it listens.
   */
  readonly events: BaseLogger;
  /**
   * Writes out every line the asynchronous destination still holds, then stops it: call it last, once the server has
   * closed. It waits for a write in flight, which flushSync() would leave behind, to be cut by an exit that follows;
   * with `waitMs`, for that long at most (an exit that cannot wait for a reader that stopped reading). Lines logged
   * after it are dropped.
   */
  close(options?: { waitMs?: number }): Promise<void>;
  /**
   * Says how many lines were dropped for a reader that fell behind, if any have been and it has not been said yet: the
   * log says it by itself once the reader catches up; kb serve calls it before its last line.
   */
  sayDropped(): void;
}

export interface LoggerOptions {
  /** pretty or json; by default pretty when stderr is a terminal, else json. */
  format?: LogFormat;
  /** Where lines go instead of stderr, one call per line without its newline (for tests). */
  sink?: (line: string) => void;
}

/**
 * Text shaped like a token (tokens.ts: the prefix and 43 base64url characters), as it may be typed into a path or a
 * query string, percent-encoded or not: the prefix with what follows it, or a run as long as a token's secret. A key as
 * long (43 characters or more) is redacted too, which costs a log reader little.
 */
const TOKEN_TEXT = new RegExp(`${TOKEN_PREFIX.slice(0, -1)}(?:_|%5f)(?:[\\w-]|%[0-9a-f]{2})*|(?:[\\w-]|%[0-9a-f]{2}){${TOKEN_SECRET_LENGTH},}`, 'gi');

export const REDACTED = '[REDACTED]';

/** The token prefix's first letter, lower case. */
const PREFIX_LETTER = TOKEN_PREFIX.toLowerCase().charCodeAt(0);

/** Whether a text holds the token prefix's first letter, in either case: a short text must, to hold a token. */
function holdsPrefixLetter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if ((text.charCodeAt(i) | 0x20) === PREFIX_LETTER) return true;
  return false;
}

/** The text with anything token-shaped replaced, for a log line. */
export function redactTokens(text: string): string {
  // Most paths are short and name no token: they skip the scan, which every request's line would pay, and the
  // prefix's letter is looked for without a regular expression (a call to one costs more than a path's characters).
  if (text.length < TOKEN_SECRET_LENGTH && !holdsPrefixLetter(text)) return text;
  return text.replace(TOKEN_TEXT, REDACTED);
}

function tokenShaped(text: string): boolean {
  // search(), unlike test(), neither reads nor moves a global pattern's lastIndex.
  return text.search(TOKEN_TEXT) !== -1;
}

/** A request id a client may choose (docs/contract.md, Logging: 1 to 128 visible ASCII characters), so its own logs meet ours. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Request ids for fastify's `genReqId`: the client's X-Request-Id when it is valid (and not token-shaped: it is logged
 * and echoed), else this app's prefix and a counter, unique across restarts without costing a random draw a request.
 */
export function requestIds(): (request?: IncomingMessage) => string {
  const prefix = randomBytes(4).toString('hex');
  let next = 0;
  return (request) => {
    const given = request?.headers[REQUEST_ID_HEADER];
    if (typeof given === 'string' && CLIENT_REQUEST_ID.test(given) && !tokenShaped(given)) return given;
    next = (next + 1) % Number.MAX_SAFE_INTEGER;
    return `${prefix}-${next.toString(36)}`;
  };
}

/** The fields of a request's line, its request id first, as pino writes them after `level` and `time`. */
export interface RequestFields {
  reqId: string;
  method: string | undefined;
  path: string;
  status: number;
  ms: number;
}

/**
 * The fields of a request's line (`pino.info(requestFields(...), 'request')`), as every path that answers a request
 * logs it: the path with anything token-shaped redacted, the milliseconds rounded to hundredths.
 */
export function requestFields(reqId: string, method: string | undefined, url: string | undefined, status: number, elapsedMs: number): RequestFields {
  return { reqId, method, path: redactTokens(url ?? ''), status, ms: Math.round(elapsedMs * 100) / 100 };
}

/**
 * A request's end, for its line and its count in the metrics: its id, its method and URL as read, the URL of the route
 * that answered it (none if no route did), its status, the milliseconds since its headers were read, and why its
 * reply was not sent, if it was not.
 */
export type RequestTold = (reqId: string, method: string | undefined, url: string | undefined, routeUrl: string | undefined, status: number, elapsedMs: number, error?: Error) => void;

/** Told of a request once its reply is sent: its status, the milliseconds since its headers were read, a failure. */
export type RequestEnded = (request: FastifyRequest, status: number, elapsedMs: number, error?: Error) => void;

/**
 * The status a request's line and count take when its connection closed before its reply was sent (the client went
 * away, or the server cut the connection): nginx's "client closed request".
 */
export const CLOSED_BEFORE_REPLY = 499;

/** Why a request was not completed when its connection closed before its reply was sent. */
export class ClosedBeforeReplyError extends Error {
  override readonly name = 'ClosedBeforeReplyError';

  constructor() {
    super('the connection closed before the reply was sent');
    // Where it was noticed says nothing of why: the log gets the message alone.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** A socket with the response Node is writing on it now (node:http's own field), if any. */
type HttpSocket = Socket & { _httpMessage?: unknown };

/**
 * The end of every request Fastify answers, for its log line and its metrics, without Fastify's logger or an onResponse
 * hook: given a logger, Fastify makes a child logger for every request and listens for each reply's end (as it does
 * for a hook), some 2 µs of CPU a request at any log level (docs/performance.md). kb serve's HTTP server makes its
 * responses of the class `responses`, which tells `ended` once: when the reply has been handed to the system
 * ('finish'), when it failed first ('error'), as Fastify listens for, or when the connection closed before either
 * ('close': the client went away, or the server cut it), with CLOSED_BEFORE_REPLY. A request pays for three fields
 * and a comparison at each of its reply's events. The controller gives every reply Fastify sends its request id, and
 * the response its request. A request answered before Fastify saw it (malformed, CONNECT, refusing its Expect) is told
 * of where it is answered.
 */
export class RequestLog {
  readonly responses;
  readonly controller: LogController;

  constructor(ended: RequestEnded) {
    const responses = class Logged<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
      /** Fastify's request, once Fastify has it. */
      request: FastifyRequest | undefined = undefined;
      /** performance.now() as the request's headers had been read. */
      readonly started = performance.now();
      #told = false;

      override emit(event: string | symbol, ...args: unknown[]): boolean {
        if ((event === 'finish' || event === 'error' || event === 'close') && !this.#told && this.request !== undefined) {
          this.#told = true;
          const status = event === 'close' ? CLOSED_BEFORE_REPLY : this.statusCode;
          const error = event === 'error' ? (args[0] as Error) : event === 'close' ? new ClosedBeforeReplyError() : undefined;
          ended(this.request, status, performance.now() - this.started, error);
        }
        return super.emit(event, ...args);
      }

      /** Tells the request's end with a reply written to its socket by hand (a timeout's 408); returns its id. */
      answeredByHand(status: number): string | undefined {
        if (this.#told || this.request === undefined) return undefined;
        this.#told = true;
        ended(this.request, status, performance.now() - this.started);
        return this.request.id;
      }
    };
    this.responses = responses;
    this.controller = new (class extends LogController {
      /** The request id goes back with every reply Fastify sends, so a report can be matched to the line. */
      override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
        reply.header(REQUEST_ID_HEADER, request.id);
        const response = reply.raw;
        if (response instanceof responses) {
          response.request = request;
          return;
        }
        // A request injected (Fastify's app.inject), not read by the HTTP server: told of its end as Fastify would.
        const started = performance.now();
        const told = (error?: Error) => {
          response.off('finish', told).off('error', told);
          ended(request, response.statusCode, performance.now() - started, error);
        };
        response.on('finish', told).on('error', told);
      }

      /** Fastify's own request lines (one as a request comes in, one as it goes out) are not written. */
      override requestCompleted(): void {}
    })();
  }

  /**
   * For a reply written to `socket` by hand (clientError's): if a request Fastify has is in flight on it (a request
   * whose body did not come in time), tells that request's end with `status` and returns its id, so that the request
   * gets one line and one count, under the id it had.
   */
  answeredByHand(socket: Socket, status: number): string | undefined {
    const response = (socket as HttpSocket)._httpMessage;
    return response instanceof this.responses ? response.answeredByHand(status) : undefined;
  }
}

const PRETTY_SKIP = new Set(['level', 'time', 'reqId', 'msg', 'method', 'path', 'status', 'ms', 'err']);

/** One JSON line as a person reads it: `time LEVEL [request id] GET /v1/ns_list 200 1.2 ms`, then anything else. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString() : String(entry.time ?? '');
  const parts = [time, String(entry.level ?? '').toUpperCase().padEnd(5)];
  if (entry.reqId !== undefined) parts.push(`[${String(entry.reqId)}]`);
  if (entry.method !== undefined) parts.push(`${String(entry.method)} ${String(entry.path)} ${String(entry.status)} ${String(entry.ms)} ms`);
  else parts.push(String(entry.msg ?? ''));
  for (const [key, value] of Object.entries(entry)) {
    if (!PRETTY_SKIP.has(key)) parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  const detail = err === undefined ? '' : `\n    ${String(err.stack ?? err.message).replace(/\n/g, '\n    ')}`;
  return `${parts.join(' ')}${detail}\n`;
}

/** The log is written in batches of at least this many bytes (some 120 request lines: a write costs a syscall)... */
const LOG_BATCH_BYTES = 16_384;
/** ...or of whatever it holds after this long. */
const LOG_FLUSH_MS = 200;
/** The room a batch takes in its buffer: the batch and the longest line that may end it (most lines are some 130 bytes). */
const LOG_BUFFER_BYTES = LOG_BATCH_BYTES + 4096;
/** Batches are cut one after another from a buffer of this size (LOG_BUFFER_BYTES at least). */
const LOG_SLAB_BYTES = 1024 * 1024;
/**
 * The most a write to a pipe may hold and still never be interleaved with another process's writes to it (PIPE_BUF:
 * 4096 bytes on Linux). Replicas may share one pipe (`{ kb serve & kb serve & } 2>&1 | collector`): to anything but a
 * file, batches are at most this, whole lines, so that no line of one is spliced into a line of another. A line
 * longer than this is written alone, and may be (any program's may).
 */
const PIPE_ATOMIC_BYTES = 4096;
/**
 * The most of the log held in memory for a reader that fell behind (a pipe's, a terminal's), some 120,000 lines. Past
 * it lines are dropped and counted, and a warning says how many once the reader has caught up: a stuck reader costs
 * lines, never the server's memory. A file takes each batch as it comes.
 */
export const LOG_BACKLOG_BYTES = 16 * 1024 * 1024;

/** How many lines a dropped batch held. */
function linesIn(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count++;
  return count;
}

/** Whether stderr is a regular file: its writes then take microseconds, not as long as a reader takes to read. */
function stderrIsFile(): boolean {
  try {
    return fstatSync(2).isFile();
  } catch {
    return false;
  }
}

export function createLogger(level: LogLevel, options: LoggerOptions = {}): ServerLogger {
  // Node's stderr stream, opened here if nothing opened it yet: on a terminal it makes the terminal's writes wait
  // (blocking), and a terminal takes a waiting write whole, so that servers sharing one terminal never splice each
  // other's lines. Not waiting, a write is cut where the terminal is full.
  const onTerminal = process.stderr.isTTY;
  const format = options.format ?? (onTerminal ? 'pretty' : 'json');
  const sink = options.sink;
  // Lines are gathered here up to LOG_BATCH_BYTES (to a file; PIPE_ATOMIC_BYTES to anything else) and handed to pino's
  // destination (sonic-boom) in one write, not one write a request; whatever is gathered is written within
  // LOG_FLUSH_MS, so a quiet server's log is never behind.
  // Each line goes into the batch's buffer as it is made (its bytes, while they are in the cache), and the buffer to
  // sonic-boom as it is (contentMode buffer): as strings, a batch was joined, measured (Buffer.byteLength), encoded
  // for the write and encoded again once written (sonic-boom's release), and each line's pieces kept until then.
  // To a file, sonic-boom writes at once (sync: pino's own default for a destination): a write of 16 KB to a file
  // takes microseconds, where a hand-off to libuv's thread pool and back cost more than the write, about a
  // microsecond a request line in all (docs/performance.md). To anything else (a pipe, a terminal, a socket), it
  // writes from the thread pool, so that a request never waits for a reader.
  const toFile = sink === undefined && stderrIsFile();
  // To a file, writes by several processes never interleave within one (O_APPEND, or one file position shared).
  const batchBytes = toFile ? LOG_BATCH_BYTES : PIPE_ATOMIC_BYTES;
  const bufferBytes = toFile ? LOG_BUFFER_BYTES : PIPE_ATOMIC_BYTES;
  // sonic-boom joins buffers handed to it while a write is in flight, up to maxWrite.
  const destination = sink === undefined ? pino.destination({ dest: 2, sync: toFile, contentMode: 'buffer', ...(toFile ? {} : { maxWrite: PIPE_ATOMIC_BYTES, maxLength: LOG_BACKLOG_BYTES }) }) : undefined;
  // The batch being gathered is slab[start, used). Batches are cut from the slab one after the other and never written
  // over (sonic-boom may keep one it could not write, to try again), then a new slab is taken: one buffer every some
  // 7,000 request lines, where one a batch (an ArrayBuffer each, freed by a V8 helper thread woken for them) doubled
  // the threads a request woke (docs/performance.md).
  let slab = Buffer.allocUnsafe(LOG_SLAB_BYTES);
  let start = 0;
  let used = 0;
  const writeGathered = () => {
    if (used === start || destination === undefined) return;
    const bytes = slab.subarray(start, used);
    start = used;
    if (slab.length - start < bufferBytes) {
      slab = Buffer.allocUnsafe(LOG_SLAB_BYTES);
      start = used = 0;
    }
    destination.write(bytes as unknown as string);
  };
  const flusher = destination === undefined ? undefined : setInterval(writeGathered, LOG_FLUSH_MS).unref();
  let closing = false;
  const gather = (line: string) => {
    // The destination throws once ended: a line logged after close() (a late timer's) is dropped instead.
    if (closing || destination === undefined) return;
    // Whole lines only: a batch never ends inside one, so no line is ever spliced into another. A UTF-16 unit is at
    // most 3 bytes of UTF-8.
    const most = line.length * 3;
    if (used + most > start + bufferBytes) writeGathered();
    // A line longer than a batch goes alone, after the lines gathered before it.
    if (most > bufferBytes) destination.write(Buffer.from(line) as unknown as string);
    else {
      used += slab.write(line, used, 'utf8');
      if (used - start >= batchBytes) writeGathered();
    }
  };
  const lines: DestinationStream = destination === undefined ? { write: (line) => sink?.(line.replace(/\n$/, '')) } : { write: gather };
  const stream: DestinationStream = format === 'pretty' ? { write: (line) => lines.write(prettyLine(line)) } : lines;
  const logger = pino(
    {
      level,
      base: null,
      // Milliseconds since the epoch, pino's default: the cheapest to write; the pretty format shows them as ISO time.
      timestamp: pino.stdTimeFunctions.epochTime,
      formatters: { level: (label) => ({ level: label }) },
      // Nothing logs headers today; should anything ever, the credentials in them stay out.
      redact: { paths: ['req.headers.authorization', 'req.headers["proxy-authorization"]', 'headers.authorization'], censor: REDACTED },
    },
    stream,
  );
  // A child with a level of its own: the requests' level (silent included) does not reach it.
  const events = logger.child({}, { level: 'info' });
  // A reader that went away (EPIPE): pino's destination then drops every line and never closes; nothing is left to
  // wait for. Any other write error is pino's to report.
  let readerGone = false;
  destination?.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') readerGone = true;
  });
  // Lines dropped for a reader LOG_BACKLOG_BYTES behind, said once everything held has been written (sonic-boom's
  // drain), or when the server stops.
  let dropped = 0;
  const sayDropped = () => {
    if (dropped === 0 || readerGone) return;
    const count = dropped;
    dropped = 0;
    events.warn(`${count} log line${count === 1 ? ' was' : 's were'} dropped: the log's reader fell ${LOG_BACKLOG_BYTES / 1024 / 1024} MB behind`);
  };
  destination?.on('drop', (bytes: Buffer) => (dropped += linesIn(bytes)));
  destination?.on('drain', sayDropped);
  let ended: Promise<void> | undefined;
  const close = (options: { waitMs?: number } = {}) => {
    if (!closing) sayDropped();
    closing = true;
    ended ??= new Promise<void>((resolve) => {
      clearInterval(flusher);
      if (destination === undefined || readerGone) return resolve();
      writeGathered();
      destination.once('close', () => resolve());
      destination.once('error', () => resolve());
      destination.end();
    });
    if (options.waitMs === undefined) return ended;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.waitMs).unref()));
    return Promise.race([ended, waited]).finally(() => clearTimeout(timer));
  };
  return { pino: logger, events, close, sayDropped };
}
