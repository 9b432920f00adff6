import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type RouteSpec } from '../../src/api/routes.js';
import { envelopeProblem, expectFailure, fetchCall, type Reply } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Every GET route, health and the OpenAPI document included, with a query each accepts. */
const GET_PATHS = [
  ...(Object.values(ROUTES) as RouteSpec[]).filter((route) => route.method === 'GET').map((route) => `/v1${route.path}${route.name === 'base_list' ? '?namespace=edge-ns' : ''}`),
  '/v1/openapi.json',
];

let server: TestServer;
let port = 0;

beforeAll(async () => {
  server = await startTestServer({ org: 'acme' });
  port = Number(new URL(server.url).port);
  await fetchCall(server.url, 'POST', '/v1/ns_create', { token: server.token, json: { key: 'edge-ns' } });
});

afterAll(async () => {
  await server?.close();
});

/** A raw HTTP/1.1 exchange on a socket of its own, for what fetch would not send (duplicate headers, bad bytes). */
class RawClient {
  private received = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  readonly socket: Socket;
  readonly closed: Promise<void>;

  constructor(target = port) {
    this.socket = connect(target, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting?.();
    });
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
    this.socket.on('close', () => this.waiting?.());
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Resolves with the next complete response (an interim 1xx one included), removed from what was received. */
  async next(): Promise<{ status: number; head: string; body: string }> {
    for (;;) {
      const text = this.received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = text.slice(0, end);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
        const length = status < 200 ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (text.length >= end + 4 + length) {
          const body = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
          this.received = this.received.subarray(end + 4 + length);
          return { status, head, body };
        }
      }
      if (this.socket.destroyed) throw new Error(`connection closed; received: ${text}`);
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A reply read raw, in the shape the envelope checks take. */
function asReply(raw: { status: number; head: string; body: string }): Reply {
  const headers: Record<string, string> = {};
  for (const line of raw.head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.body);
  } catch {
    body = undefined;
  }
  return { status: raw.status, headers, text: raw.body, body };
}

async function exchange(request: string | Buffer): Promise<Reply> {
  const client = new RawClient();
  try {
    client.write(request);
    return asReply(await client.next());
  } finally {
    client.close();
  }
}

describe('HEAD', () => {
  it.each(GET_PATHS)('answers HEAD %s as GET, without a body', async (path) => {
    const get = await fetchCall(server.url, 'GET', path, { token: server.token });
    expect(get.status, get.text).toBe(200);
    const head = await fetchCall(server.url, 'HEAD', path, { token: server.token });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
  });

  it('answers HEAD of an authenticated route without a token with 401 and no body', async () => {
    const head = await fetchCall(server.url, 'HEAD', '/v1/ns_list');
    expect(head.status).toBe(401);
    expect(head.headers['www-authenticate']).toBe('Bearer');
    expect(head.text).toBe('');
  });
});

describe('405 with Allow', () => {
  it.each([
    ['POST', '/v1/health', 'GET, HEAD'],
    ['DELETE', '/v1/openapi.json', 'GET, HEAD'],
    ['PUT', '/v1/openapi.json', 'GET, HEAD'],
    ['HEAD', '/v1/ns_create', 'POST'],
    ['GET', '/v1/base_delete', 'DELETE'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const reply = await fetchCall(server.url, method, path, { token: server.token });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe(allow);
    if (method !== 'HEAD') expectFailure(expect, reply, 405);
  });
});

describe('a body that is not valid UTF-8', () => {
  it('is refused with 400 and nothing is stored', async () => {
    const body = Buffer.concat([Buffer.from('{"key":"latin1-ns","description":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const reply = await fetchCall(server.url, 'POST', '/v1/ns_create', {
      token: server.token, payload: body, headers: { 'content-type': 'application/json' },
    });
    const failure = expectFailure(expect, reply, 400);
    expect(failure.message).toMatch(/UTF-8/);
    const listed = await fetchCall(server.url, 'GET', '/v1/ns_list', { token: server.token });
    expect(listed.text).not.toContain('latin1-ns');
  });

  it('is refused under an Idempotency-Key too, and the key stays free for the corrected body', async () => {
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'utf8-edge-key' };
    const bad = Buffer.concat([Buffer.from('{"key":"utf8-key-ns","description":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expectFailure(expect, await fetchCall(server.url, 'POST', '/v1/ns_create', { token: server.token, payload: bad, headers }), 400);
    const good = await fetchCall(server.url, 'POST', '/v1/ns_create', { token: server.token, payload: '{"key":"utf8-key-ns","description":"café"}', headers });
    expect(good.status, good.text).toBe(200);
    expect(good.body).toEqual({ success: true, data: { key: 'utf8-key-ns', description: 'café' } });
  });
});

describe('a compressed body (Content-Encoding)', () => {
  it.each(['gzip', 'br', 'deflate, gzip'])('%s: refused with 415 before it is read, and nothing is stored', async (coding) => {
    // Plain JSON labelled as compressed: read as it is, it would be stored, whatever its bytes really were.
    const reply = await fetchCall(server.url, 'POST', '/v1/ns_create', {
      token: server.token, payload: '{"key":"coded-ns"}', headers: { 'content-type': 'application/json', 'content-encoding': coding },
    });
    const failure = expectFailure(expect, reply, 415);
    expect(failure).toMatchObject({ message: 'Request bodies must not be compressed: Content-Encoding is not supported' });
    const listed = await fetchCall(server.url, 'GET', '/v1/ns_list', { token: server.token });
    expect(listed.text).not.toContain('coded-ns');
  });

  it('identity is no coding at all: accepted', async () => {
    const reply = await fetchCall(server.url, 'POST', '/v1/ns_create', {
      token: server.token, payload: '{"key":"identity-ns"}', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    });
    expect(reply.status, reply.text).toBe(200);
  });
});

describe('JSON nested too deeply', () => {
  it.each([100, 20_000])('refuses %i levels with 400 that says so, and stores nothing', async (depth) => {
    const payload = `{"key":"deep-ns","description":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const reply = await fetchCall(server.url, 'POST', '/v1/ns_create', { token: server.token, json: undefined, payload, headers: { 'content-type': 'application/json' } });
    const failure = expectFailure(expect, reply, 400);
    expect(failure.message).toMatch(/nested too deeply/);
    const listed = await fetchCall(server.url, 'GET', '/v1/ns_list', { token: server.token });
    expect(listed.text).not.toContain('deep-ns');
  });

  it('counts brackets inside strings as text', async () => {
    const description = `${'['.repeat(200)}{{{`;
    const reply = await fetchCall(server.url, 'POST', '/v1/ns_create', { token: server.token, json: { key: 'brackets-ns', description } });
    expect(reply.status, reply.text).toBe(200);
  });
});

describe('two Authorization headers', () => {
  it.each([
    ['the same valid token twice', (token: string) => [`Bearer ${token}`, `Bearer ${token}`]],
    ['a valid token then an unknown one', (token: string) => [`Bearer ${token}`, 'Bearer kbt_unknown']],
  ])('are refused with 400: %s', async (_name, values) => {
    const [first, second] = values(server.token);
    const reply = await exchange(`GET /v1/auth HTTP/1.1\r\nHost: x\r\nAuthorization: ${first}\r\nAuthorization: ${second}\r\nConnection: close\r\n\r\n`);
    const failure = expectFailure(expect, reply, 400);
    expect(failure.message).toMatch(/Authorization/);
  });

  it('are refused on a write, which changes nothing', async () => {
    const body = '{"key":"twice-ns"}';
    const reply = await exchange(
      `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nauthorization: Bearer ${server.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expectFailure(expect, reply, 400);
    const listed = await fetchCall(server.url, 'GET', '/v1/ns_list', { token: server.token });
    expect(listed.text).not.toContain('twice-ns');
  });
});

describe('Expect', () => {
  const body = '{"key":"continue-ns"}';
  const head = (authorization: string) =>
    `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`;

  it('100-continue: a request without a valid token gets its 401 and never a 100 Continue', async () => {
    for (const authorization of ['', 'Authorization: Bearer kbt_unknown\r\n']) {
      const client = new RawClient();
      try {
        client.write(head(authorization));
        const first = await client.next();
        expect(first.status).toBe(401);
        expect(envelopeProblem(asReply(first))).toBeUndefined();
        // The body it was not asked for must not be read as a next request (node closes such a connection).
        expect(first.head).toMatch(/\r\nconnection: close/i);
        await client.closed;
      } finally {
        client.close();
      }
    }
  });

  it('100-continue: a request with a valid token gets 100 Continue, then its answer once the body is sent', async () => {
    const client = new RawClient();
    try {
      client.write(head(`Authorization: Bearer ${server.token}\r\n`));
      expect((await client.next()).status).toBe(100);
      client.write(body);
      const answer = asReply(await client.next());
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toEqual({ success: true, data: { key: 'continue-ns', description: null } });
    } finally {
      client.close();
    }
  });

  it.each(['100-continue-please', 'something-else', ''])('%j: 417 with the failure envelope, nothing stored', async (expectation) => {
    const expectBody = '{"key":"expect-ns"}';
    const reply = await exchange(
      `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${expectBody.length}\r\nExpect: ${expectation}\r\nConnection: close\r\n\r\n${expectBody}`,
    );
    const failure = expectFailure(expect, reply, 417);
    expect(failure.message).toMatch(/Expect/);
    const listed = await fetchCall(server.url, 'GET', '/v1/ns_list', { token: server.token });
    expect(listed.text).not.toContain('expect-ns');
  });

  it('417 on health and on an unknown route too', async () => {
    for (const path of ['/v1/health', '/v1/nope']) {
      const reply = await exchange(`GET ${path} HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n`);
      expectFailure(expect, reply, 417);
    }
  });
});

describe('a server shutting down', () => {
  it('answers a request that reaches it while closing with a 503 envelope, its request id and Retry-After', async () => {
    const own = await startTestServer({ org: 'acme' });
    const client = new RawClient(Number(new URL(own.url).port));
    try {
      // A write in flight (it has had its 100 Continue), and a request pipelined behind it once the close has begun:
      // the first is finished, the second is refused as docs/contract.md refuses any request, not with fastify's own body.
      const body = '{"key":"closing-ns"}';
      client.write(
        `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${own.token}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      expect((await client.next()).status).toBe(100);
      const closed = own.app.close();
      client.write(`${body}GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: late-request\r\n\r\n`);
      const first = asReply(await client.next());
      expect(first.status, first.text).toBe(200);
      const late = asReply(await client.next());
      const failure = expectFailure(expect, late, 503);
      expect(failure.message).toMatch(/shutting down/);
      expect(late.headers['x-request-id']).toBe('late-request');
      expect(late.headers['retry-after']).toBe('1');
      expect(late.headers.connection).toBe('close');
      await closed;
    } finally {
      client.close();
      await own.store.close();
      await own.database.drop();
    }
  });
});
