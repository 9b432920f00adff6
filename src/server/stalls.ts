import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';

/** A gap between heartbeats longer than this is a stall of the whole process, not a busy event loop. */
const STALL_MS = 2000;
const HEARTBEAT_MS = 250;

/**
 * Keeps the requests of a process that was frozen (SIGSTOP, a debugger, a stalled VM) from being timed out for the
 * time it could not run. Node's connection checker measures a request's age on the monotonic clock, which goes on
 * while the process is stopped, so on resuming it would cut every request in flight. It reads the server's
 * `headersTimeout` and `requestTimeout` at each check: these become getters that, for one timeout after a stall,
 * add the stall's length. Outside that window they are the configured values, so slow clients are cut as before.
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
  const allowance = (base: number) => {
    if (base === 0) return 0;
    // Node's checker may run before the heartbeat after a resume: the gap since the last beat is then the stall.
    const now = performance.now();
    const pending = now - lastBeat > STALL_MS ? now - lastBeat : 0;
    const recent = now - stall.endedAt < base + STALL_MS ? stall.lengthMs : 0;
    return base + Math.max(pending, recent);
  };
  for (const name of ['headersTimeout', 'requestTimeout'] as const) {
    Object.defineProperty(server, name, {
      configurable: true,
      enumerable: true,
      get: () => allowance(configured[name]),
      set: (value: number) => (configured[name] = value),
    });
  }
  return () => clearInterval(heartbeat);
}
