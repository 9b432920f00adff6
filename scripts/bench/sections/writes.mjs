// Section "writes": durable writes of this build's kb serve side by side with another build's (--against DIR, a
// checkout of kb with its build, e.g. a worktree of main), each on a fresh data dir, wrk POSTing base_create, rounds
// alternating between the two: writes per second and the server's CPU per write (utime + stime, /proc), with ratios.
import { join } from 'node:path';
import { runWrkCpu } from '../lib/cpu.mjs';
import { childEnv } from '../lib/env.mjs';
import { spawnTracked, tempDir } from '../lib/lifecycle.mjs';
import { figure } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { LUA } from '../lib/wrk.mjs';

/** kb serve from `bin` on a new data dir: its URL, pid and first token. */
export function startKb(bin, env, dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, [bin, 'serve', '--port', '0', '--log-level', 'warn', '--data-dir', dataDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      err += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(err)?.[1];
      const token = /kbt_[A-Za-z0-9_-]{43}/.exec(out)?.[0];
      if (url && token) resolve({ child, url, token, stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))) });
    });
    child.once('exit', (code) => reject(new Error(`kb serve (${bin}) exited (${code}) before listening: ${err}`)));
  });
}

export async function writesSection(ctx) {
  const { options, kb, home } = ctx;
  if (options.against === undefined) {
    return { title: 'Writes beside another build', figures: [], details: [], notes: ['skipped: pass --against DIR (a checkout of kb with its build) to compare'], raw: {} };
  }
  const sides = [
    { name: 'against', bin: join(options.against, 'bin/run.js'), rps: [], cpu: [] },
    { name: 'this', bin: kb.bin, rps: [], cpu: [] },
  ];
  const env = childEnv(home);
  for (let round = 0; round < Math.max(3, options.rounds); round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      ctx.progress(`writes: round ${round + 1}, ${side.name}`);
      const server = await startKb(side.bin, env, tempDir(`kb-bench-writes-${side.name}-`));
      try {
        const wrk = { script: LUA.create, duration: options.duration, connections: options.connections, threads: options.wrkThreads };
        // A first run compiles the hot paths; the second is measured.
        await runWrkCpu([`${server.url}/v1/base_create`], [server.child.pid], { ...wrk, duration: 1, env: { ...env, KB_BENCH_TOKEN: server.token, KB_BENCH_RUN: `w${round}` } });
        const run = await runWrkCpu([`${server.url}/v1/base_create`], [server.child.pid], { ...wrk, env: { ...env, KB_BENCH_TOKEN: server.token, KB_BENCH_RUN: `m${round}` } });
        if (run.errors > 0) throw new Error(`${side.name}: ${run.errors} writes not answered 200`);
        side.rps.push(run.rps);
        side.cpu.push(run.cpuUsPerRequest);
      } finally {
        await server.stop();
      }
    }
  }
  const [against, self] = sides;
  const rps = median(self.rps);
  const cpu = median(self.cpu);
  return {
    title: `Writes: POST /v1/base_create (durable), this build beside ${options.against}`,
    figures: [
      figure({ name: 'writes per second', value: rps, unit: 'req/s', baseline: median(against.rps), budget: { on: 'ratio', op: '>=', limit: 0.95 } }),
      figure({ name: 'server CPU per write', value: cpu, unit: 'µs', baseline: median(against.cpu), efficiency: true, budget: { on: 'ratio', op: '>=', limit: 0.95 } }),
    ],
    details: [],
    notes: [`rounds (req/s, this / against): ${self.rps.map((v, i) => `${Math.round(v)}/${Math.round(against.rps[i])}`).join(', ')}`],
    raw: { writes: { this: self, against } },
  };
}
