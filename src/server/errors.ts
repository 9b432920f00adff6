import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { KbApiError } from '../api/errors.js';
import { LIMITS } from '../api/schemas.js';
import type { StoredReply, WriteOutcome } from '../store/store.js';
import type { RequestLog } from './logger.js';
import type { AppObserver } from './observer.js';
import { sharedPlugin } from './plugin.js';

export const INTERNAL_ERROR = new KbApiError('internal', 'Internal server error');

export const UNSUPPORTED_MEDIA_TYPE = new KbApiError('unsupported_media_type', 'Request bodies must be JSON', 'Send Content-Type: application/json.');

/** 429 for an address over the failed-authentication limit, with the seconds to wait. */
export class RateLimitedError extends KbApiError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'Too many failed authentication attempts from this address', `Retry in ${retryAfterSeconds} s, with a valid token.`);
  }
}

/**
 * 409 for a repeat whose first request is still running after the wait: with Retry-After, so that a client repeats it
 * with the same key (the CLI does, as for a 503).
 */
export class IdempotencyBusyError extends KbApiError {
  constructor() {
    super('conflict', 'A request with this Idempotency-Key is still in progress', 'Retry with the same key in a moment: it will get that request\'s reply.');
  }
}

/**
 * Sends a JSON body: an object, or one already serialized (as text or as UTF-8 bytes). A HEAD answer gets the headers
 * of its GET and no body (RFC 9110 section 9.3.2), whatever its status.
 */
export function send(reply: FastifyReply, status: number, body: object | string | Buffer): FastifyReply {
  reply.code(status).header('content-type', 'application/json; charset=utf-8');
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  if (reply.request.method === 'HEAD') return reply.header('content-length', Buffer.byteLength(payload)).send(undefined);
  return reply.send(payload);
}

export function errorBody(error: KbApiError): { success: false; message: string; help?: string } {
  const body: { success: false; message: string; help?: string } = { success: false, message: error.message };
  if (error.help !== undefined) body.help = error.help;
  return body;
}

export function sendError(reply: FastifyReply, error: KbApiError): FastifyReply {
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
  // A repeat whose first request still runs: the same key, a moment later, gets that request's reply.
  else if (error instanceof IdempotencyBusyError) reply.header('retry-after', '1');
  // A storage that cannot commit now (a lost database connection, a busy database, a server shutting down).
  else if (error.status === 503) reply.header('retry-after', '1');
  return send(reply, error.status, errorBody(error));
}

/** The reply an executed write gets, as kept under an Idempotency-Key: a 5xx is not kept, so a retry runs again. */
export function replyFor(outcome: WriteOutcome): StoredReply | undefined {
  if (outcome.ok) return { status: 200, body: JSON.stringify({ success: true, data: outcome.value }) };
  const error = outcome.error;
  if (error instanceof KbApiError && error.status < 500) return { status: error.status, body: JSON.stringify(errorBody(error)) };
  return undefined;
}

/** Turns what fastify raises while reading a request into the API's error catalog. */
export function fromFastifyError(error: FastifyError): KbApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KbApiError('payload_too_large', `Request body is larger than ${LIMITS.bodyBytes} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return UNSUPPORTED_MEDIA_TYPE;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new KbApiError('bad_request', 'Request body is empty: expected a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new KbApiError('bad_request', 'Request body is not valid JSON');
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return new KbApiError('bad_request', error.message);
      }
      return undefined;
  }
}

/**
 * Writes a failure envelope to a socket by hand, for a request answered before any response object exists for it
 * (malformed HTTP, CONNECT), with its request id, and closes the connection after it.
 */
export function writeErrorByHand(socket: Socket, status: number, error: KbApiError | string, id: string): void {
  if (!socket.writable) return;
  const body = JSON.stringify(typeof error === 'string' ? { success: false, message: error } : errorBody(error));
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export interface ClientErrorOptions {
  /** The app's request ids (its genReqId). */
  newRequestId: () => string;
  log: Logger;
  /** The requests Fastify has, one of which may be in flight on the connection. */
  requestLog: RequestLog;
  observer?: AppObserver | undefined;
}

/**
 * fastify's clientErrorHandler: answers a request that never reached fastify (malformed HTTP, header timeout, oversized
 * headers) with the failure envelope and a request id of its own (what of the request was read is not at hand), and
 * logs and counts it as any request is. A request Fastify has, whose body did not come in time or was malformed, is
 * answered the same, and logged and counted as the request it is, under its own id.
 */
export function clientErrorHandler(options: ClientErrorOptions) {
  return function clientError(error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // The client ended its connection mid-request: there is no one to answer. A request whose headers were read is told
    // of as not completed as its connection closes (RequestLog); a request cut within its headers was never read.
    if (error.code === 'HPE_INVALID_EOF_STATE') return void socket.destroy();
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const message = status === 408 ? 'Request timed out' : status === 431 ? 'Request headers are too large' : 'Malformed HTTP request';
    let id = options.requestLog.answeredByHand(socket, status);
    if (id === undefined) {
      id = options.newRequestId();
      options.log.info({ reqId: id, status, code: error.code }, message);
      options.observer?.responded(undefined, '', undefined, status, undefined);
    }
    writeErrorByHand(socket, status, message, id);
    socket.destroy(error);
  };
}

/**
 * fastify's frameworkErrors: a URL fastify cannot decode would otherwise get fastify's own error body, not the failure
 * envelope.
 */
export function frameworkError(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  sendError(reply, fromFastifyError(error) ?? INTERNAL_ERROR);
}

/** Every error a route raises, as the failure envelope; anything unexpected is logged with its stack and answered 500. */
export const errors = sharedPlugin<{ log: Logger }>((app, options, done) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof KbApiError) return sendError(reply, error);
    const known = fromFastifyError(error);
    if (known) return sendError(reply, known);
    options.log.error({ reqId: request.id, err: error }, 'request failed');
    return sendError(reply, INTERNAL_ERROR);
  });
  done();
});
