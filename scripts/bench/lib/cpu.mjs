// CPU time of server processes per request: utime + stime from /proc/PID/stat (every thread of the process, the
// log's writes in the thread pool included) over a wrk run, divided by the requests wrk counted. On a shared machine
// this moves far less than req/s: another process's load takes a core away, not instructions from the server.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { median } from './stats.mjs';
import { runWrkGroup } from './wrk.mjs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Seconds of CPU the process has used so far (user and system, all its threads). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count the fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** One wrk run (runWrkGroup's options) against the servers `pids`, with the microseconds of their CPU per request. */
export async function runWrkCpu(urls, pids, options) {
  const before = pids.map(cpuSeconds);
  const result = await runWrkGroup(urls, options);
  const used = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - before[i], 0);
  return { ...result, cpuSeconds: used, cpuUsPerRequest: result.requests > 0 ? (used * 1e6) / result.requests : NaN };
}

/**
 * Runs `run` (resolving with a runWrkCpu result) until the CPU per request settles: two runs in a row within
 * `tolerance` of each other, at most `maxRuns`. A fresh server spends more per request until the JIT has compiled
 * its hot paths; a figure taken before that measures the compiler. Resolves with the CPU per request of each run.
 */
export async function warmUntilSettled(run, { minRuns = 2, maxRuns = 8, tolerance = 0.05 } = {}) {
  const seen = [];
  for (let i = 0; i < maxRuns; i++) {
    seen.push((await run()).cpuUsPerRequest);
    if (seen.length >= minRuns) {
      const [a, b] = seen.slice(-2);
      if (Math.abs(a - b) <= tolerance * Math.min(a, b)) break;
    }
  }
  return seen;
}

export { median };
