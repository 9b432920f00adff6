import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LOG_BACKLOG_BYTES } from '../../src/server/logger.js';
import { isolatedEnv } from '../helpers/cli.js';
import { freePort, load, logEntries, requestLinesOnce, type ServerWithLog, serveWithLog } from '../helpers/serve-with-log.js';
import { tempDir } from '../helpers/temp.js';

// kb serve's log to a pipe, a socket or a terminal (src/server/logger.ts), the built CLI with its stderr a FIFO, a
// UNIX socket or a pseudo-terminal:
// - A reader that stops reading: kb serve keeps at most LOG_BACKLOG_BYTES of log for it, drops the lines past that and
//   says how many once the reader reads again, or before `stopped`.
// - Two kb serve processes (replicas, or servers of one script) sharing one pipe:
//   `{ kb serve ... & kb serve ... & } 2>&1 | collector`. A write to a pipe is whole only up to PIPE_BUF (4 KB); a
//   larger one may be cut where the pipe is full and another process's write put in the cut. kb serve writes to a
//   pipe in batches of whole lines of at most 4 KB; read slowly so that the pipe is full most of the time, no line
//   may be spliced into another. The same for one socket shared (systemd's journald connection for a service whose
//   script starts two servers), whose writes kb serve makes the same way; and one terminal shared (`kb serve & kb
//   serve` typed in one), whose reader may stop too (Ctrl-S, a paused or scrolled-back terminal multiplexer). A
//   terminal takes each write whole whatever its size while the write may wait (the terminal's own write lock), so
//   there what keeps lines whole is that kb serve's writes to it wait: Node makes its stderr stream's terminal
//   blocking, and kb serve's log opens that stream (logger.ts). Made non-blocking, a write is cut where the terminal
//   is full and lines are spliced (tried).

/**
 * Reads the FIFO until every writer has closed it and resolves with all it read: nothing until `after` resolves, then
 * `chunkBytes` at a time, waiting `pauseMs` after each read.
 */
async function readFifo(fifo: string, options: { after?: Promise<void>; chunkBytes: number; pauseMs: number }): Promise<Buffer> {
  // Opening a FIFO to read waits for a writer: the handle comes once the servers' end is open.
  const handle = await open(fifo, 'r');
  const chunks: Buffer[] = [];
  try {
    await options.after;
    for (;;) {
      const buffer = Buffer.alloc(options.chunkBytes);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks);
      chunks.push(buffer.subarray(0, bytesRead));
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
  } finally {
    await handle.close();
  }
}

/** A stream given to kb serve as its stderr, and the test's reading of it. */
interface LogStream {
  /** What each server is given as its stderr. */
  stderr: number | Socket;
  /** Closes the test's own end for writing, once the servers hold theirs. */
  closeOurs(): void;
  /** Everything read, once every writer has closed its end. */
  read: Promise<Buffer>;
}

/** How the test reads: nothing until `after` resolves; then slowly (so that the stream is full most of the time) or as fast as it can. */
interface Pace {
  after?: Promise<void>;
  slow: boolean;
}

/** A FIFO, as `{ kb serve & kb serve & } 2>&1 | collector` makes a pipe: slowly, 2 KB every 2 ms. */
async function fifoLog(pace: Pace): Promise<LogStream> {
  const fifo = join(tempDir('kb-log-pipe-'), 'log.fifo');
  execFileSync('mkfifo', [fifo]);
  const read = readFifo(fifo, { after: pace.after, chunkBytes: pace.slow ? 2048 : 65_536, pauseMs: pace.slow ? 2 : 0 });
  // Waits for the reader's open above, which waits for this one.
  const fd = openSync(fifo, 'w');
  return { stderr: fd, closeOurs: () => closeSync(fd), read };
}

/**
 * A UNIX stream socket, as systemd gives a service's processes one connection to journald: slowly, the reader takes
 * what came, then stops reading for 100 ms, so that the socket's buffers are full most of the time.
 */
async function socketLog(pace: Pace): Promise<LogStream> {
  const path = join(tempDir('kb-log-socket-'), 'log.sock');
  // Nothing is read from a connection until it is resumed.
  const server = createServer({ pauseOnConnect: true });
  const read = new Promise<Buffer>((resolve, reject) => {
    server.once('connection', (connection) => {
      const chunks: Buffer[] = [];
      connection.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!pace.slow) return;
        connection.pause();
        setTimeout(() => connection.resume(), 100);
      });
      connection.once('end', () => resolve(Buffer.concat(chunks)));
      connection.once('error', reject);
      void Promise.resolve(pace.after).then(() => connection.resume());
    });
  }).finally(() => server.close());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const ours = connect(path);
  await new Promise((resolve) => ours.once('connect', resolve));
  // destroy(), not end(): the servers' copies of the connection stay open; end() would shut it down for all.
  return { stderr: ours, closeOurs: () => ours.destroy(), read };
}

/**
 * Holds a pseudo-terminal's master side, prints the path of its other side, and once told (a line on stdin) closes its
 * own copy of that side; once told again, reads the master until every writer has closed the terminal, writing what it
 * read to stdout, `chunk` bytes at a time with `pause` seconds after each. Raw mode: the bytes come as written, without
 * a terminal's newline translation.
 */
const TERMINAL_READER = `
import os, pty, sys, time, tty
chunk, pause = int(sys.argv[1]), float(sys.argv[2])
master, other = pty.openpty()
tty.setraw(other)
print(os.ttyname(other), flush=True)
sys.stdin.readline()
os.close(other)
sys.stdin.readline()
while True:
    try:
        data = os.read(master, chunk)
    except OSError:
        break
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    if pause:
        time.sleep(pause)
`;

/** A pseudo-terminal, as `kb serve & kb serve` typed in one terminal share it: slowly, 2 KB every 2 ms. */
async function terminalLog(pace: Pace): Promise<LogStream> {
  const reader = spawn('python3', ['-c', TERMINAL_READER, pace.slow ? '2048' : '65536', pace.slow ? '0.002' : '0'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  reader.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exited = new Promise<number | null>((resolve) => reader.once('exit', resolve));
  let path = '';
  while (!path.endsWith('\n')) {
    if (reader.exitCode !== null) throw new Error(`the terminal reader exited: ${reader.exitCode}`);
    await sleep(10);
    path = Buffer.concat(chunks).toString('utf8');
  }
  chunks.length = 0;
  // The servers' side of the terminal, not this process's controlling terminal.
  const fd = openSync(path.trim(), constants.O_RDWR | constants.O_NOCTTY);
  reader.stdin.write('held\n');
  void Promise.resolve(pace.after).then(() => reader.stdin.end('read\n'));
  const read = exited.then((code) => {
    if (code !== 0) throw new Error(`the terminal reader exited ${code}`);
    return Buffer.concat(chunks);
  });
  return { stderr: fd, closeOurs: () => closeSync(fd), read };
}

describe.each([
  ['pipe', fifoLog],
  ['socket', socketLog],
  ['terminal', terminalLog],
])('kb serve logging to a %s whose reader stops reading', (_kind, logStream) => {
  it('holds at most its backlog in memory, drops the lines past it and says how many once the reader reads again', async () => {
    let go = () => {};
    const log = await logStream({ after: new Promise<void>((resolve) => (go = resolve)), slow: false });
    let server: ServerWithLog | undefined;
    try {
      server = await serveWithLog(log.stderr, await freePort(), isolatedEnv());
      log.closeOurs();
      const url = server.url;
      // Lines of some 12,000 bytes (a request line within Node's 16 KB of headers): 2,200 of them are half as much again
      // as the backlog kept. The bytes fill the backlog, not the count of requests, which costs the CPU.
      const total = 2200;
      const path = `/v1/${'segment-/'.repeat(1300)}`;
      const statuses = await load(total, 32, (i) => fetch(`${url}${path}`, { headers: { 'x-request-id': `stuck-${i}` } }));
      expect(statuses.filter((status) => status !== 404)).toEqual([]);
      expect(total * path.length).toBeGreaterThan(1.4 * LOG_BACKLOG_BYTES);
      go();
      // The warning comes once the backlog is written; then the server stops.
      await sleep(500);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);

      const entries = logEntries((await log.read).toString('utf8'));
      const written = entries.filter((entry) => entry.reqId?.startsWith('stuck-'));
      expect(new Set(written.map((entry) => entry.reqId)).size).toBe(written.length);
      const warnings = entries.filter((entry) => entry.msg?.includes('dropped'));
      expect(warnings.map((entry) => entry.msg?.replace(/^\d+/, 'N'))).toEqual(["N log lines were dropped: the log's reader fell 16 MB behind"]);
      expect(warnings[0]?.level).toBe('warn');
      const dropped = Number(/^\d+/.exec(warnings[0]?.msg ?? '')?.[0]);
      // Every request's line is either written or counted among those dropped; the backlog held most of them.
      expect(written.length + dropped).toBe(total);
      expect(written.length * path.length).toBeGreaterThan(0.9 * LOG_BACKLOG_BYTES);
      expect(entries.at(-1)?.msg).toBe('stopped');
    } finally {
      go();
      if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    }
  });
});

describe.each([
  ['pipe', fifoLog],
  ['socket', socketLog],
  ['terminal', terminalLog],
])('two kb serve processes logging to one %s', (kind, logStream) => {
  it(`never splice a line of one into a line of the other, even while the ${kind} is full`, async () => {
    const shared = await logStream({ slow: true });
    const servers: ServerWithLog[] = [];
    try {
      for (let i = 0; i < 2; i++) servers.push(await serveWithLog(shared.stderr, await freePort(), isolatedEnv()));
      shared.closeOurs();
      const total = 4000;
      // Every 400th line is long: 3,000 characters, under the 4 KB a write to a pipe keeps whole. Every other line is
      // 1,100 characters, batched with others: over a megabyte a server, more than one of the buffers batches are cut
      // from, each written (from the thread pool) while the next is gathered.
      const pathOf = (i: number) => (i % 400 === 199 ? `/v1/${'segment-/'.repeat(333)}` : i % 2 === 1 ? `/v1/${'segment-/'.repeat(122)}` : '/v1/health');
      const statuses = await load(total, 32, (i) => fetch(`${(servers[i % 2] as ServerWithLog).url}${pathOf(i)}`, { headers: { 'x-request-id': `pipe-${i}` } }));
      expect(statuses.filter((status, i) => status !== (pathOf(i) === '/v1/health' ? 200 : 404))).toEqual([]);
      for (const server of servers) server.child.kill('SIGTERM');
      expect(await Promise.all(servers.map((server) => server.exited))).toEqual([0, 0]);

      const entries = logEntries((await shared.read).toString('utf8'));
      requestLinesOnce(entries, 'pipe-', total);
      expect(entries.filter((entry) => entry.path !== undefined && entry.path.length > 2000)).toHaveLength(total / 400);
      expect(entries.filter((entry) => entry.path?.length === 1102)).toHaveLength(total / 2 - total / 400);
      expect(entries.filter((entry) => entry.msg === 'stopped')).toHaveLength(2);
    } finally {
      for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    }
  });
});
