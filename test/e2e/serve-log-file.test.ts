import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../helpers/cli.js';
import { freePort, load, logEntries, requestLinesOnce, serveWithLog } from '../helpers/serve-with-log.js';
import { exchangeRaw, pipelined, type WireRequest } from '../helpers/wire.js';
import { tempDir } from '../helpers/temp.js';
import { redactTokens } from '../../src/server/logger.js';

// kb serve writes its log to a regular file at once (sonic-boom's sync mode) and to anything else from libuv's thread
// pool (src/server/logger.ts). These run the built kb serve with its stderr a file, as an operator keeps it.

const IS_ROOT = process.getuid?.() === 0;

/** The requests the metrics on the admin port have counted, all routes, methods and statuses together. */
async function countedRequests(adminPort: number): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  return [...metrics.matchAll(/^kb_http_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('kb serve with its log in a regular file', () => {
  it('writes every request\'s line whole, once, across many batches, long lines too, and its stopped line last', async () => {
    const dir = tempDir('kb-log-file-');
    const logFile = join(dir, 'serve.log');
    const server = await serveWithLog(logFile, await freePort(), isolatedEnv());
    const total = 3000;
    // Every 8th path is long: 6,000 characters fits a batch's buffer, 9,000 (27,000 bytes at most, every 500th) does
    // not. Short segments: a run of 43 word characters is redacted as token-shaped.
    const long = (length: number) => `/v1/${'segment-/'.repeat(length / 9)}`;
    const pathOf = (i: number) => (i % 500 === 499 ? long(9000) : i % 8 === 3 ? long(6003) : '/v1/health');
    const statuses = await load(total, 48, (i) => fetch(`${server.url}${pathOf(i)}`, { headers: { 'x-request-id': `file-${i}` } }));
    expect(statuses.filter((status, i) => status !== (pathOf(i) === '/v1/health' ? 200 : 404))).toEqual([]);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const text = readFileSync(logFile, 'utf8');
    const entries = logEntries(text);
    for (const [i, entry] of requestLinesOnce(entries, 'file-', total).entries()) {
      expect(entry.path?.length, `file-${i}`).toBe(pathOf(i).length);
      expect(entry.status, `file-${i}`).toBe(statuses[i]);
    }
    // Batches of 16 KB many times over, cut from more than two of the buffers of 1 MB they are gathered in: the
    // batches met whole, and no batch was written over by the next.
    expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(entries.at(-1)?.msg).toBe('stopped');
  });

  it('writes one line for each request pipelined on many connections at once, whatever answered it, and counts each once in the metrics', async () => {
    const logFile = join(tempDir('kb-log-every-'), 'serve.log');
    const adminPort = await freePort();
    const server = await serveWithLog(logFile, await freePort(), isolatedEnv(), { args: ['--admin-port', String(adminPort)] });
    // The first token is printed once it is made, after the server first answers.
    await expect.poll(() => /kbt_[\w-]{43}/.test(server.stdout())).toBe(true);
    const token = /kbt_[\w-]{43}/.exec(server.stdout())?.[0] as string;
    const bearer = { authorization: `Bearer ${token}` };
    const json = { ...bearer, 'content-type': 'application/json' };
    // Every way a reply is made: a route, a kept answer, authentication refused, no route, a method not allowed, a URL
    // Fastify cannot decode (its framework errors), a body refused before parsing, HEAD, a write unkeyed, a keyed write
    // and its replay, a write refused by the store (a duplicate key).
    const kinds: Array<{ request: Omit<WireRequest, 'headers'> & { headers?: Record<string, string> }; status: number }> = [
      { request: { method: 'GET', path: '/v1/health' }, status: 200 },
      { request: { method: 'GET', path: '/v1/ns_list', headers: bearer }, status: 200 },
      { request: { method: 'GET', path: '/v1/ns_list' }, status: 401 },
      { request: { method: 'GET', path: '/v1/nope?x=1' }, status: 404 },
      { request: { method: 'DELETE', path: '/v1/health' }, status: 405 },
      { request: { method: 'GET', path: '/v1/%E0%A4%A' }, status: 400 },
      { request: { method: 'POST', path: '/v1/ns_create', headers: { ...bearer, 'content-type': 'text/plain' }, body: 'x' }, status: 415 },
      { request: { method: 'HEAD', path: '/v1/health' }, status: 200 },
      { request: { method: 'POST', path: '/v1/ns_create', headers: json, body: '{"key":"ns-C"}' }, status: 200 },
      { request: { method: 'POST', path: '/v1/ns_create', headers: { ...json, 'idempotency-key': 'key-C' }, body: '{"key":"kept-C"}' }, status: 200 },
      { request: { method: 'POST', path: '/v1/ns_create', headers: { ...json, 'idempotency-key': 'key-C' }, body: '{"key":"kept-C"}' }, status: 200 },
      { request: { method: 'POST', path: '/v1/ns_create', headers: json, body: '{"key":"ns-C"}' }, status: 409 },
    ];
    // 16 refused tokens from one address in all: under the 20 that make it wait (429).
    const connections = 8;
    const rounds = 2;
    const requestsOf = (c: number): WireRequest[] =>
      Array.from({ length: rounds }, (_, round) =>
        kinds.map(({ request }, k) => ({
          ...request,
          body: request.body?.replaceAll('-C', `-${c}-${round}`),
          headers: { ...request.headers, ...(request.headers?.['idempotency-key'] ? { 'idempotency-key': `key-${c}-${round}` } : {}), 'x-request-id': `every-${c}-${round}-${k}` },
        })),
      ).flat();
    const countedNow = () => countedRequests(adminPort);
    const countedBefore = await countedNow();
    const replies = await Promise.all(Array.from({ length: connections }, (_, c) => pipelined(server.url, requestsOf(c))));
    replies.forEach((connection, c) =>
      connection.forEach((reply, i) => {
        const k = i % kinds.length;
        expect(reply.status, `every-${c}-${Math.floor(i / kinds.length)}-${k}`).toBe(kinds[k]?.status);
        expect(reply.headers['x-request-id']).toBe(`every-${c}-${Math.floor(i / kinds.length)}-${k}`);
      }),
    );
    const counted = (await countedNow()) - countedBefore;
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const total = connections * rounds * kinds.length;
    const entries = logEntries(readFileSync(logFile, 'utf8'));
    const lines = entries.filter((entry) => entry.reqId?.startsWith('every-'));
    expect(lines).toHaveLength(total);
    for (const [c, connection] of replies.entries()) {
      for (const [i, reply] of connection.entries()) {
        const id = `every-${c}-${Math.floor(i / kinds.length)}-${i % kinds.length}`;
        expect(lines.filter((entry) => entry.reqId === id).map((entry) => [entry.msg, entry.status]), id).toEqual([['request', reply.status]]);
      }
    }
    // The metrics counted each of them once too (a scrape is on the admin port, not counted).
    expect(counted).toBe(total);
  });

  it('writes a line for and counts every request it reads that no route answers: CONNECT, malformed, a refused Expect', async () => {
    const logFile = join(tempDir('kb-log-unrouted-'), 'serve.log');
    const adminPort = await freePort();
    const server = await serveWithLog(logFile, await freePort(), isolatedEnv(), { args: ['--admin-port', String(adminPort)] });
    // The first token is printed once the server has started, its admin port too.
    await expect.poll(() => /kbt_[\w-]{43}/.test(server.stdout())).toBe(true);
    const countedBefore = await countedRequests(adminPort);
    // Node hands CONNECT to the server's 'connect' listeners, and refuses what its parser cannot read (clientError).
    const connect = await exchangeRaw(server.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: unrouted-connect\r\n\r\n');
    expect(connect).toMatch(/^HTTP\/1\.1 405 [^]*\r\nX-Request-Id: unrouted-connect\r\n/i);
    expect(connect).toContain('"success":false');
    const malformed = await exchangeRaw(server.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    const malformedId = /\r\nx-request-id: (\S+)\r\n/i.exec(malformed)?.[1];
    const expectation = await exchangeRaw(server.url, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Request-Id: unrouted-417\r\n\r\n');
    expect(expectation).toMatch(/^HTTP\/1\.1 417 /);
    // Each of them counted once in the metrics (a scrape is on the admin port, not counted).
    expect((await countedRequests(adminPort)) - countedBefore).toBe(3);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const entries = logEntries(readFileSync(logFile, 'utf8'));
    expect(entries.filter((entry) => entry.reqId === 'unrouted-connect')).toEqual([expect.objectContaining({ level: 'info', method: 'CONNECT', path: 'example.com:443', status: 405, msg: 'request' })]);
    expect(entries.filter((entry) => entry.reqId === malformedId)).toEqual([expect.objectContaining({ level: 'info', status: 400 })]);
    expect(entries.filter((entry) => entry.reqId === 'unrouted-417')).toEqual([expect.objectContaining({ level: 'info', method: 'GET', path: '/v1/health', status: 417, msg: 'request' })]);
  });

  it('at --log-level warn, writes the line of a request not completed (its client went away before the reply), and counts it', async () => {
    const logFile = join(tempDir('kb-log-warn-'), 'serve.log');
    const adminPort = await freePort();
    const server = await serveWithLog(logFile, await freePort(), isolatedEnv(), { args: ['--admin-port', String(adminPort)], level: 'warn' });
    await expect.poll(() => /kbt_[\w-]{43}/.test(server.stdout())).toBe(true);
    const token = /kbt_[\w-]{43}/.exec(server.stdout())?.[0] as string;
    const countedBefore = await countedRequests(adminPort);
    // Answered: no line at warn.
    expect((await fetch(`${server.url}/v1/health`, { headers: { 'x-request-id': 'warn-answered' } })).status).toBe(200);
    // Its headers and a token, part of its body, then the client ends the connection: the server reads the request,
    // and its reply is never sent.
    await exchangeRaw(
      server.url,
      `POST /v1/ns_create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 20\r\nX-Request-Id: warn-cut\r\n\r\n{"ke`,
    );
    await expect.poll(async () => (await countedRequests(adminPort)) - countedBefore).toBe(2);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const entries = logEntries(readFileSync(logFile, 'utf8'));
    expect(entries.filter((entry) => entry.reqId !== undefined)).toEqual([
      expect.objectContaining({ level: 'warn', reqId: 'warn-cut', method: 'POST', path: '/v1/ns_create', status: 499, msg: 'request not completed' }),
    ]);
  });

  it('writes each request\'s line as pino writes it, byte for byte, whatever its id, method and path hold, from the built kb serve', async () => {
    const logFile = join(tempDir('kb-log-bytes-'), 'serve.log');
    const server = await serveWithLog(logFile, await freePort(), isolatedEnv());
    // Plain texts and texts to escape (a quote, a backslash), a token to redact, the prefix's letter, a path longer
    // than a batch's slack, a method routes do not answer. Node's parser refuses a path with a backslash or any byte
    // past ASCII (the connection closes).
    const paths = ['/v1/health', '/v1/nope"quoted', '/v1/tab%09x', `/v1/x?t=kbt_${'A1b-_'.repeat(9)}`, '/v1/KBT_not', '/v1/kb', `/v1/${'a/'.repeat(3000)}`];
    const ids = ['bytes-plain', 'bytes-"quoted"\\'];
    const methods = ['GET', 'HEAD', 'PROPFIND'];
    const requests: WireRequest[] = ids.flatMap((id) => methods.flatMap((method) => paths.map((path, p) => ({ method, path, headers: { 'x-request-id': `${id}-${method}-${p}` } }))));
    const replies = await pipelined(server.url, requests);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    // The log's lines as bytes (Latin-1 keeps one character a byte), time and duration aside.
    const untimed = (line: string) => line.replace(/"time":\d+/, '"time":0').replace(/"ms":[^,]+/, '"ms":0');
    const logged = new Map<string, string>();
    for (const line of readFileSync(logFile).toString('latin1').split('\n')) {
      const id = /"reqId":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1];
      if (id?.startsWith('bytes-') === true && line.includes('"msg":"request"')) logged.set(JSON.parse(`"${id}"`) as string, untimed(line));
    }
    expect(logged.size).toBe(requests.length);
    // pino's line for `pino.info({ reqId, method, path, status, ms }, 'request')` with kb serve's options (docs/contract.md,
    // Logging): level as a label, time, then the fields in their order, msg last, strings escaped as JSON.stringify does.
    const pinoLine = (reqId: string, method: string, path: string, status: number) =>
      `{"level":"info","time":0,"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":0,"msg":"request"}`;
    for (const [i, request] of requests.entries()) {
      const id = request.headers['x-request-id'] as string;
      expect(logged.get(id), id).toBe(pinoLine(id, request.method, redactTokens(request.path), replies[i]!.status));
    }
  });

  it.skipIf(!IS_ROOT)('keeps answering when the file\'s disk is full, and stops on SIGTERM (needs root to mount a tmpfs; CI runs as root)', async () => {
    const dir = tempDir('kb-log-full-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir], { stdio: 'pipe' });
    try {
      mkdirSync(join(dir, 'logs'));
      const logFile = join(dir, 'logs', 'serve.log');
      // The disk full but for a few lines' worth: the log fills it during the load.
      writeFileSync(join(dir, 'ballast'), Buffer.alloc(256 * 1024 - 16 * 1024));
      const server = await serveWithLog(logFile, await freePort(), isolatedEnv());
      const statuses = await load(4000, 32, () => fetch(`${server.url}/v1/health`));
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // The disk is full: the log holds some lines, each whole, not all of them.
      const lines = readFileSync(logFile, 'utf8').split('\n').filter((line) => line !== '');
      expect(lines.length).toBeLessThan(4000);
      for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      server.child.kill('SIGTERM');
      const code = await Promise.race([server.exited, sleep(15_000).then(() => 'still running')]);
      if (code === 'still running') server.child.kill('SIGKILL');
      expect(code).toBe(0);
    } finally {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    }
  });
});
