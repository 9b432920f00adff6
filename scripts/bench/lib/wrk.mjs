// wrk runs, each reporting through lua/report.lua's JSON line.
import { fileURLToPath } from 'node:url';
import { spawnTracked } from './lifecycle.mjs';

export const LUA = {
  get: fileURLToPath(new URL('../lua/get.lua', import.meta.url)),
  create: fileURLToPath(new URL('../lua/create.lua', import.meta.url)),
};

/** One wrk run against `url` (path and query included); resolves with req/s, latency percentiles (ms) and errors. */
export function runWrk({ url, script, env, duration, connections, threads }) {
  return new Promise((resolve, reject) => {
    const args = ['-t', String(threads), '-c', String(connections), '-d', `${duration}s`, '--timeout', '10s', '--latency', '-s', script, url];
    const child = spawnTracked('wrk', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.once('error', (error) => reject(new Error(`cannot run wrk (is it installed?): ${error.message}`)));
    child.once('close', (code, signal) => {
      const line = /^KB_BENCH_JSON (.*)$/m.exec(stdout)?.[1];
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${url} exited ${code ?? signal} without a result:\n${stderr || stdout}`));
        return;
      }
      const raw = JSON.parse(line);
      const errors = Object.values(raw.errors).reduce((a, b) => a + b, 0);
      resolve({
        requests: raw.requests,
        rps: raw.requests / (raw.duration_us / 1e6),
        p50: raw.latency_us.p50 / 1000,
        p90: raw.latency_us.p90 / 1000,
        p99: raw.latency_us.p99 / 1000,
        max: raw.latency_us.max / 1000,
        // Socket errors and statuses >= 400 as wrk counts them, or every reply but 200 where the script counts.
        errors: raw.non200 === null ? errors : raw.non200 + errors - raw.errors.status,
        bytesPerReply: raw.requests > 0 ? raw.bytes / raw.requests : 0,
      });
    });
  });
}

/** One wrk per URL, all at once (a replica each); req/s and errors summed, latencies the worst of them. */
export async function runWrkGroup(urls, options) {
  const results = await Promise.all(urls.map((url, i) => runWrk({ ...options, url, env: { ...options.env, KB_BENCH_RUN: `${options.env.KB_BENCH_RUN ?? 'r'}r${i}` } })));
  const sum = (field) => results.reduce((a, r) => a + r[field], 0);
  const worst = (field) => Math.max(...results.map((r) => r[field]));
  return {
    requests: sum('requests'),
    rps: sum('rps'),
    p50: worst('p50'),
    p90: worst('p90'),
    p99: worst('p99'),
    max: worst('max'),
    errors: sum('errors'),
    bytesPerReply: results[0].bytesPerReply,
  };
}
