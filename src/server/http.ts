import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, preParsingHookHandler } from 'fastify';
import { KbApiError } from '../api/errors.js';
import { errorBody, sendError, UNSUPPORTED_MEDIA_TYPE, writeErrorByHand } from './errors.js';
import { REQUEST_ID_HEADER, type RequestTold } from './logger.js';
import { sharedPlugin } from './plugin.js';

/** The methods a route answers: HEAD with every GET (answered by send(), errors included, with the GET's headers). */
export function methodsOf(method: string): Array<'GET' | 'HEAD' | 'POST' | 'DELETE'> {
  return method === 'GET' ? ['GET', 'HEAD'] : [method as 'POST' | 'DELETE'];
}

/** The one expectation HTTP defines (RFC 9110 section 10.1.1), in any case; any other is refused with 417. */
const CONTINUE_EXPECTATION = /^[ \t]*100-continue[ \t]*$/i;

const EXPECTATION_FAILED = new KbApiError(
  'expectation_failed',
  'Expect: only 100-continue is supported',
  'Send the request without the Expect header, or with Expect: 100-continue.',
);

/** Whether the client waits for 100 Continue before it sends its body: the authentication hook sends it. */
export function expectsContinue(request: FastifyRequest): boolean {
  const expectation = request.headers.expect;
  return expectation !== undefined && CONTINUE_EXPECTATION.test(expectation);
}

/** Decodes strictly: a body that is not UTF-8 is refused rather than stored with replacement characters. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Far deeper than any body of this API (two levels), shallow enough that no parser recursion can run out of stack. */
export const MAX_JSON_DEPTH = 32;

/** Whether JSON text opens more than MAX_JSON_DEPTH objects and arrays at once, brackets inside strings aside. */
function nestedTooDeeply(text: string): boolean {
  // Text with no more brackets than that cannot nest deeper (every body of this API): counted natively, not char by char.
  let brackets = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++brackets > MAX_JSON_DEPTH) break;
  for (let at = text.indexOf('['); at !== -1 && brackets <= MAX_JSON_DEPTH; at = text.indexOf('[', at + 1)) brackets++;
  if (brackets <= MAX_JSON_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * JSON.parse of UTF-8 bytes, refusing the property names of prototype poisoning (as fastify's own parser does) with a
 * message that names them, since they are never fields of this API.
 */
function parseJsonBody(bytes: Buffer): unknown {
  let text: string;
  try {
    // A UTF-8 byte order mark is allowed before JSON text (RFC 8259 section 8.1): the decoder drops it.
    text = UTF8.decode(bytes);
  } catch {
    throw new KbApiError('bad_request', 'Request body is not valid UTF-8', 'Send JSON text encoded as UTF-8.');
  }
  if (nestedTooDeeply(text)) {
    throw new KbApiError('bad_request', `Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`);
  }
  if (text.length === 0) throw new KbApiError('bad_request', 'Request body is empty: expected a JSON object');
  try {
    // The reviver costs a call for every value: only text that may hold a forbidden name (spelled out, or escaped
    // with \u) pays for it.
    if (!text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u')) return JSON.parse(text) as unknown;
    return JSON.parse(text, function (key, value: unknown) {
      if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
        throw new KbApiError('bad_request', `Request body has a forbidden field: ${key}`);
      }
      return value;
    });
  } catch (error) {
    if (error instanceof KbApiError) throw error;
    throw new KbApiError('bad_request', 'Request body is not valid JSON');
  }
}

/**
 * A body kb cannot read as JSON before its parser sees it: one without Content-Type (fastify would leave it unread,
 * but docs/contract.md, Status codes, makes any non-JSON body a 415), or a compressed one, whose bytes kb would otherwise read as if they
 * were not (RFC 9110 section 15.5.16: a content coding the server does not know is a 415).
 */
export function untypedBody(request: FastifyRequest): KbApiError | null {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return null;
  if (request.headers['content-type'] === undefined) return UNSUPPORTED_MEDIA_TYPE;
  const coding = request.headers['content-encoding'];
  return coding === undefined || /^\s*(identity\s*)?$/i.test(coding) ? null : UNSUPPORTED_ENCODING;
}

const UNSUPPORTED_ENCODING = new KbApiError(
  'unsupported_media_type',
  'Request bodies must not be compressed: Content-Encoding is not supported',
  'Send the JSON as it is, without a Content-Encoding header.',
);

export const requireContentType: preParsingHookHandler = (request, _reply, payload, done) => {
  const refused = untypedBody(request);
  if (refused) return done(refused);
  done(null, payload);
};

/** What a CONNECT request gets: kb serve is no proxy. */
const CONNECT_REFUSED = new KbApiError('method_not_allowed', 'CONNECT is not allowed: kb serve is not a proxy', 'Send the API\'s requests to kb serve itself.');

/** What a request that reaches a closing server gets (fastify would answer it with a body of its own). */
const SHUTTING_DOWN = new KbApiError('unavailable', 'The server is shutting down', 'Retry in a moment: it may be restarting, or another instance may answer.');

declare module 'fastify' {
  interface FastifyInstance {
    /** Set once the app begins to close (its preClose hook): what a request arriving then is refused for. */
    shutdown: { closing: boolean };
  }
}

export interface HttpRulesOptions extends Record<string, unknown> {
  /** The app's request ids (its genReqId), for the requests answered here before fastify sees them. */
  requestId: (request: IncomingMessage) => string;
  /** Where a request answered here is logged and counted. */
  told: RequestTold;
}

/**
 * The rules of HTTP every route keeps: JSON bodies only, strictly decoded; Expect answered as docs/contract.md, Status codes, says.
 */
export const httpRules = sharedPlugin<HttpRulesOptions>((app, options, done) => {
  // fastify parses text/plain by default; docs/contract.md, Status codes, makes any non-JSON body a 415.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, parsed) => {
    try {
      parsed(null, parseJsonBody(body as Buffer));
    } catch (error) {
      parsed(error as Error, undefined);
    }
  });

  // Node passes a request with an Expect header here instead of answering it itself (with 100 Continue at once, or a
  // bare 417): only such requests pay for the check, and 100 Continue waits for authentication (auth.ts).
  const expectationFailed = (request: IncomingMessage, response: ServerResponse) => {
    const started = performance.now();
    const id = options.requestId(request);
    const body = JSON.stringify(errorBody(EXPECTATION_FAILED));
    response.shouldKeepAlive = false;
    response.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      [REQUEST_ID_HEADER]: id,
    });
    response.end(body);
    options.told(id, request.method, request.url, undefined, 417, performance.now() - started);
  };
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (CONTINUE_EXPECTATION.test(request.headers.expect ?? '')) app.routing(request, response);
    else expectationFailed(request, response);
  });
  app.server.on('checkExpectation', expectationFailed);

  // Node hands a CONNECT request to 'connect' listeners, and with none closes its connection without a word. kb serve
  // is no proxy: it answers 405, as for any method a route does not take, logged and counted as any request is.
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const started = performance.now();
    // The socket is no longer the HTTP server's: a client that resets it must not be an uncaught error.
    socket.on('error', () => socket.destroy());
    const id = options.requestId(request);
    writeErrorByHand(socket, 405, CONNECT_REFUSED, id);
    socket.end();
    options.told(id, request.method, request.url, undefined, 405, performance.now() - started);
  });

  // Once the close has begun, a request that still arrives (pipelined, or on a connection busy with another) is
  // refused like any other 503: the envelope, its request id, Retry-After, and the connection closed after it. Checked
  // first by each route (refusedWhileClosing), not by an onRequest hook of the app, which every request would pay for.
  app.decorate('shutdown', { closing: false });
  app.addHook('preClose', (hookDone) => {
    app.shutdown.closing = true;
    hookDone();
  });
  done();
});

/** Whether the server is closing, and if so the request's 503 sent (routes call it before anything else). */
export function refusedWhileClosing(app: FastifyInstance, reply: FastifyReply): boolean {
  if (!app.shutdown.closing) return false;
  reply.header('connection', 'close');
  sendError(reply, SHUTTING_DOWN);
  return true;
}

/** onRequest hook of the routes that have no hook of their own to check it in (the 404 route). */
export const refuseWhileClosing: onRequestHookHandler = (_request, reply, hookDone) => {
  if (!refusedWhileClosing(reply.server, reply)) hookDone();
};
