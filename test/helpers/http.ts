import type { FastifyInstance } from 'fastify';
import type { ExpectStatic } from 'vitest';
import * as z from 'zod/mini';
import { FailureEnvelope, successEnvelope } from '../../src/api/schemas.js';

export interface CallOptions {
  token?: string;
  /** Sent as JSON with Content-Type application/json. */
  json?: unknown;
  /** Sent as is; add a content-type header yourself when wanted. */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  body: unknown;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request through app.inject(). */
export async function call(app: FastifyInstance, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Buffer | undefined = options.payload;
  if (options.json !== undefined) {
    payload = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await app.inject({
    method: method as 'GET',
    url: path,
    headers,
    ...(payload === undefined ? {} : { payload }),
    ...(options.remoteAddress === undefined ? {} : { remoteAddress: options.remoteAddress }),
  });
  return { status: response.statusCode, headers: response.headers, text: response.body, body: parse(response.body) };
}

/** One request over the network with fetch. */
export async function fetchCall(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.payload;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), text, body: parse(text) };
}

const FAILURE_KEYS = new Set(['success', 'message', 'help']);

/**
 * Describes how a reply breaks the envelope rules of docs/contract.md, Status codes, or returns undefined when it keeps them:
 * JSON content type; 200 is exactly {success: true, data} with data of the route's output schema; any other
 * status is a 4xx/5xx with only {success: false, message, help?}; 401 names the Bearer scheme; 405 sends Allow.
 */
export function envelopeProblem(reply: Reply, output?: z.ZodMiniType): string | undefined {
  const contentType = String(reply.headers['content-type'] ?? '');
  if (!/^application\/json\b/.test(contentType)) return `content-type is ${contentType || 'missing'}`;
  const body = reply.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `body is not a JSON object: ${reply.text.slice(0, 200)}`;
  const keys = Object.keys(body);
  if (reply.status === 200) {
    if (keys.sort().join(',') !== 'data,success') return `success body has keys ${keys.join(',')}`;
    if (output) {
      const parsed = z.catchall(successEnvelope(output), z.never()).safeParse(body);
      if (!parsed.success) return `success data does not match the route output: ${reply.text.slice(0, 300)}`;
    } else if ((body as { success?: unknown }).success !== true) {
      return 'success is not true';
    }
    return undefined;
  }
  if (reply.status < 400 || reply.status > 599) return `status ${reply.status} is neither 200 nor 4xx/5xx`;
  const extra = keys.filter((key) => !FAILURE_KEYS.has(key));
  if (extra.length > 0) return `failure body has extra keys ${extra.join(',')}`;
  if (!z.catchall(FailureEnvelope, z.never()).safeParse(body).success) return `not a failure envelope: ${reply.text.slice(0, 300)}`;
  const message = (body as { message: string }).message;
  if (message.trim() === '') return 'empty message';
  if (/\n\s+at /.test(message) || /\n\s+at /.test(String((body as { help?: unknown }).help ?? ''))) return 'stack trace in body';
  if (reply.status === 401 && reply.headers['www-authenticate'] !== 'Bearer') return '401 without WWW-Authenticate: Bearer';
  if (reply.status === 405 && !reply.headers.allow) return '405 without Allow';
  return undefined;
}

/** Asserts the reply is a failure with this status and a valid failure envelope; returns its body. */
export function expectFailure(expect: ExpectStatic, reply: Reply, status: number): { success: false; message: string; help?: string | null } {
  expect(reply.status, reply.text).toBe(status);
  expect(envelopeProblem(reply)).toBeUndefined();
  return reply.body as { success: false; message: string; help?: string | null };
}

/** Asserts a 200 whose data matches the route output schema, and returns data. */
export function expectSuccess<T extends z.ZodMiniType>(expect: ExpectStatic, reply: Reply, output: T): z.infer<T> {
  expect(reply.status, reply.text).toBe(200);
  expect(envelopeProblem(reply, output)).toBeUndefined();
  return (reply.body as { data: z.infer<T> }).data;
}
