import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { onTestFinished } from 'vitest';
import { KB_BIN } from './cli.js';

// The built kb serve with its stderr a log (a file, as an operator keeps one, a pipe, a socket or a terminal), load to
// fill that log, and its lines read back.

export interface ServerWithLog {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The built kb serve on `port`, its stderr `log`: a file's path, opened for appending (as `2>>` does), or a file, FIFO,
 * terminal or socket open already (as when `2>` opens a file once for several processes, or systemd gives a service's
 * processes one socket to journald), at `level` (info by default); resolves once /v1/health answers.
 */
export async function serveWithLog(log: string | number | Socket, port: number, env: NodeJS.ProcessEnv, options: { args?: readonly string[]; level?: string } = {}): Promise<ServerWithLog> {
  const opened = typeof log === 'string' ? openSync(log, 'a') : undefined;
  const args = options.args ?? [];
  // Without its warm-up unless asked, as startServe (helpers/cli.ts): it logs nothing, and costs half of a start's CPU.
  const warmUp = args.includes('--warm-up') || args.includes('--no-warm-up') ? [] : ['--no-warm-up'];
  const child = spawn(process.execPath, [KB_BIN, 'serve', '--port', String(port), '--log-level', options.level ?? 'info', '--log-format', 'json', ...warmUp, ...args], {
    env,
    stdio: ['ignore', 'pipe', typeof log === 'string' ? opened : log],
  });
  if (opened !== undefined) closeSync(opened);
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A test that fails before it stops its server leaves none running (it would write on into the run's temp dir).
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 20_000; ; ) {
    const answered = await fetch(`${url}/v1/health`).then((reply) => reply.status === 200, () => false);
    if (answered) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`kb serve did not answer in time; ${typeof log === 'string' ? `its log:\n${readFileSync(log, 'utf8').slice(0, 4000)}` : 'its log went to the stream given'}`);
    }
    await sleep(50);
  }
  return { child, url, stdout: () => stdout, exited };
}

/** Sends `total` requests, `concurrency` at a time, each made by `make(i)`; resolves the statuses by i. */
export async function load(total: number, concurrency: number, make: (i: number) => Promise<Response>): Promise<number[]> {
  const statuses = new Array<number>(total);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const reply = await make(i);
        await reply.arrayBuffer();
        statuses[i] = reply.status;
      }
    }),
  );
  return statuses;
}

/** A line of kb serve's JSON log, the fields the log tests read. */
export interface LogEntry {
  level?: string;
  reqId?: string;
  path?: string;
  status?: number;
  msg?: string;
}

/** Each line of a log as JSON. The log must end with a newline; a line that is not one JSON object (two spliced, or a piece) throws, shown. */
export function logEntries(text: string): LogEntry[] {
  if (!text.endsWith('\n')) throw new Error(`the log does not end with a whole line: ${JSON.stringify(text.slice(-200))}`);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line, at) => {
      try {
        return JSON.parse(line) as LogEntry;
      } catch {
        throw new Error(`line ${at + 1} of the log is not one JSON object: ${line.slice(0, 300)}`);
      }
    });
}

/**
 * The request lines whose id is `${prefix}${i}` for i from 0 to total - 1, by i; throws unless each of them is there
 * exactly once and no other id has the prefix.
 */
export function requestLinesOnce(entries: readonly LogEntry[], prefix: string, total: number): LogEntry[] {
  const found = new Map<string, LogEntry[]>();
  for (const entry of entries) if (entry.reqId?.startsWith(prefix)) found.set(entry.reqId, [...(found.get(entry.reqId) ?? []), entry]);
  const wrong = [...found].filter(([, lines]) => lines.length !== 1).map(([id, lines]) => `${id} ${lines.length} times`);
  const byIndex = Array.from({ length: total }, (_, i) => found.get(`${prefix}${i}`)?.[0]);
  const missing = byIndex.flatMap((entry, i) => (entry === undefined ? [`${prefix}${i}`] : []));
  if (found.size !== total || wrong.length > 0 || missing.length > 0) {
    throw new Error(`request lines not there once each: ${found.size} ids of ${total}; ${[...wrong, ...missing.map((id) => `${id} missing`)].slice(0, 10).join(', ')}`);
  }
  return byIndex as LogEntry[];
}
