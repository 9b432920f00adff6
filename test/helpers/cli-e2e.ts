import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { ExpectStatic } from 'vitest';
import { isolatedEnv, KB_BIN, runKb, runProcess, type RunResult } from './cli.js';
import type { TestServer } from './server.js';

/**
 * How many kb processes this test file runs at once. Each start costs most of a second of CPU, so tests that each
 * start several at once (and run concurrently) would otherwise starve one another into runKb's kill timeout.
 */
const MAX_CHILDREN = Math.max(4, availableParallelism());
let children = 0;
const waiting: (() => void)[] = [];

async function withChildSlot<T>(work: () => Promise<T>): Promise<T> {
  if (children < MAX_CHILDREN) children++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    // The slot passes straight to the next in line, so no newcomer slips in between.
    const next = waiting.shift();
    if (next) next();
    else children--;
  }
}

/** A test here may wait for process slots behind the tests running beside it, so it gets longer than vitest's 30 s. */
export const TEST_TIMEOUT_MS = 120_000;

export interface TimedRun extends RunResult {
  /** From the start of the process to its end, not counting the wait for a slot. */
  ms: number;
}

/** runKb, with at most MAX_CHILDREN processes of this file alive at once. */
export function kb(args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<TimedRun> {
  return withChildSlot(async () => {
    const started = performance.now();
    const result = await runKb(args, options);
    return { ...result, ms: performance.now() - started };
  });
}

/** An environment for the built CLI that talks to `server` as a fresh organization of its own, through KB_URL and KB_TOKEN. */
export async function orgEnv(server: TestServer, org: string): Promise<{ env: NodeJS.ProcessEnv; token: string }> {
  const token = await server.newToken(org);
  return { env: isolatedEnv({ KB_URL: server.url, KB_TOKEN: token }), token };
}

/**
 * An organization of its own, seeded as the habit tests expect: namespaces docs (described) and guides, base faq in
 * docs, and each of `moreBases` in docs (no description).
 */
export async function seededOrg(expect: ExpectStatic, server: TestServer, org: string, moreBases: string[] = []): Promise<{ env: NodeJS.ProcessEnv; token: string }> {
  const { env, token } = await orgEnv(server, org);
  await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Product docs' });
  await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'guides' });
  await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq', description: 'Questions' });
  for (const key of moreBases) await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key, description: null });
  return { env, token };
}

export interface ApiReply {
  status: number;
  body: { success: boolean; data?: unknown; message?: string; help?: string | null };
}

/** One request straight to the server (not through the CLI), to set up state or read what the CLI did. */
export async function api(url: string, token: string | undefined, method: string, path: string, body?: unknown): Promise<ApiReply> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as ApiReply['body'] };
}

/** The data of a 200, failing the test on anything else. */
export async function apiData(expect: ExpectStatic, url: string, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const reply = await api(url, token, method, path, body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.data;
}

export const UUID_V4 = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The lines of a stream, without the final newline. */
export function lines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

export function describeRun(result: RunResult): string {
  return `exit ${result.code}${result.signal ? ` (${result.signal})` : ''}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** Exit 0, and stdout is exactly one JSON document whose value is returned. */
export function jsonOut(expect: ExpectStatic, result: RunResult): unknown {
  expect(result.code, describeRun(result)).toBe(0);
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not exactly one JSON document:\n${describeRun(result)}`);
  }
}

/**
 * A failure as docs/contract.md (Output, Exit codes) prints it: the exit code, nothing on stdout, and on stderr one line with the
 * message (after an optional "Error: "), then the help line when there is one; never a stack trace.
 */
export function expectFailure(expect: ExpectStatic, result: RunResult, code: number, message: string | RegExp, help?: string | null, after: readonly string[] = []): void {
  expect(result.code, describeRun(result)).toBe(code);
  expect(result.stdout, describeRun(result)).toBe('');
  const got = lines(result.stderr);
  const pattern = typeof message === 'string' ? new RegExp(`^(?:Error: )?${escapeRegExp(message)}$`) : message;
  expect(got[0], describeRun(result)).toMatch(pattern);
  expect(got.slice(1), describeRun(result)).toEqual([...(typeof help === 'string' && help !== '' ? [help] : []), ...after]);
}

/** What the server answers to a request, as the one line (and help) the CLI must print for it. */
export async function expectEnvelopeFailure(
  expect: ExpectStatic,
  result: RunResult,
  code: number,
  server: { url: string; token: string | undefined },
  request: { method: string; path: string; body?: unknown },
  status: number,
  /** Lines the CLI prints after the server's help: where a refused token came from. */
  after: readonly string[] = [],
): Promise<void> {
  const reply = await api(server.url, server.token, request.method, request.path, request.body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(typeof reply.body.message).toBe('string');
  expectFailure(expect, result, code, reply.body.message as string, reply.body.help, after);
}

/** No stack trace anywhere in what the process printed. */
export function expectNoStack(expect: ExpectStatic, result: RunResult): void {
  expect(`${result.stdout}\n${result.stderr}`, describeRun(result)).not.toMatch(/^\s+at .+[(:]\d+/m);
}

function listen(server: Server | ReturnType<typeof createNetServer>): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

/** The URL of a loopback port nothing listens on (it was free a moment ago). */
export async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

export interface FakeServer {
  url: string;
  /** How many HTTP requests arrived (for the HTTP fakes) or connections were opened (for the silent one). */
  count(): number;
  close(): Promise<void>;
}

/** A tiny HTTP server that answers every request with this status and JSON body, and counts the requests. */
export async function startFixedServer(status: number, body: unknown): Promise<FakeServer> {
  let requests = 0;
  const server = createHttpServer((request, response) => {
    requests++;
    request.resume();
    request.on('end', () => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    });
  });
  const url = await listen(server);
  return {
    url,
    count: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP server that accepts connections and never says a word. */
export async function startSilentServer(): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  const url = await listen(server);
  return {
    url,
    count: () => connections,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `sh -c script` (with args as $1...), no TTY, stdin fed `input`: for umask, PATH shims and README scripts. */
export function runShell(
  script: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string },
): Promise<RunResult> {
  return runProcess('sh', ['-c', script, 'sh', ...args], { timeoutMs: 30_000, ...options });
}

/** Runs the built kb under `umask 022`, as a user's shell would usually start it. */
export function runKbUmask022(args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string }): Promise<RunResult> {
  return runShell('umask 022 && exec "$@"', [process.execPath, KB_BIN, ...args], options);
}

/**
 * Every run of `length` characters of a token's secret part (after its `kbt_`-style prefix). Finding none of them in
 * some output proves that no piece of the token longer than a mask's last four characters was printed.
 */
export function secretPieces(token: string, length = 6): string[] {
  const secret = token.replace(/^[a-z]+_/, '');
  const pieces: string[] = [];
  for (let i = 0; i + length <= secret.length; i++) pieces.push(secret.slice(i, i + length));
  return pieces;
}

/** The pieces of the token that appear in text (none, for output that keeps the secret). */
export function leakedPieces(text: string, token: string): string[] {
  return secretPieces(token).filter((piece) => text.includes(piece));
}
