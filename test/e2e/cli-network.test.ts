/**
 * The built CLI (bin/run.js, the esbuild bundle users run) in networks as users have them: behind a forward proxy,
 * against replies too large to hold, a server that is not running, a URL pasted with its /v1.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isolatedEnv, KB_BIN, startServe } from '../helpers/cli.js';
import { apiData, closedPortUrl, describeRun, expectFailure, jsonOut, kb, lines, orgEnv, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-network' });
});
afterAll(async () => {
  await server?.close();
});

// Tests run concurrently, so what they start is closed when the file is done.
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function listen(listener: Server | TlsServer | NetServer): Promise<number> {
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve((listener.address() as AddressInfo).port));
  });
}

function closeLater(listener: Server | TlsServer | NetServer, sockets: Set<Socket>): void {
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => listener.close(() => resolve()));
  });
}

function trackSockets(listener: Server | TlsServer | NetServer): Set<Socket> {
  const sockets = new Set<Socket>();
  listener.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

/** The host name the CLI is pointed at: it resolves nowhere, so only a proxy can reach it. */
const UNRESOLVABLE = 'kb.invalid';

interface ForwardProxy {
  url: string;
  /** Requests in absolute form (`GET http://host/path`), as `METHOD URL`. */
  forwarded: string[];
  /** CONNECT targets, as `host:port`. */
  tunnels: string[];
  /** Connections the proxy has accepted. */
  connections(): number;
}

/**
 * A forward proxy as corporate networks run them: absolute-form requests are sent on to their origin, CONNECT opens
 * a tunnel. Every host is taken to `route(host:port)`, so the unresolvable name reaches the test's servers.
 */
async function startForwardProxy(route: (authority: string) => number): Promise<ForwardProxy> {
  const forwarded: string[] = [];
  const tunnels: string[] = [];
  const proxy = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
    forwarded.push(`${request.method} ${request.url}`);
    const target = new URL(request.url ?? '');
    const upstream = httpRequest(
      { host: '127.0.0.1', port: route(target.host), method: request.method, path: `${target.pathname}${target.search}`, headers: request.headers },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  proxy.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    tunnels.push(request.url ?? '');
    socket.on('error', () => undefined);
    const upstream = connect(route(request.url ?? ''), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
  });
  let accepted = 0;
  proxy.on('connection', () => accepted++);
  const sockets = trackSockets(proxy);
  const port = await listen(proxy);
  closeLater(proxy, sockets);
  return { url: `http://127.0.0.1:${port}`, forwarded, tunnels, connections: () => accepted };
}

/** A self-signed certificate for UNRESOLVABLE, made once per run with openssl. */
function certificate(): { key: string; cert: string; certPath: string } {
  const dir = tempDir('kb-tls-');
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=${UNRESOLVABLE}`, '-addext', `subjectAltName=DNS:${UNRESOLVABLE}`, '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

/** TLS in front of the real server, with the certificate above. */
async function startTlsFront(tls: { key: string; cert: string }): Promise<number> {
  const front = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => {
    socket.on('error', () => undefined);
    const upstream = connect(Number(new URL(server.url).port), '127.0.0.1', () => upstream.pipe(socket).pipe(upstream));
    upstream.on('error', () => socket.destroy());
  });
  const sockets = trackSockets(front);
  const port = await listen(front);
  closeLater(front, sockets);
  return port;
}

const serverPort = () => Number(new URL(server.url).port);

describe.concurrent('kb behind a forward proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)', { timeout: TEST_TIMEOUT_MS }, () => {
  it.for(['HTTP_PROXY', 'http_proxy'])('%s: a plain-http deployment is reached through the proxy in absolute form', async (variable, { expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, `proxy-http-${variable}`);
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const proxied = { ...env, KB_URL: url, [variable]: proxy.url };

    const created = await kb(['ns', 'create', 'docs', '--json'], { env: proxied });
    expect(jsonOut(expect, created)).toEqual({ key: 'docs', description: null });
    const listed = await kb(['ns', 'list', '--json'], { env: proxied });
    expect(jsonOut(expect, listed)).toEqual([{ key: 'docs', description: null }]);

    expect(proxy.forwarded).toEqual([`POST ${url}/v1/ns_create`, `GET ${url}/v1/ns_list`]);
    expect(proxy.tunnels).toEqual([]);
  });

  it('kb apply through the proxy keeps to 16 connections to it, one request on each at a time', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'proxy-apply');
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const file = join(tempDir('kb-proxy-apply-'), 'plan.json');
    const keys = Array.from({ length: 100 }, (_, i) => `ns-${String(i).padStart(3, '0')}`);
    writeFileSync(file, JSON.stringify({ version: 1, namespaces: keys.map((key) => ({ key, description: null, bases: [] })) }));
    const applied = await kb(['apply', '-f', file], { env: { ...env, KB_URL: url, HTTP_PROXY: proxy.url } });
    expect(applied.code, describeRun(applied)).toBe(0);
    expect(proxy.forwarded.filter((line) => line === `POST ${url}/v1/ns_create`)).toHaveLength(100);
    expect(proxy.connections()).toBeLessThanOrEqual(16);
  });

  it('kb watch streams through the proxy too, as every other request', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'proxy-watch');
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const proxied = { ...env, KB_URL: url, HTTP_PROXY: proxy.url };
    const watch = spawn(process.execPath, [KB_BIN, 'watch', '--json'], { env: proxied, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => void watch.kill('SIGKILL'));
    let out = '';
    watch.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    // It is watching once a change made now reaches it.
    let probes = 0;
    await expect.poll(async () => {
      expect((await kb(['ns', 'create', `probe-${probes++}`], { env: proxied })).code).toBe(0);
      return out;
    }, { timeout: 30_000, interval: 500 }).toContain('"created"');
    expect(proxy.forwarded).toContain(`GET ${url}/v1/watch`);
  });

  it.for(['HTTPS_PROXY', 'https_proxy'])('%s: an https deployment is reached through a CONNECT tunnel', async (variable, { expect }) => {
    const tls = certificate();
    const tlsPort = await startTlsFront(tls);
    const proxy = await startForwardProxy(() => tlsPort);
    const { env } = await orgEnv(server, `proxy-https-${variable}`);
    const url = `https://${UNRESOLVABLE}:${tlsPort}`;
    const proxied = { ...env, KB_URL: url, [variable]: proxy.url, NODE_EXTRA_CA_CERTS: tls.certPath };

    const result = await kb(['ns', 'list', '--json'], { env: proxied });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.tunnels).toEqual([`${UNRESOLVABLE}:${tlsPort}`]);
    expect(proxy.forwarded).toEqual([]);
  });

  it.for(['NO_PROXY', 'no_proxy'])('%s: a host it names is reached directly, the proxy sees nothing', async (variable, { expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, `no-proxy-${variable}`);
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, [variable]: '127.0.0.1' } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.forwarded).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });
});

/** A TCP front on [::1] for the test server, which listens on 127.0.0.1 only: an IPv6 deployment. */
async function startIpv6Front(): Promise<number> {
  const front = createNetServer((socket) => {
    socket.on('error', () => undefined);
    const upstream = connect(serverPort(), '127.0.0.1', () => upstream.pipe(socket).pipe(upstream));
    upstream.on('error', () => socket.destroy());
  });
  const sockets = trackSockets(front);
  const port = await new Promise<number>((resolve, reject) => {
    front.once('error', reject);
    front.listen(0, '::1', () => resolve((front.address() as AddressInfo).port));
  });
  closeLater(front, sockets);
  return port;
}

describe.concurrent('proxy variables as curl reads them: paths ignored, NO_PROXY ranges and domains, ALL_PROXY', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a path or query on the proxy URL is ignored: the request goes through the proxy', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'proxy-path');
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: url, HTTP_PROXY: `${proxy.url}/p?q=1` } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.forwarded).toEqual([`GET ${url}/v1/ns_list`]);
  });

  it.for(['127.0.0.0/8', '127.0.0.1', '10.0.0.0/8,127.0.0.0/16', '*'])('NO_PROXY=%s: the local deployment is reached directly', async (noProxy, { expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, `no-proxy-range-${noProxy}`);
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, HTTP_PROXY: proxy.url, NO_PROXY: noProxy } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.forwarded).toEqual([]);
  });

  it('NO_PROXY=10.0.0.0/8: outside the range, the request goes through the proxy', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'no-proxy-outside');
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, HTTP_PROXY: proxy.url, NO_PROXY: '10.0.0.0/8' } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.forwarded).toEqual([`GET ${server.url}/v1/ns_list`]);
  });

  it('NO_PROXY=::1/128: an IPv6 deployment is reached directly', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const port = await startIpv6Front();
    const { env } = await orgEnv(server, 'no-proxy-ipv6');
    const url = `http://[::1]:${port}`;
    const [direct, proxied] = await Promise.all([
      kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: url, HTTP_PROXY: proxy.url, NO_PROXY: '::1/128' } }),
      kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: url, HTTP_PROXY: proxy.url, NO_PROXY: 'fd00::/8' } }),
    ]);
    expect(jsonOut(expect, direct)).toEqual([]);
    expect(jsonOut(expect, proxied)).toEqual([]);
    expect(proxy.forwarded).toEqual([`GET ${url}/v1/ns_list`]);
  });

  it.for(['invalid', '.invalid', 'KB.INVALID'])('NO_PROXY=%s: the domain and every name below it go directly (here: a name that resolves nowhere)', async (noProxy, { expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, `no-proxy-domain-${noProxy}`);
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const result = await kb(['ns', 'list'], { env: { ...env, KB_URL: url, HTTP_PROXY: proxy.url, NO_PROXY: noProxy } });
    expect(result.code, describeRun(result)).toBe(6);
    expect(lines(result.stderr)[0]).toMatch(new RegExp(`^Error: cannot reach ${url.replace(/[.]/g, '\\.')}/v1/ns_list: `));
    expect(proxy.forwarded).toEqual([]);
  });

  it.for(['ALL_PROXY', 'all_proxy'])('%s is honoured, below HTTP_PROXY', async (variable, { expect }) => {
    const [proxy, other] = await Promise.all([startForwardProxy(serverPort), startForwardProxy(serverPort)]);
    const { env } = await orgEnv(server, `all-proxy-${variable}`);
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const [alone, below] = await Promise.all([
      kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: url, [variable]: proxy.url } }),
      kb(['health', '--json'], { env: { ...env, KB_URL: url, [variable]: proxy.url, HTTP_PROXY: other.url } }),
    ]);
    expect(jsonOut(expect, alone)).toEqual([]);
    expect(below.code, describeRun(below)).toBe(0);
    expect(proxy.forwarded).toEqual([`GET ${url}/v1/ns_list`]);
    expect(other.forwarded).toEqual([`GET ${url}/v1/health`]);
  });
});

describe.concurrent('a proxy variable that cannot work is said so, naming the variable and never its password', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a value without a scheme is taken as http://, as curl takes it', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'proxy-no-scheme');
    const url = `http://${UNRESOLVABLE}:${serverPort()}`;
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: url, HTTP_PROXY: proxy.url.replace('http://', '') } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(proxy.forwarded).toEqual([`GET ${url}/v1/ns_list`]);
  });

  it('one that is not an http(s) URL: exit 2 before anything is sent, even for a variable the request would not use', async ({ expect }) => {
    const proxy = await startForwardProxy(serverPort);
    const { env } = await orgEnv(server, 'proxy-invalid');
    const [socks, broken] = await Promise.all([
      kb(['ns', 'list'], { env: { ...env, HTTP_PROXY: proxy.url, HTTPS_PROXY: 'socks5://user:hunter22@127.0.0.1:1080' } }),
      kb(['ns', 'create', 'never'], { env: { ...env, http_proxy: 'http://[::1' } }),
    ]);
    expectFailure(expect, socks, 2, 'invalid proxy in HTTPS_PROXY: kb sends through http:// and https:// proxies, not socks5://', 'Set HTTPS_PROXY to a URL such as http://proxy.example.com:3128, or unset it.');
    expectFailure(expect, broken, 2, 'invalid proxy in http_proxy: it is not a URL', 'Set http_proxy to a URL such as http://proxy.example.com:3128, or unset it.');
    expect(socks.stderr + broken.stderr).not.toContain('hunter22');
    expect(proxy.forwarded).toEqual([]);
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
  });

  it('a proxy that is not there: exit 6, naming the proxy and its variable, not the deployment', async ({ expect }) => {
    const closed = new URL(await closedPortUrl());
    const { env } = await orgEnv(server, 'proxy-refused');
    const url = `https://${UNRESOLVABLE}:8443`;
    const result = await kb(['ns', 'list'], { env: { ...env, KB_URL: url, https_proxy: `http://user:hunter22@127.0.0.1:${closed.port}` } });
    expectFailure(
      expect,
      result,
      6,
      `cannot reach the proxy http://user:***@127.0.0.1:${closed.port} (https_proxy) for ${url}/v1/ns_list: connection refused`,
      `Check https_proxy, or list ${UNRESOLVABLE} in NO_PROXY to reach it without the proxy.`,
    );
    expect(result.stderr).not.toContain('hunter22');
  });
});

/** A server whose every reply is `respond(response)`; counts requests and the body bytes it managed to write. */
async function startReplyServer(respond: (response: ServerResponse, sent: { bytes: number }) => void): Promise<{ url: string; requests(): number; sent: { bytes: number } }> {
  let requests = 0;
  const sent = { bytes: 0 };
  const listener = createHttpServer((request, response) => {
    requests++;
    request.resume();
    respond(response, sent);
  });
  const sockets = trackSockets(listener);
  const port = await listen(listener);
  closeLater(listener, sockets);
  return { url: `http://127.0.0.1:${port}`, requests: () => requests, sent };
}

/** Writes JSON-looking bytes for as long as the client reads them: a reply without end. */
function endless(response: ServerResponse, sent: { bytes: number }): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  response.write('{"success":true,"data":"');
  const pump = () => {
    while (!response.destroyed && response.write(chunk)) sent.bytes += chunk.length;
    if (!response.destroyed) sent.bytes += chunk.length;
  };
  response.on('drain', pump);
  pump();
}

describe.concurrent('kb reads replies up to a size limit (KB_MAX_RESPONSE, 64 MiB by default)', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a reply without end fails once it passes KB_MAX_RESPONSE: exit 1 naming the limit, the rest never read', async ({ expect }) => {
    const fake = await startReplyServer(endless);
    const result = await kb(['ns', 'list'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x', KB_MAX_RESPONSE: '1MiB' }) });
    expectFailure(
      expect,
      result,
      1,
      `the reply from ${fake.url}/v1/ns_list is larger than the 1 MiB limit`,
      'If a reply this large is expected, raise the limit with KB_MAX_RESPONSE (e.g. KB_MAX_RESPONSE=256MiB).',
    );
    // It stopped reading: what the server got out is the limit plus what socket buffers hold, far below the default limit.
    expect(fake.sent.bytes).toBeLessThan(32 * 2 ** 20);
    expect(fake.requests()).toBe(1);
  });

  it('a Content-Length over the default 64 MiB fails at once, before any of the body arrives', async ({ expect }) => {
    // Headers only: a client that waited for this body would wait until its timeout (exit 6), not fail with exit 1.
    const fake = await startReplyServer((response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 2 ** 20 + 1) });
      response.flushHeaders();
    });
    const result = await kb(['ns', 'list', '--timeout', '20s'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' }) });
    expectFailure(
      expect,
      result,
      1,
      `the reply from ${fake.url}/v1/ns_list is larger than the 64 MiB limit`,
      'If a reply this large is expected, raise the limit with KB_MAX_RESPONSE (e.g. KB_MAX_RESPONSE=256MiB).',
    );
    expect(fake.requests()).toBe(1);
  });

  it('a whole reply of a kb serve process over the limit: one line and its help, nothing more', async ({ expect }) => {
    // The body is already there when kb refuses it; destroying it unread made undici emit an error nobody heard: a
    // crash with a dump of the bundle, after the right line. (A server inside the test process did not show it.)
    const env = isolatedEnv();
    const served = await startServe([], env);
    try {
      await expect.poll(() => /kbt_[\w-]{43}/.test(served.stdout())).toBe(true);
      const token = /kbt_[\w-]{43}/.exec(served.stdout())![0];
      for (const key of ['docs-1', 'docs-2', 'docs-3']) await apiData(expect, served.url, token, 'POST', '/ns_create', { key, description: 'x'.repeat(600) });
      const runs = await Promise.all([1, 2, 3].map(() => kb(['ns', 'list'], { env: { ...env, KB_URL: served.url, KB_TOKEN: token, KB_MAX_RESPONSE: '1KiB' } })));
      for (const result of runs) {
        expectFailure(
          expect,
          result,
          1,
          `the reply from ${served.url}/v1/ns_list is larger than the 1 KiB limit`,
          'If a reply this large is expected, raise the limit with KB_MAX_RESPONSE (e.g. KB_MAX_RESPONSE=256MiB).',
        );
      }
    } finally {
      served.child.kill('SIGKILL');
      await served.exited;
    }
  });

  it('a reply within the limit is read whole, and KB_MAX_RESPONSE that is not a size is refused before any request', async ({ expect }) => {
    const { env } = await orgEnv(server, 'max-response');
    const [fits, invalid] = await Promise.all([
      kb(['ns', 'list', '--json'], { env: { ...env, KB_MAX_RESPONSE: '2KiB' } }),
      kb(['ns', 'list', '--json'], { env: { ...env, KB_MAX_RESPONSE: 'lots' } }),
    ]);
    expect(jsonOut(expect, fits)).toEqual([]);
    expectFailure(expect, invalid, 2, 'Invalid KB_MAX_RESPONSE "lots": expected a size in bytes such as 1048576, 512KiB or 64MiB');
  });
});

describe.concurrent('kb names what to try when the deployment is not there, and takes a URL pasted with /v1', { timeout: TEST_TIMEOUT_MS }, () => {
  it('connection refused names the URL and suggests kb serve and kb auth status (exit 6)', async ({ expect }) => {
    const url = await closedPortUrl();
    const result = await kb(['ns', 'list'], { env: isolatedEnv({ KB_URL: url, KB_TOKEN: 'kbt_x' }) });
    expectFailure(
      expect,
      result,
      6,
      `cannot reach ${url}/v1/ns_list: connection refused`,
      'Is the server running (start a local one with `kb serve`)? `kb auth status` shows the URL and profile in use.',
    );
  });

  it('KB_URL ending in /v1 is taken as the base URL, with a note on stderr', async ({ expect }) => {
    const { env } = await orgEnv(server, 'trailing-v1');
    const result = await kb(['ns', 'list', '--json'], { env: { ...env, KB_URL: `${server.url}/v1/` } });
    expect(jsonOut(expect, result)).toEqual([]);
    expect(lines(result.stderr), describeRun(result)).toEqual([`Note: ${server.url}/v1/ ends in /v1, which kb adds itself; using ${server.url}`]);
  });

  it('auth login --url with /v1 saves the base URL without it', async ({ expect }) => {
    const token = await server.newToken('login-v1');
    const env = isolatedEnv();
    const login = await kb(['auth', 'login', '--url', `${server.url}/v1`, '--with-token', '--json'], { env, input: `${token}\n` });
    expect(jsonOut(expect, login)).toMatchObject({ url: server.url, organization: 'login-v1' });
    const status = await kb(['auth', 'status', '--json'], { env });
    expect(jsonOut(expect, status)).toMatchObject({ url: server.url, organization: 'login-v1' });
  });

  it.for([[], ['--with-token']])('auth login --url notaurl %j is refused before a token is asked for, read or saved', async (extra, { expect }) => {
    const env = isolatedEnv();
    const result = await kb(['auth', 'login', '--url', 'notaurl', ...extra], { env, input: 'kbt_x\n' });
    expectFailure(
      expect,
      result,
      2,
      'Invalid --url: not a URL: "notaurl" (expected e.g. http://127.0.0.1:8080)',
      'Nothing was saved. Give the base URL of the deployment, e.g. http://127.0.0.1:8080.',
    );
    const configDir = env.KB_CONFIG_DIR as string;
    expect(existsSync(configDir) ? readdirSync(configDir) : []).toEqual([]);
  });
});
