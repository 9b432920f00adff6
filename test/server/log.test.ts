import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { createLogger, prettyLine } from '../../src/server/logger.js';
import { generateToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { isolatedEnv, KB_BIN } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { fetchCall } from '../helpers/http.js';

interface Line {
  time: number;
  level: string;
  reqId?: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
  msg: string;
}

describe('the request log', () => {
  let database: TestDatabase;
  let store: Store;
  let app: FastifyInstance;
  let url = '';
  let port = 0;
  let token = '';
  const raw: string[] = [];
  const lines = () => raw.map((line) => JSON.parse(line) as Line);
  const requestLines = () => lines().filter((line) => line.msg === 'request');

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await database.open();
    app = buildApp({ store, logger: createLogger('info', { format: 'json', sink: (line) => raw.push(line) }) });
    const minted = generateToken();
    await store.createToken('acme', minted.id, minted.hash);
    token = minted.token;
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await database?.drop();
  });
  beforeEach(() => {
    raw.length = 0;
  });

  it('writes one line per request: time, level, request id, method, path, status, duration', async () => {
    const requests: Array<[string, string, number]> = [
      ['GET', '/v1/health', 200],
      ['GET', '/v1/ns_list', 401],
      ['POST', '/v1/health', 405],
      ['GET', '/v1/nope?x=1', 404],
    ];
    const ids: string[] = [];
    const before = Date.now();
    for (const [method, path] of requests) ids.push(String((await fetchCall(url, method, path)).headers['x-request-id']));
    const after = Date.now();
    const logged = requestLines();
    expect(logged).toHaveLength(requests.length);
    expect(raw).toHaveLength(requests.length);
    logged.forEach((line, i) => {
      const [method, path, status] = requests[i] as [string, string, number];
      expect(line).toEqual({ time: expect.any(Number), level: 'info', reqId: ids[i], method, path, status, ms: expect.any(Number), msg: 'request' });
      expect(line.time).toBeGreaterThanOrEqual(before);
      expect(line.time).toBeLessThanOrEqual(after);
      expect(line.ms).toBeGreaterThanOrEqual(0);
    });
  });

  it('takes X-Request-Id from the request when it is 1 to 128 visible ASCII characters, and returns it', async () => {
    for (const id of ['a', 'trace-7f3a/b:c', '~'.repeat(128)]) {
      const reply = await fetchCall(url, 'GET', '/v1/health', { headers: { 'x-request-id': id } });
      expect(reply.headers['x-request-id']).toBe(id);
    }
    expect(requestLines().map((line) => line.reqId)).toEqual(['a', 'trace-7f3a/b:c', '~'.repeat(128)]);
  });

  it('generates a request id, unique, when the one sent is not valid', async () => {
    const invalid = ['x'.repeat(129), 'has space', 'caf\u00e9', ''];
    const ids: string[] = [];
    for (const id of invalid) {
      const reply = await fetchCall(url, 'GET', '/v1/health', { headers: { 'x-request-id': id } });
      ids.push(String(reply.headers['x-request-id']));
    }
    const generated = (await fetchCall(url, 'GET', '/v1/health')).headers['x-request-id'];
    ids.push(String(generated));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(requestLines().map((line) => line.reqId)).toEqual(ids);
  });

  it('returns the request id on every reply, and logs each under it once: errors, framework errors, 417, and a malformed request answered by hand', async () => {
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ['GET', '/v1/auth', {}, 401],
      ['GET', '/v1/auth', { authorization: `Bearer ${token}` }, 200],
      ['GET', '/v1/nope', {}, 404],
      ['DELETE', '/v1/health', {}, 405],
      ['GET', '/v1/%E0%A4%A', {}, 400],
      ['POST', '/v1/ns_create', { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, 415],
    ];
    for (const [method, path, headers, status] of cases) {
      const reply = await fetchCall(url, method, path, { headers: { ...headers, 'x-request-id': `case-${status}` }, ...(method === 'POST' ? { payload: 'x' } : {}) });
      expect(reply.status, `${method} ${path}`).toBe(status);
      expect(reply.headers['x-request-id'], `${method} ${path}`).toBe(`case-${status}`);
    }
    const exchange = (request: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
        socket.on('close', () => resolve(received));
        socket.write(request);
      });
    // fetch will not send Expect.
    const refused = await exchange('GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Request-Id: case-417\r\nConnection: close\r\n\r\n');
    expect(refused).toMatch(/^HTTP\/1\.1 417 [^]*\r\nx-request-id: case-417\r\n/i);
    // One line each, with its status, however it was answered (a URL Fastify cannot decode included).
    for (const status of [...cases.map((entry) => entry[3]), 417]) {
      expect(requestLines().filter((line) => line.reqId === `case-${status}`).map((line) => line.status), `case-${status}`).toEqual([status]);
    }
    const answer = await exchange('NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const id = /\r\nx-request-id: (\S+)\r\n/i.exec(answer)?.[1];
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(lines().find((line) => line.reqId === id)).toMatchObject({ level: 'info', status: 400 });
  });

  it('never holds a token: not in a mistyped path, a query string, a request id, encoded or not', async () => {
    const secret = token.slice(4);
    const encoded = encodeURIComponent(token).replace('_', '%5F');
    const paths = [
      `/v1/${token}`,
      `/v1/ns_list/${token}`,
      `/${token}/v1/health`,
      `/v1/health?token=${token}`,
      `/v1/ns_list?access_token=${encoded}`,
      `/v1/base_list?namespace=${secret}`,
      `/v1/health?t=${secret}&u=1`,
    ];
    for (const path of paths) await fetchCall(url, 'GET', path, { token });
    await fetchCall(url, 'GET', '/v1/health', { headers: { 'x-request-id': token } });
    await fetchCall(url, 'GET', '/v1/health', { headers: { authorization: `Bearer ${token}` } });
    const text = raw.join('\n');
    expect(requestLines()).toHaveLength(paths.length + 2);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(0, 20));
    expect(text).toContain('[REDACTED]');
    // What is not token-shaped stays readable.
    expect(requestLines().map((line) => line.path)).toContain('/v1/health?t=[REDACTED]&u=1');
  });

  it('logs an unexpected failure with its stack, under the request id, at error', async () => {
    const failing = buildApp({
      store: { authenticate: async () => ({ orgId: 1, org: 'acme', tokenId: 'tok_1', scope: 'full', expiresAt: null }), markTokensUsed: async () => undefined, nsList: async () => Promise.reject(new Error('disk on fire')) } as unknown as Store,
      logger: createLogger('info', { format: 'json', sink: (line) => raw.push(line) }),
    });
    try {
      const reply = await failing.inject({ method: 'GET', url: '/v1/ns_list', headers: { authorization: 'Bearer kbt_x', 'x-request-id': 'boom-1' } });
      expect(reply.statusCode).toBe(500);
      const error = lines().find((line) => line.level === 'error') as Line & { err: { stack: string } };
      expect(error).toMatchObject({ reqId: 'boom-1', msg: 'request failed' });
      expect(error.err.stack).toContain('disk on fire');
      expect(requestLines()).toEqual([expect.objectContaining({ reqId: 'boom-1', status: 500 })]);
    } finally {
      await failing.close();
    }
  });

  it('logs nothing of a request at warn', async () => {
    const quiet: string[] = [];
    const warnApp = buildApp({ store, logger: createLogger('warn', { format: 'json', sink: (line) => quiet.push(line) }) });
    try {
      expect((await warnApp.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
      expect(quiet).toEqual([]);
    } finally {
      await warnApp.close();
    }
  });
});

describe('the pretty format', () => {
  it('puts a request on one short line, and an error stack under its line', () => {
    const request = prettyLine('{"level":"info","time":1795460400000,"reqId":"r-1","method":"GET","path":"/v1/health","status":200,"ms":0.42,"msg":"request"}\n');
    expect(request).toBe(`${new Date(1795460400000).toISOString()} INFO  [r-1] GET /v1/health 200 0.42 ms\n`);
    const failure = prettyLine('{"level":"error","time":"2026-11-23T19:00:00.000Z","reqId":"r-2","err":{"type":"Error","message":"boom","stack":"Error: boom\\n    at x"},"msg":"request failed"}\n');
    expect(failure).toBe('2026-11-23T19:00:00.000Z ERROR [r-2] request failed\n    Error: boom\n        at x\n');
  });
});

describe('kb serve, the built CLI', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** Starts `kb serve --port 0` with these log flags; resolves once it listens. */
  function serve(flags: string[]) {
    const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', '0', ...flags], { env: isolatedEnv(database.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const listening = new Promise<string>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const found = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
        if (found) resolve(found);
      });
      void exited.then((code) => reject(new Error(`kb serve exited (${code}) before listening: ${stderr}`)));
    });
    child.stdout.resume();
    return { child, listening, exited, stderr: () => stderr };
  }

  it('logs every request of a burst answered before SIGTERM, even when the log reader lags behind', async () => {
    const server = serve(['--log-level', 'info', '--log-format', 'json']);
    try {
      const url = await server.listening;
      // Nothing reads the log while the burst runs: the pipe fills, the lines wait in the server.
      server.child.stderr.pause();
      const ids = Array.from({ length: 1200 }, (_, i) => `burst-${i}`);
      const statuses: number[] = [];
      for (let start = 0; start < ids.length; start += 50) {
        const wave = ids.slice(start, start + 50).map((id) => {
          const path = Number(id.slice(6)) % 2 === 0 ? '/v1/health' : '/v1/ns_list';
          return fetchCall(url, 'GET', path, { headers: { 'x-request-id': id } }).then((reply) => reply.status);
        });
        statuses.push(...(await Promise.all(wave)));
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(ids.length / 2);
      server.child.kill('SIGTERM');
      server.child.stderr.resume();
      expect(await server.exited).toBe(0);
      const logged = server.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Line);
      const byId = new Map(logged.filter((line) => line.msg === 'request').map((line) => [line.reqId, line]));
      expect(ids.filter((id) => !byId.has(id))).toEqual([]);
      expect(byId.get('burst-0')).toMatchObject({ level: 'info', method: 'GET', path: '/v1/health', status: 200 });
      expect(byId.get('burst-1')).toMatchObject({ level: 'info', method: 'GET', path: '/v1/ns_list', status: 401 });
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('writes the line of a lone request while the server runs on, though the log is written in batches', async () => {
    const server = serve(['--log-level', 'info', '--log-format', 'json']);
    try {
      const url = await server.listening;
      expect((await fetchCall(url, 'GET', '/v1/health', { headers: { 'x-request-id': 'lone-request' } })).status).toBe(200);
      // One line is far short of a batch: it is written all the same, with no other request and no shutdown.
      await expect.poll(() => server.stderr(), { timeout: 5000 }).toMatch(/"reqId":"lone-request"/);
      expect(server.child.exitCode).toBeNull();
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('writes only whole JSON lines in JSON mode, its own included (one listening line, stopped last), with a slow reader', async () => {
    // The default format off a terminal; info, so that every request is a line of its own.
    const server = serve(['--log-level', 'info']);
    const stream = server.child.stderr;
    try {
      const url = await server.listening;
      // From now on the log is read slowly: in short bursts with pauses between, so the pipe is full most of the time
      // and the server's writes wait on it, as with a log shipper that lags behind.
      stream.pause();
      const reader = setInterval(() => {
        stream.resume();
        setImmediate(() => stream.pause());
      }, 20);
      const waves: Array<Promise<unknown>> = [];
      // The ids of the requests answered (200, 401 or the closing server's 503), each of which must have its line.
      const answered: string[] = [];
      for (let wave = 0; wave < 30; wave++) {
        const requests = Array.from({ length: 50 }, (_, i) => {
          const id = `slow-${wave}-${i}`;
          return fetchCall(url, 'GET', i % 2 === 0 ? '/v1/health' : '/v1/ns_list', { headers: { 'x-request-id': id } }).then(
            () => answered.push(id),
            () => undefined,
          );
        });
        waves.push(...requests);
        // The signal comes as a wave goes out, while the lines of the waves before wait for the reader: those of the
        // wave that reach the server before it stops listening are answered, the rest refused.
        if (wave === 20) server.child.kill('SIGTERM');
        else if (wave < 20) await Promise.all(requests);
      }
      await Promise.all(waves);
      const code = await server.exited;
      clearInterval(reader);
      stream.resume();
      await new Promise((resolve) => (stream.readableEnded ? resolve(undefined) : stream.once('end', resolve)));
      expect(code).toBe(0);
      const text = server.stderr();
      expect(text.endsWith('\n'), text.slice(-300)).toBe(true);
      const logged = text
        .slice(0, -1)
        .split('\n')
        .map((line) => {
          try {
            return JSON.parse(line) as Line;
          } catch {
            throw new Error(`not one whole JSON object: ${JSON.stringify(line)}`);
          }
        });
      expect(logged.filter((line) => /listening/i.test(line.msg))).toEqual([expect.objectContaining({ level: 'info', msg: expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+ /) })]);
      expect(logged.filter((line) => line.msg.startsWith('SIGTERM'))).toHaveLength(1);
      expect(logged.at(-1)).toEqual({ level: 'info', time: expect.any(Number), msg: 'stopped' });
      const lined = new Set(logged.filter((line) => line.msg === 'request').map((line) => line.reqId));
      expect(answered.length).toBeGreaterThanOrEqual(1000);
      expect(answered.filter((id) => !lined.has(id))).toEqual([]);
    } finally {
      server.child.kill('SIGKILL');
    }
  }, 60_000);

  it('writes its own lines in the pretty format too: time, level, message, from listening to stopped', async () => {
    const server = serve(['--log-format', 'pretty', '--log-level', 'warn']);
    try {
      const url = await server.listening;
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      const lines = server.stderr().replace(/\n$/, '').split('\n');
      const time = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
      // Which profile holds a token comes first: the line that says it listens is the last of its start (serve/index.ts).
      expect(lines.filter((line) => new RegExp(`^${time} INFO  listening on ${url.replace(/[.]/g, '\\.')} \\(`).test(line))).toHaveLength(1);
      for (const line of lines) expect(line).toMatch(new RegExp(`^${time} (INFO |WARN ) \\S`));
      expect(lines.at(-2)).toMatch(/ INFO {2}SIGTERM, finishing requests in flight /);
      expect(lines.at(-1)).toMatch(new RegExp(`^${time} INFO  stopped$`));
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('writes pretty lines with --log-format pretty, and JSON by default when stderr is not a terminal', async () => {
    for (const [flags, shape] of [
      [['--log-format', 'pretty'], /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}\[probe\] GET \/v1\/health 200 [\d.]+ ms$/m],
      [[], /^\{"level":"info","time":\d+,"reqId":"probe","method":"GET","path":"\/v1\/health","status":200,"ms":[\d.]+,"msg":"request"\}$/m],
    ] as const) {
      const server = serve([...flags]);
      try {
        const url = await server.listening;
        expect((await fetchCall(url, 'GET', '/v1/health', { headers: { 'x-request-id': 'probe' } })).status).toBe(200);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
        expect(server.stderr()).toMatch(shape);
      } finally {
        server.child.kill('SIGKILL');
      }
    }
  });
});
