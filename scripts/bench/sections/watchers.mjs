// Section "watchers": GET /v1/watch at scale (docs/performance.md, Watchers). 1,000 watchers on one kb serve: the
// time from a write to the last watcher receiving its event (p50/p99), beside the write's own round trip; the
// server's memory with them beside without; durable writes per second and the server's CPU per write (/proc) with
// them beside without. The watchers are plain keep-alive connections of this process that read every byte.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { cpuSeconds, runWrkCpu } from '../lib/cpu.mjs';
import { childEnv } from '../lib/env.mjs';
import { tempDir } from '../lib/lifecycle.mjs';
import { figure } from '../lib/report.mjs';
import { summarize } from '../lib/stats.mjs';
import { LUA } from '../lib/wrk.mjs';
import { startKb } from './writes.mjs';

const WATCHERS = 1000;
const QUICK_WATCHERS = 200;
/** Writes timed one at a time, each awaited by every watcher before the next. */
const PROBES = 100;

/** The CPU a process spends at rest over 10 s (one heartbeat of every stream among them), in ms a second. */
async function restingCpu(pid) {
  const before = cpuSeconds(pid);
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  // /proc counts CPU in ticks of 10 ms: over 10 s, to 1 ms a second.
  return Math.round(((cpuSeconds(pid) - before) * 1000) / 10);
}

/** The resident memory of a process, in MiB (VmRSS of /proc/PID/status). */
function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((row) => row.startsWith('VmRSS:'));
  return Math.round(Number(/\d+/.exec(line ?? '')?.[0] ?? NaN) / 102.4) / 10;
}

/** Opens `count` streams; each calls `onId(id)` for every event id it reads. Resolves once all are open. */
async function openWatchers(url, token, count, onId) {
  const base = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const requests = [];
  const open = (index) =>
    new Promise((resolve, reject) => {
      const request = http.get({ host: base.hostname, port: base.port, path: '/v1/watch', agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`GET /v1/watch answered ${response.statusCode}`));
        response.setEncoding('utf8');
        let rest = '';
        response.on('data', (chunk) => {
          rest += chunk;
          let at;
          while ((at = rest.indexOf('\n')) !== -1) {
            const line = rest.slice(0, at);
            rest = rest.slice(at + 1);
            if (line.startsWith('id: ')) onId(index, Number(line.slice(4)));
          }
        });
        resolve();
      });
      request.on('error', reject);
      requests.push(request);
    });
  for (let i = 0; i < count; i += 100) await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, j) => open(i + j)));
  return { close: () => (requests.forEach((request) => request.destroy()), agent.destroy()) };
}

/** The cursor a stream opened now starts after (its kb-watch-cursor header). */
function head(url, token) {
  const base = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.get({ host: base.hostname, port: base.port, path: '/v1/watch', headers: { authorization: `Bearer ${token}` } }, (response) => {
      resolve(Number(response.headers['kb-watch-cursor']));
      request.destroy();
    });
    request.on('error', reject);
  });
}

function post(url, token, path, body) {
  const base = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: base.hostname, port: base.port, method: 'POST', path: `/v1${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`POST ${path} answered ${response.statusCode}`))));
    });
    request.on('error', reject);
    request.end(payload);
  });
}

export async function watchersSection(ctx) {
  const { options, kb, home } = ctx;
  const count = options.quick ? QUICK_WATCHERS : WATCHERS;
  const env = childEnv(home);
  const server = await startKb(kb.bin, env, tempDir('kb-bench-watchers-'));
  try {
    const pid = server.child.pid;
    const wrk = { script: LUA.create, duration: options.duration, connections: options.connections, threads: options.wrkThreads };
    const writes = async (run) => runWrkCpu([`${server.url}/v1/base_create`], [pid], { ...wrk, env: { ...env, KB_BENCH_TOKEN: server.token, KB_BENCH_RUN: run } });
    ctx.progress('watchers: writes without watchers');
    // A first run compiles the hot paths; the second is measured.
    await writes('w0');
    const alone = await writes('m0');
    if (alone.errors > 0) throw new Error(`${alone.errors} writes not answered 200`);
    const rssWithout = rssMiB(pid);
    ctx.progress('watchers: the server at rest, 10 s');
    const restWithout = await restingCpu(pid);

    ctx.progress(`watchers: opening ${count} streams`);
    // Per write: how many watchers have its event, and when the last one got it.
    const waiting = new Map();
    const watchers = await openWatchers(server.url, server.token, count, (_index, id) => {
      const probe = waiting.get(id);
      if (probe !== undefined && ++probe.seen === count) probe.done(performance.now());
    });
    try {
      // Idle: what the streams cost the server at rest.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rssWith = rssMiB(pid);
      ctx.progress(`watchers: the server at rest with ${count} streams, 10 s`);
      const restWith = await restingCpu(pid);
      ctx.progress(`watchers: ${PROBES} writes, each to every watcher`);
      const fanOut = [];
      const roundTrip = [];
      // The last change so far, as a new stream names it: each probe is one change more.
      let cursor = await head(server.url, server.token);
      for (let i = 0; i < PROBES; i++) {
        cursor++;
        const probe = { seen: 0, done: undefined };
        const received = new Promise((resolve, reject) => {
          probe.done = resolve;
          setTimeout(() => reject(new Error(`change ${cursor} reached ${probe.seen} of ${count} watchers in 30 s`)), 30_000).unref();
        });
        waiting.set(cursor, probe);
        const sent = performance.now();
        await post(server.url, server.token, '/base_create', { namespace: 'bench-create', key: `probe-${i}` });
        roundTrip.push(performance.now() - sent);
        fanOut.push((await received) - sent);
        waiting.delete(cursor);
      }
      ctx.progress('watchers: writes with the watchers');
      const withWatchers = await writes('m1');
      const latency = summarize(fanOut);
      const sorted = [...fanOut].sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
      const own = summarize(roundTrip);
      return {
        title: `Watchers: ${count} streams of GET /v1/watch on one kb serve`,
        figures: [
          figure({ name: 'write to last watcher, p50', value: latency.median, unit: 'ms', baseline: own.median, note: 'baseline: the write\'s own round trip' }),
          figure({ name: 'write to last watcher, p99', value: p99, unit: 'ms', baseline: own.p90 }),
          figure({ name: `server RSS with ${count} watchers`, value: rssWith, unit: 'MiB', baseline: rssWithout }),
          figure({ name: `server CPU at rest with ${count} watchers`, value: restWith, unit: 'ms/s', baseline: restWithout, note: 'over 10 s, one heartbeat to every stream among them' }),
          figure({ name: 'writes per second with watchers', value: withWatchers.rps, unit: 'req/s', baseline: alone.rps }),
          figure({ name: 'server CPU per write with watchers', value: withWatchers.cpuUsPerRequest, unit: 'µs', baseline: alone.cpuUsPerRequest, efficiency: true }),
        ],
        details: [],
        notes: [
          `each of the ${PROBES} probe writes was awaited by all ${count} watchers before the next; the watchers read in this process, so the latency includes their reading`,
          `the p99 baseline is the write round trip's p90; RSS idle beside the same server before the watchers; writes: wrk POST /v1/base_create, ${options.duration} s`,
        ],
        raw: { watchers: { count, fanOut, roundTrip, rssWith, rssWithout, restWith, restWithout, alone, withWatchers } },
      };
    } finally {
      watchers.close();
    }
  } finally {
    await server.stop();
  }
}
