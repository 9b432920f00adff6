import { connect } from 'node:net';
import { Client } from 'undici';

/** A reply as read off the wire. */
export interface WireReply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function serialize(request: WireRequest, host: string): string {
  const body = request.body ?? '';
  const headers = { host, ...request.headers, ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) };
  return `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n${body}`;
}

/**
 * Sends every request on one connection in one write, before any reply has come (HTTP/1.1 pipelining), and reads
 * the replies in order. Each reply must carry a Content-Length (kb serve's do).
 */
export function pipelined(baseUrl: string, requests: WireRequest[]): Promise<WireReply[]> {
  const { hostname, port, host } = new URL(baseUrl);
  if (requests.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let buffer = Buffer.alloc(0);
    const replies: WireReply[] = [];
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => {
      if (replies.length < requests.length) reject(new Error(`connection closed after ${replies.length} of ${requests.length} replies`));
    });
    socket.on('connect', () => socket.write(requests.map((request) => serialize(request, host)).join('')));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        const [statusLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        // A reply to HEAD declares its GET's length and has no body.
        const length = requests[replies.length]?.method === 'HEAD' ? 0 : Number(headers['content-length'] ?? Number.NaN);
        if (!Number.isInteger(length)) return fail(new Error(`a reply without Content-Length: ${statusLine}`));
        if (buffer.length < end + 4 + length) return;
        const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        buffer = buffer.subarray(end + 4 + length);
        replies.push({ status: Number(statusLine.split(' ')[1]), headers, text });
        if (replies.length === requests.length) {
          socket.end();
          return resolve(replies);
        }
      }
    });
  });
}

/**
 * Sends each request on a connection of its own, all at once: the connections are opened first (a GET /v1/health on
 * each), so that the requests arrive together rather than one per connect.
 */
export async function onConnectionsOfTheirOwn(baseUrl: string, requests: WireRequest[]): Promise<WireReply[]> {
  const clients = requests.map(() => new Client(baseUrl));
  try {
    await Promise.all(clients.map(async (client) => (await client.request({ method: 'GET', path: '/v1/health' })).body.text()));
    return await Promise.all(
      requests.map(async (request, n) => {
        const reply = await (clients[n] as Client).request({
          method: request.method as 'POST',
          path: request.path,
          headers: request.headers,
          ...(request.body === undefined ? {} : { body: request.body }),
        });
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(reply.headers)) if (typeof value === 'string') headers[name] = value;
        return { status: reply.statusCode, headers, text: await reply.body.text() };
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** A namespace create whose headers and first bytes of body are sent, on a connection of its own, the rest held back. */
export interface HalfSentCreate {
  /** Everything read off the connection so far. */
  reply(): string;
  /** Sends the rest of the body. */
  finish(): void;
  close(): void;
}

/** Sends `POST /v1/ns_create` for `key` up to the fifth byte of its body: a request in flight until finish(). */
export async function halfSentCreate(baseUrl: string, token: string, key: string): Promise<HalfSentCreate> {
  const body = JSON.stringify({ key });
  const request = serialize({ method: 'POST', path: '/v1/ns_create', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body }, 'x');
  const held = body.length - 5;
  const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
  let reply = '';
  socket.on('data', (chunk: Buffer) => (reply += chunk.toString()));
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(request.slice(0, -held));
  return { reply: () => reply, finish: () => socket.write(request.slice(-held)), close: () => socket.destroy() };
}

/**
 * Writes `text` on a connection of its own and ends its side (a half-close: what was written is read first); resolves
 * with everything read until the server closed the connection.
 */
export function exchangeRaw(baseUrl: string, text: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
    socket.end(text);
  });
}
