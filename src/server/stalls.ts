import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A gap between heartbeats longer than this is a stall of the whole process, not a busy event loop. */
const STALL_MS = 2000;
const HEARTBEAT_MS = 250;

/**
 * Keeps the requests of a process that was frozen (SIGSTOP, a debugger, a stalled VM) from being timed out for the
 * time it could not run (docs/contract.md, Shutdown: SIGSTOP/SIGCONT does not reset requests). Node measures its
 * timeouts on the monotonic clock, which goes on while the process is stopped, so on resuming they would all be due:
 * - Node's connection checker would cut every request in flight. It reads the server's `headersTimeout` and
 *   `requestTimeout` at each check: these become getters that, for one timeout after a stall, add the stall's length.
 *   Outside that window they are the configured values, so slow clients are cut as before.
 * - An idle kept-alive connection's timer (`keepAliveTimeout`) would fire before the request its client sent
 *   meanwhile is read, and Node would destroy the socket with that request unread (the client sees ECONNRESET). Node
 *   leaves a timed-out socket to the server's 'timeout' listeners when there are any: after a stall this one gives
 *   the connection its idle time again, so the request waiting in it is read; otherwise it ends it, as Node would.
 */
export function tolerateStalls(server: Server): () => void {
  const configured = { headersTimeout: server.headersTimeout, requestTimeout: server.requestTimeout };
  let lastBeat = performance.now();
  let stall = { endedAt: -Infinity, lengthMs: 0 };
  /** Notes a stall that the clock shows since the last heartbeat, whoever looks first after resuming. */
  const notice = () => {
    const now = performance.now();
    const gap = now - lastBeat;
    if (gap > STALL_MS) stall = { endedAt: now, lengthMs: gap };
    lastBeat = now;
    return now;
  };
  const heartbeat = setInterval(notice, HEARTBEAT_MS).unref();
  /** The length of a stall that a timeout of `base` ms, due now, may have run through; 0 when there was none. */
  const stallWithin = (base: number) => {
    // A timer may fire before the heartbeat after a resume: the gap since the last beat is then the stall.
    const now = performance.now();
    const pending = now - lastBeat > STALL_MS ? now - lastBeat : 0;
    const recent = now - stall.endedAt < base + STALL_MS ? stall.lengthMs : 0;
    return Math.max(pending, recent);
  };
  const allowance = (base: number) => (base === 0 ? 0 : base + stallWithin(base));
  for (const name of ['headersTimeout', 'requestTimeout'] as const) {
    Object.defineProperty(server, name, {
      configurable: true,
      enumerable: true,
      get: () => allowance(configured[name]),
      set: (value: number) => (configured[name] = value),
    });
  }
  const onTimeout = (socket: Socket) => {
    if (stallWithin(server.keepAliveTimeout) > 0) socket.setTimeout(server.keepAliveTimeout);
    else socket.destroy();
  };
  server.on('timeout', onTimeout);
  return () => {
    clearInterval(heartbeat);
    server.off('timeout', onTimeout);
  };
}
