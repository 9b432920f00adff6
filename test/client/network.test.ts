/**
 * Behaviour the real server cannot produce on demand (silence, HTML, 503s, a deployment without base_list),
 * against tiny real servers on loopback. Everything else is tested against the real server in client.test.ts.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, type LookupFunction, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  exitCodeFor,
  KbClient,
  type KbClientOptions,
  MAY_HAVE_RUN_HELP,
  NetworkError,
  ResponseFormatError,
} from '../../src/client/index.js';
import { Agent } from '../../src/client/undici.js';
import { startTestServer } from '../helpers/server.js';
import { rejection } from '../helpers/rejection.js';

interface Hit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Stub {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

type Handler = (hit: Hit, response: ServerResponse, request: IncomingMessage) => void;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A node:http server on a free loopback port that records every request and answers with `handler`. */
async function stub(handler: Handler): Promise<Stub> {
  const hits: Hit[] = [];
  const server = createHttpServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const hit = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      hits.push(hit);
      handler(hit, response, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${address.port}`, hits, close };
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** A raw TCP server that accepts connections and never answers. */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${address.port}`;
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

function client(options: KbClientOptions): KbClient {
  const made = new KbClient(options);
  cleanups.push(() => made.close());
  return made;
}

const CANARY = 'kbt_CANARY-0123456789abcdefSECRET';

describe('KbClient requests', () => {
  it('sends no Authorization header to health, and Bearer <token> to every other route', async () => {
    const server = await stub((hit, response) => json(response, 200, { success: true, data: hit.url.endsWith('/health') ? 'alive' : 'acme' }));
    const kb = client({ url: server.url, token: 'kbt_abc' });
    await kb.health();
    await kb.auth();
    expect(server.hits.map((hit) => [hit.url, hit.headers.authorization])).toEqual([
      ['/v1/health', undefined],
      ['/v1/auth', 'Bearer kbt_abc'],
    ]);
  });

  it('sends Content-Type application/json only with a body, and the body of a DELETE as JSON', async () => {
    const base = { namespace: 'docs', key: 'faq', description: null };
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: base }));
    const kb = client({ url: server.url, token: 'kbt_abc' });
    await kb.baseDelete({ namespace: 'docs', base: 'faq' });
    await kb.request('GET', '/base_list?namespace=docs');
    const [deleted, listed] = server.hits;
    expect(deleted).toMatchObject({ method: 'DELETE', url: '/v1/base_delete', body: '{"namespace":"docs","base":"faq"}' });
    expect(deleted?.headers['content-type']).toBe('application/json');
    expect(listed).toMatchObject({ method: 'GET', body: '' });
    expect(listed?.headers['content-type']).toBeUndefined();
  });

  it('puts baseList\'s namespace in the query string', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: [] }));
    await client({ url: server.url, token: 't' }).baseList('my-docs');
    expect(server.hits[0]?.url).toBe('/v1/base_list?namespace=my-docs');
  });

  it('keeps a path prefix of the base URL and ignores its trailing slash', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: 'alive' }));
    await client({ url: `${server.url}/kb/`, token: 't' }).health();
    expect(server.hits[0]?.url).toBe('/kb/v1/health');
  });

  it('sends a raw path in the form a URL parser gives it: dot segments resolved, spaces and the like percent-encoded', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: [] }));
    const kb = client({ url: `${server.url}/kb`, token: 't' });
    await kb.raw('GET', 'x/../ns_list?a=b c');
    await kb.request('GET', '/./base_list?namespace=my docs');
    await kb.baseList('my-docs');
    expect(server.hits.map((hit) => hit.url)).toEqual(['/kb/v1/ns_list?a=b%20c', '/kb/v1/base_list?namespace=my%20docs', '/kb/v1/base_list?namespace=my-docs']);
  });

  it('traces one line per attempt: METHOD URL STATUS Nms', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: 'alive' }));
    const lines: string[] = [];
    await client({ url: server.url, trace: (line) => lines.push(line) }).health();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^GET ${server.url}/v1/health 200 \\d+ms$`));
  });
});

describe('KbClient connections', () => {
  interface Arrival {
    method: string;
    /** Which connection it came on, numbered as they were opened. */
    connection: number;
    /** Requests on that connection still unanswered when it arrived: more than 0 is a pipelined request. */
    unansweredBefore: number;
    idempotencyKey: string | undefined;
  }

  /** A server that answers a request only when `release` says so, noting each request's connection and what was unanswered on it. */
  async function holding(answer: (hit: Hit) => unknown) {
    const arrivals: Arrival[] = [];
    const connections = new Map<Socket, number>();
    const unanswered = new Map<Socket, number>();
    const held: Array<() => void> = [];
    let waiting: { count: number; resolve: () => void } | undefined;
    const server = await stub((hit, response, request) => {
      const socket = request.socket;
      if (!connections.has(socket)) connections.set(socket, connections.size);
      const before = unanswered.get(socket) ?? 0;
      unanswered.set(socket, before + 1);
      const key = hit.headers['idempotency-key'];
      arrivals.push({ method: hit.method, connection: connections.get(socket) as number, unansweredBefore: before, idempotencyKey: Array.isArray(key) ? key[0] : key });
      held.push(() => {
        response.once('finish', () => unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1));
        json(response, 200, { success: true, data: answer(hit) });
      });
      if (waiting !== undefined && arrivals.length >= waiting.count) waiting.resolve();
    });
    return {
      url: server.url,
      arrivals,
      /** Resolves once `count` requests have arrived. */
      arrived: (count: number) =>
        new Promise<void>((resolve) => {
          if (arrivals.length >= count) resolve();
          else waiting = { count, resolve };
        }),
      release: () => {
        for (const reply of held.splice(0)) reply();
      },
    };
  }

  const echoNamespace = (hit: Hit) => (hit.method === 'GET' ? [] : JSON.parse(hit.body));

  /** A client of `server` after a first reply has shown that the server keeps its connections open (bulk by default). */
  async function afterFirstReply(server: Awaited<ReturnType<typeof holding>>, options: { bulk: boolean } = { bulk: true }): Promise<KbClient> {
    const kb = client({ url: server.url, token: 't', bulk: options.bulk });
    const first = kb.nsList();
    await server.arrived(1);
    server.release();
    expect(await first).toEqual([]);
    return kb;
  }

  it('a bulk client sends GETs and keyed writes several to a connection (pipelined), on 2 connections at most', async () => {
    const server = await holding(echoNamespace);
    const kb = await afterFirstReply(server);
    const keys = Array.from({ length: 12 }, (_, i) => `ns-${i}`);
    const creates = keys.map((key) => kb.nsCreate({ key, description: null }));
    const lists = Array.from({ length: 4 }, () => kb.nsList());
    // Every request is on its way before any is answered: none waits for a reply to be sent.
    await server.arrived(17);
    server.release();
    expect(await Promise.all(creates)).toEqual(keys.map((key) => ({ key, description: null })));
    expect(await Promise.all(lists)).toEqual([[], [], [], []]);
    expect(new Set(server.arrivals.map((arrival) => arrival.connection)).size).toBeLessThanOrEqual(2);
    expect(Math.max(...server.arrivals.map((arrival) => arrival.unansweredBefore))).toBeGreaterThan(1);
    expect(new Set(server.arrivals.filter((arrival) => arrival.method === 'POST').map((arrival) => arrival.idempotencyKey)).size).toBe(12);
  });

  it('a bulk client pipelines nothing before a reply has kept its connection open', async () => {
    const server = await holding(echoNamespace);
    const kb = client({ url: server.url, token: 't', bulk: true });
    const lists = Array.from({ length: 4 }, () => kb.nsList());
    await server.arrived(2);
    // A while for requests that would not wait to arrive.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.arrivals).toHaveLength(2);
    server.release();
    await server.arrived(4);
    server.release();
    expect(await Promise.all(lists)).toEqual([[], [], [], []]);
    expect(server.arrivals.map((arrival) => arrival.unansweredBefore)).toEqual([0, 0, 0, 0]);
  });

  it('a bulk client pipelines nothing to a server that closes each connection after one reply: each write is sent once', async () => {
    // Connection: close: whatever was pipelined behind the reply would be lost, and sent again.
    const server = await stub((hit, response) => json(response, 200, { success: true, data: echoNamespace(hit) }, { connection: 'close' }));
    const kb = client({ url: server.url, token: 't', bulk: true });
    expect(await kb.nsList()).toEqual([]);
    const keys = Array.from({ length: 20 }, (_, i) => `ns-${i}`);
    expect(await Promise.all(keys.map((key) => kb.nsCreate({ key, description: null })))).toEqual(keys.map((key) => ({ key, description: null })));
    // Each write arrived under one key of its own, however often it was sent.
    const keyOf = new Map<string, Set<unknown>>();
    for (const hit of server.hits.filter((sent) => sent.method === 'POST')) {
      const { key } = JSON.parse(hit.body) as { key: string };
      keyOf.set(key, (keyOf.get(key) ?? new Set()).add(hit.headers['idempotency-key']));
    }
    expect([...keyOf.keys()].sort()).toEqual([...keys].sort());
    expect([...keyOf.values()].every((sent) => sent.size === 1)).toBe(true);
    expect(server.hits).toHaveLength(21);
  });

  it('a bulk client never sends a write without an Idempotency-Key behind a request still unanswered on its connection', async () => {
    const server = await holding(echoNamespace);
    const kb = await afterFirstReply(server);
    const lists = Array.from({ length: 3 }, () => kb.nsList());
    await server.arrived(4);
    const raw = kb.raw('POST', '/ns_create', '{"key":"docs","description":null}');
    // A while for a write that would not wait to arrive; the GETs are answered only then, and the write, which waits
    // for a connection with nothing unanswered on it, arrives after that.
    await Promise.race([server.arrived(5), new Promise((resolve) => setTimeout(resolve, 200))]);
    server.release();
    await server.arrived(5);
    server.release();
    expect((await raw).status).toBe(200);
    expect(await Promise.all(lists)).toEqual([[], [], []]);
    const post = server.arrivals.find((arrival) => arrival.method === 'POST');
    expect(post).toMatchObject({ unansweredBefore: 0, idempotencyKey: undefined });
  });
  it('any other client sends one request a connection at a time: a reply held back holds up no later request', async () => {
    // The terminal UI's case: a slow list (a big organization, a busy deployment) must not hold up the next screen.
    let heldBack: ServerResponse | undefined;
    const server = await stub((hit, response) => {
      if (hit.url.includes('base_list')) heldBack = response; // the slow request, answered at the end
      else json(response, 200, { success: true, data: [] });
    });
    const kb = client({ url: server.url, token: 't' });
    expect(await kb.nsList()).toEqual([]);
    const slow = kb.baseList('docs');
    await vi.waitFor(() => expect(heldBack).toBeDefined());
    // Behind the unanswered request on its connection, these would wait for it; each gets a connection of its own.
    expect(await Promise.all([kb.nsList(), kb.nsList(), kb.nsList()])).toEqual([[], [], []]);
    json(heldBack as ServerResponse, 200, { success: true, data: [] });
    expect(await slow).toEqual([]);
  });

  it('any other client keeps to 16 connections, nothing pipelined, however many requests it has at once', async () => {
    const server = await holding(echoNamespace);
    const kb = await afterFirstReply(server, { bulk: false });
    const lists = Array.from({ length: 24 }, () => kb.nsList());
    await server.arrived(17);
    // A while for requests that would not wait for a connection to arrive.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.arrivals).toHaveLength(17);
    while (server.arrivals.length < 25) {
      server.release();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    server.release();
    expect(await Promise.all(lists)).toEqual(lists.map(() => []));
    expect(new Set(server.arrivals.map((arrival) => arrival.connection)).size).toBeLessThanOrEqual(16);
    expect(server.arrivals.map((arrival) => arrival.unansweredBefore)).toEqual(server.arrivals.map(() => 0));
  });
});

describe('KbClient: whether a failed write may have run', () => {
  const failure = (response: ServerResponse, status: number, headers: Record<string, string> = {}) =>
    json(response, status, { success: false, message: `failed with ${status}`, help: null }, headers);

  it('a keyed write whose connection was lost after it was sent, then answered 503 until the retries end, may have run', async () => {
    const server = await stub((hit, response, request) => {
      if (server.hits.length === 1) request.socket.destroy();
      else failure(response, 503, { 'retry-after': '0' });
    });
    const error = await rejection(client({ url: server.url, token: 't', retries: 2 }).nsCreate({ key: 'docs', description: null }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, mayHaveRun: true, help: MAY_HAVE_RUN_HELP });
    expect(server.hits).toHaveLength(3);
    expect(new Set(server.hits.map((hit) => hit.headers['idempotency-key'])).size).toBe(1);
  });

  it('a keyed write whose connection is lost every time gives a NetworkError that says it may have run, and what to do', async () => {
    const server = await stub((_hit, _response, request) => request.socket.destroy());
    const kb = client({ url: server.url, token: 't', retries: 1 });
    const error = await rejection(kb.nsCreate({ key: 'docs', description: null }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ kind: 'reset', mayHaveRun: true, help: MAY_HAVE_RUN_HELP });
    // A read lost the same way is only retried: nothing to look at before sending it again.
    expect(await rejection(kb.nsList())).toMatchObject({ kind: 'reset', mayHaveRun: true, help: undefined });
  });

  it('a keyed write answered 503 every time, its connection never lost, did not run', async () => {
    const server = await stub((_hit, response) => failure(response, 503, { 'retry-after': '0' }));
    const error = await rejection(client({ url: server.url, token: 't', retries: 2 }).nsCreate({ key: 'docs', description: null }));
    expect(error).toMatchObject({ status: 503, mayHaveRun: false });
  });

  it('a write a gateway answered 502 or 504 for may have run; a read never counts', async () => {
    for (const status of [502, 504]) {
      const server = await stub((_hit, response) => failure(response, status));
      const kb = client({ url: server.url, token: 't', retries: 0 });
      expect(await rejection(kb.nsCreate({ key: 'docs', description: null }))).toMatchObject({ status, mayHaveRun: true });
      expect(await rejection(kb.nsList())).toMatchObject({ status, mayHaveRun: false });
    }
  });

  it('a keyed write whose first request is still running when the retries end may have run', async () => {
    const server = await stub((_hit, response) => failure(response, 409, { 'retry-after': '60' }));
    const error = await rejection(client({ url: server.url, token: 't', retries: 2 }).nsCreate({ key: 'docs', description: null }));
    expect(error).toMatchObject({ status: 409, exitCode: 1, mayHaveRun: true });
  });

  it('a 409 of data (a key taken) did not run', async () => {
    const server = await stub((_hit, response) => failure(response, 409));
    const error = await rejection(client({ url: server.url, token: 't', retries: 2 }).nsCreate({ key: 'docs', description: null }));
    expect(error).toMatchObject({ status: 409, exitCode: 5, mayHaveRun: false });
  });
});

describe('KbClient network failures', () => {
  it('a closed port gives NetworkError kind refused, naming the URL, exit code 6', async () => {
    const url = await closedPortUrl();
    const error = await rejection(client({ url, retries: 0 }).health());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ name: 'NetworkError', code: 'network_error', kind: 'refused', url: `${url}/v1/health`, method: 'GET' });
    expect((error as Error).message).toBe(`cannot reach ${url}/v1/health: connection refused`);
    expect(exitCodeFor(error)).toBe(6);
  });

  it('retries a refused GET with backoff, once per retry', async () => {
    const url = await closedPortUrl();
    const lines: string[] = [];
    const started = Date.now();
    await rejection(client({ url, retries: 2, trace: (line) => lines.push(line) }).nsList());
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^GET ${url}/v1/ns_list refused \\d+ms \\(retrying in \\d+ms\\)$`));
    expect(lines[2]).toMatch(/refused \d+ms$/);
    // 100 ms then 200 ms, each within 25% jitter.
    expect(Date.now() - started).toBeGreaterThanOrEqual(220);
  });

  it('retries a write on a refused connection, since it carries an Idempotency-Key', async () => {
    const url = await closedPortUrl();
    const lines: string[] = [];
    const error = await rejection(client({ url, retries: 3, trace: (line) => lines.push(line) }).nsCreate({ key: 'docs' }));
    expect(error).toMatchObject({ kind: 'refused', method: 'POST' });
    expect(lines).toHaveLength(4);
  });

  it('never retries a POST without an Idempotency-Key (a raw request), even when the connection was refused', async () => {
    const url = await closedPortUrl();
    const lines: string[] = [];
    await rejection(client({ url, retries: 3, trace: (line) => lines.push(line) }).raw('POST', '/ns_create', '{"key":"docs"}'));
    expect(lines).toHaveLength(1);
  });

  it('a server that accepts and never answers gives NetworkError kind timeout after timeoutMs, not retried', async () => {
    const url = await silentServer();
    const lines: string[] = [];
    const started = Date.now();
    const error = await rejection(client({ url, timeoutMs: 300, retries: 2, trace: (line) => lines.push(line) }).health());
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ kind: 'timeout', url: `${url}/v1/health` });
    expect((error as Error).message).toBe(`cannot reach ${url}/v1/health: timed out (no complete reply within 300 ms)`);
    expect(exitCodeFor(error)).toBe(6);
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(2000);
    expect(lines).toEqual([expect.stringMatching(/^GET .* timeout \d+ms$/)]);
  });

  it('a host name that does not resolve gives NetworkError kind dns, not retried', async () => {
    // A resolver that knows no names, so the test does not depend on the sandbox's DNS.
    const noNames = new Agent({
      connect: {
        lookup: ((host, _options, callback) =>
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), '', 4)) satisfies LookupFunction,
      },
    });
    cleanups.push(() => noNames.close());
    const lines: string[] = [];
    const error = await rejection(client({ url: 'http://kb.example.invalid', dispatcher: noNames, trace: (line) => lines.push(line) }).health());
    expect(error).toMatchObject({ name: 'NetworkError', kind: 'dns' });
    expect((error as Error).message).toBe('cannot reach http://kb.example.invalid/v1/health: host name not found (DNS)');
    expect(exitCodeFor(error)).toBe(6);
    expect(lines).toHaveLength(1);
  });

  it('https to a server that does not speak TLS gives NetworkError kind tls, in plain words', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: 'alive' }));
    const url = server.url.replace('http:', 'https:');
    const error = await rejection(client({ url }).health());
    expect(error).toMatchObject({ name: 'NetworkError', kind: 'tls' });
    expect((error as Error).message).toBe(`cannot reach ${url}/v1/health: TLS failed: wrong version number`);
    expect(exitCodeFor(error)).toBe(6);
  });

  it('a connection the server drops before answering gives NetworkError kind reset', async () => {
    const dropper = createNetServer((socket) => socket.on('data', () => socket.destroy()));
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => dropper.close(() => resolve())));
    const url = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}`;
    const lines: string[] = [];
    const error = await rejection(client({ url, retries: 1, trace: (line) => lines.push(line) }).health());
    expect(error).toMatchObject({ name: 'NetworkError', kind: 'reset' });
    expect(lines).toHaveLength(2);
  });
});

describe('KbClient replies that are not the kb envelope', () => {
  it('an HTML page answered with 200 gives ResponseFormatError naming the URL and status, exit code 1', async () => {
    const server = await stub((_hit, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'));
    const error = await rejection(client({ url: server.url, token: 't' }).nsList());
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error).toMatchObject({ name: 'ResponseFormatError', code: 'bad_response', status: 200, url: `${server.url}/v1/ns_list` });
    expect((error as Error).message).toBe(
      `${server.url}/v1/ns_list answered 200 with something that is not a kb API reply: the body is not JSON (content-type text/html)`,
    );
    expect(exitCodeFor(error)).toBe(1);
  });

  it('JSON that is not an envelope gives ResponseFormatError', async () => {
    const server = await stub((_hit, response) => json(response, 200, { foo: 1 }));
    const error = await rejection(client({ url: server.url, token: 't' }).nsList());
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect((error as Error).message).toMatch(/answered 200 with something that is not a kb API reply: the JSON is not a success envelope/);
  });

  it('a success envelope whose data has the wrong shape gives ResponseFormatError naming the field', async () => {
    const server = await stub((_hit, response) => json(response, 200, { success: true, data: [{ key: 1 }] }));
    const error = await rejection(client({ url: server.url, token: 't' }).nsList());
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect((error as Error).message).toMatch(/the data is not what \/ns_list returns \(data\.0\.key: /);
  });

  it('an empty body gives ResponseFormatError', async () => {
    const server = await stub((_hit, response) => response.writeHead(500).end());
    const error = await rejection(client({ url: server.url, token: 't' }).auth());
    expect(error).toMatchObject({ name: 'ResponseFormatError', status: 500 });
    expect((error as Error).message).toMatch(/answered 500 with something that is not a kb API reply: the body is empty$/);
    expect(exitCodeFor(error)).toBe(1);
  });

  it('an HTML 404 from whatever answers at that URL still exits 3', async () => {
    const server = await stub((_hit, response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
    const error = await rejection(client({ url: server.url, token: 't' }).nsUpdate({ namespace: 'docs', data: {} }));
    expect(error).toMatchObject({ name: 'ResponseFormatError', status: 404 });
    expect(exitCodeFor(error)).toBe(3);
  });

  it('a redirect is reported with where it points, not followed', async () => {
    const server = await stub((_hit, response) => response.writeHead(301, { location: 'https://elsewhere.example/v1/health' }).end('moved'));
    const error = await rejection(client({ url: server.url }).health());
    expect((error as Error).message).toMatch(/answered 301 .*redirect to https:\/\/elsewhere\.example\/v1\/health/);
  });
});

describe('KbClient retries', () => {
  it('retries a GET answered 503, then returns the success', async () => {
    const server = await stub((_hit, response) => {
      if (server.hits.length === 1) json(response, 503, { success: false, message: 'Service is shutting down' });
      else json(response, 200, { success: true, data: [] });
    });
    const lines: string[] = [];
    expect(await client({ url: server.url, token: 't', trace: (line) => lines.push(line) }).nsList()).toEqual([]);
    expect(server.hits).toHaveLength(2);
    expect(lines[0]).toMatch(/^GET \S+ 503 \d+ms \(retrying in \d+ms\)$/);
    expect(lines[1]).toMatch(/^GET \S+ 200 \d+ms$/);
  });

  it('retries a GET on 502 and 504 too, and gives up after `retries` retries with the last ApiError', async () => {
    const statuses = [502, 504, 503];
    const server = await stub((_hit, response) => json(response, statuses[server.hits.length - 1] ?? 500, { success: false, message: 'upstream' }));
    const error = await rejection(client({ url: server.url, token: 't', retries: 2 }).nsList());
    expect(server.hits).toHaveLength(3);
    expect(error).toMatchObject({ name: 'ApiError', status: 503, code: 'unavailable', message: 'upstream' });
    expect(exitCodeFor(error)).toBe(1);
  });

  it('retries a POST answered 503 with the same Idempotency-Key, a fresh key for the next write', async () => {
    const server = await stub((_hit, response) => json(response, 503, { success: false, message: 'busy' }));
    const kb = client({ url: server.url, token: 't', retries: 3 });
    const error = await rejection(kb.nsCreate({ key: 'docs' }));
    expect(error).toMatchObject({ name: 'ApiError', status: 503, method: 'POST' });
    expect(server.hits).toHaveLength(4);
    const keys = new Set(server.hits.map((hit) => hit.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    await rejection(kb.nsCreate({ key: 'docs' }));
    expect(server.hits[4]?.headers['idempotency-key']).not.toBe([...keys][0]);
  });

  it('retries a write answered "still in progress" (409 with Retry-After) with the same key, and takes the reply it then gets', async () => {
    const running = { success: false, message: 'A request with this Idempotency-Key is still in progress' };
    const server = await stub((_hit, response) => {
      if (server.hits.length === 1) json(response, 409, running, { 'retry-after': '1' });
      else json(response, 200, { success: true, data: { key: 'docs', description: null } }, { 'idempotent-replayed': 'true' });
    });
    expect(await client({ url: server.url, token: 't' }).nsCreate({ key: 'docs' })).toEqual({ key: 'docs', description: null });
    expect(server.hits).toHaveLength(2);
    expect(new Set(server.hits.map((hit) => hit.headers['idempotency-key'])).size).toBe(1);
  });

  it('exits 1, not 5, when a write is still in progress once its retries run out; a 409 of data stays 5 and is not retried', async () => {
    const running = { success: false, message: 'A request with this Idempotency-Key is still in progress' };
    const busy = await stub((_hit, response) => json(response, 409, running, { 'retry-after': '0' }));
    const stillRunning = await rejection(client({ url: busy.url, token: 't', retries: 2 }).nsCreate({ key: 'docs' }));
    expect(busy.hits).toHaveLength(3);
    expect(stillRunning).toMatchObject({ name: 'ApiError', status: 409, exitCode: 1 });
    const taken = await stub((_hit, response) => json(response, 409, { success: false, message: 'Namespace docs already exists' }));
    const conflict = await rejection(client({ url: taken.url, token: 't', retries: 2 }).nsCreate({ key: 'docs' }));
    expect(taken.hits).toHaveLength(1);
    expect(conflict).toMatchObject({ name: 'ApiError', status: 409, exitCode: 5 });
  });

  it('retries a DELETE answered 502, and sends no Idempotency-Key on a GET', async () => {
    const server = await stub((_hit, response) => json(response, 502, { success: false, message: 'bad gateway' }));
    await rejection(client({ url: server.url, token: 't', retries: 1 }).baseDelete({ namespace: 'docs', base: 'faq' }));
    expect(server.hits).toHaveLength(2);
    await rejection(client({ url: server.url, token: 't', retries: 0 }).nsList());
    expect(server.hits[2]?.headers['idempotency-key']).toBeUndefined();
  });

  it('does not retry a 500', async () => {
    const server = await stub((_hit, response) => json(response, 500, { success: false, message: 'Internal server error' }));
    const error = await rejection(client({ url: server.url, token: 't' }).nsList());
    expect(server.hits).toHaveLength(1);
    expect(error).toMatchObject({ status: 500, code: 'internal' });
  });

  it('waits as long as a small Retry-After on 503 asks', async () => {
    const server = await stub((_hit, response) => {
      if (server.hits.length === 1) json(response, 503, { success: false, message: 'later' }, { 'retry-after': '1' });
      else json(response, 200, { success: true, data: 'alive' });
    });
    const started = Date.now();
    expect(await client({ url: server.url }).health()).toBe('alive');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('stops retrying when Retry-After asks for more than 5 seconds', async () => {
    const server = await stub((_hit, response) => json(response, 503, { success: false, message: 'maintenance' }, { 'retry-after': '120' }));
    const lines: string[] = [];
    const error = await rejection(client({ url: server.url, trace: (line) => lines.push(line) }).health());
    expect(server.hits).toHaveLength(1);
    // One attempt, and no wait announced: the client gave up at once rather than sleep for 120 s.
    expect(lines).toEqual([expect.stringMatching(/^GET \S+ 503 \d+ms$/)]);
    expect(error).toMatchObject({ status: 503, message: 'maintenance' });
  });
});

describe('KbClient baseList on a deployment without the base_list extension', () => {
  const withoutBaseList = (namespaces: string[], notFound: (response: ServerResponse) => void) =>
    stub((hit, response) => {
      if (hit.url.startsWith('/v1/ns_list')) {
        json(response, 200, { success: true, data: namespaces.map((key) => ({ key, description: null })) });
      } else {
        notFound(response);
      }
    });
  const envelope404 = (response: ServerResponse) => json(response, 404, { success: false, message: 'No such route: GET /v1/base_list' });

  it('gives BaseListUnsupportedError when base_list is 404 but the namespace exists', async () => {
    const server = await withoutBaseList(['docs'], envelope404);
    const error = await rejection(client({ url: server.url, token: 't' }).baseList('docs'));
    expect(error).toBeInstanceOf(BaseListUnsupportedError);
    expect(error).toMatchObject({ name: 'BaseListUnsupportedError', code: 'base_list_unsupported', namespace: 'docs' });
    expect((error as Error).message).toBe('this deployment does not offer base_list (an extension of kb serve)');
    expect(server.hits.map((hit) => hit.url)).toEqual(['/v1/base_list?namespace=docs', '/v1/ns_list']);
    expect(exitCodeFor(error)).toBe(2);
  });

  it('rethrows the 404 when the namespace does not exist either', async () => {
    const server = await withoutBaseList(['docs'], envelope404);
    const error = await rejection(client({ url: server.url, token: 't' }).baseList('other'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404 });
    expect(exitCodeFor(error)).toBe(3);
  });

  it('treats an HTML 404 for base_list the same way', async () => {
    const server = await withoutBaseList(['docs'], (response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404</h1>'));
    expect(await rejection(client({ url: server.url, token: 't' }).baseList('docs'))).toBeInstanceOf(BaseListUnsupportedError);
  });
});

describe('KbClient keeps the token secret', () => {
  it('the token appears in no trace line, error message or thrown object, whatever fails', async () => {
    const lines: string[] = [];
    const trace = (line: string) => lines.push(line);
    const real = await startTestServer();
    cleanups.push(() => real.close());
    // 503 first (so a retry is traced), then an HTML page.
    const flaky = await stub((_hit, response) => {
      if (flaky.hits.length === 1) json(response, 503, { success: false, message: 'busy' });
      else response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    });
    const failures = [
      client({ url: real.url, token: CANARY, trace }).nsList(),
      client({ url: real.url, token: CANARY, trace }).nsCreate({ key: 'x' }),
      client({ url: await closedPortUrl(), token: CANARY, trace, retries: 1 }).auth(),
      client({ url: await silentServer(), token: CANARY, trace, timeoutMs: 200 }).auth(),
      client({ url: flaky.url, token: CANARY, trace }).nsList(),
      client({ url: real.url, token: CANARY, trace }).baseList('missing'),
    ];
    const errors = await Promise.all(failures.map(rejection));
    expect(errors.map((error) => (error as Error).name)).toEqual([
      'ApiError', 'ApiError', 'NetworkError', 'NetworkError', 'ResponseFormatError', 'ApiError',
    ]);
    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const text of [...lines, ...errors.map((error) => inspect(error, { depth: 8, showHidden: true }))]) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain('CANARY');
    }
    expect(JSON.stringify(errors)).not.toContain('CANARY');
  });

  it('rejects a token that could not go in a header without quoting it', () => {
    const error = (() => {
      try {
        new KbClient({ url: 'http://127.0.0.1:1', token: `${CANARY}\n` });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ClientOptionsError);
    expect((error as Error).message).not.toContain('CANARY');
    expect(exitCodeFor(error)).toBe(2);
  });
});

describe('KbClient options', () => {
  it.each([
    ['ftp://host', /must start with http:\/\/ or https:\/\//],
    ['not a url', /not a URL/],
    ['http://user:secret@host', /must not carry a user name or password/],
    ['http://host/?x=1', /must not carry a query string/],
  ])('rejects the base URL %s with ClientOptionsError', (url, message) => {
    expect(() => new KbClient({ url })).toThrow(message);
    expect(() => new KbClient({ url })).toThrow(ClientOptionsError);
  });

  it('rejects a timeout that is not positive and retries that are not a whole number', () => {
    expect(() => new KbClient({ url: 'http://h', timeoutMs: 0 })).toThrow(ClientOptionsError);
    expect(() => new KbClient({ url: 'http://h', retries: -1 })).toThrow(ClientOptionsError);
    expect(() => new KbClient({ url: 'http://h', retries: 1.5 })).toThrow(ClientOptionsError);
  });
});
