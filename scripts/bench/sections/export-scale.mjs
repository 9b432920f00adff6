// Section: `kb export` of a big organization, and a no-change `kb apply` of that very export (--dry-run, and a real
// apply that finds nothing to do), at 1,000, 10,000 and 100,000 namespaces: the time and the peak memory of each
// process, beside reading the same data over HTTP from this process.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from '../lib/env.mjs';
import { ApiClient } from '../lib/http.mjs';
import { timeProcess } from '../lib/processes.mjs';
import { seedThroughStore } from '../lib/seed.mjs';
import { figure, SAMPLE_HEADERS, sampleRow } from '../lib/report.mjs';
import { summarize } from '../lib/stats.mjs';

const SIZES = [1_000, 10_000, 100_000];
/** One namespace in this many has a base. */
const BASE_EVERY = 10;
/** The goal of issue 26, at 100,000 namespaces: each command within 3 s and 250 MB. */
const BUDGET = { ms: 3000, mb: 250 };
const MB = 1e6;
const TIME = '/usr/bin/time';

function thousands(n) {
  return n.toLocaleString('en-US');
}

/**
 * Organization `bench-export-N` with N namespaces (one in ten with a base), written through the store beside the
 * running kb serve, as the TUI section seeds its big list. Resolves with a token of the organization.
 */
async function seed(ctx, count) {
  const key = (i) => `scale-ns-${String(i).padStart(6, '0')}`;
  const { token } = await seedThroughStore(ctx, `bench-export-${count}`, async (store, orgId) => {
    // Asked for all at once: the SQLite engine writes what a turn of the event loop asks in one transaction.
    await Promise.all(Array.from({ length: count }, (_, i) => store.nsCreate(orgId, { key: key(i), description: `Namespace ${i} of the export bench` })));
    await Promise.all(
      Array.from({ length: Math.floor(count / BASE_EVERY) }, (_, j) =>
        store.baseCreate(orgId, { namespace: key(j * BASE_EVERY), key: 'faq', description: `Questions about namespace ${j * BASE_EVERY}` }),
      ),
    );
  });
  return token;
}

/**
 * Runs a kb command under GNU time: the wall milliseconds (spawn to exit, as timeProcess measures them), the CPU
 * seconds (user + system) and the peak resident memory (ru_maxrss) of the kb process itself.
 */
async function measure(ctx, env, args, statsFile) {
  const run = await timeProcess(TIME, ['-o', statsFile, '-f', '%U %S %M', process.execPath, ctx.kb.bin, ...args], { env, cwd: ctx.kb.root, timeoutMs: 120_000 });
  const [user, system, kilobytes] = readFileSync(statsFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  return { ms: run.ms, cpuMs: (user + system) * 1000, mb: (kilobytes * 1024) / MB, stdout: run.stdout, stderr: run.stderr };
}

export async function exportScaleSection(ctx) {
  const { options } = ctx;
  if (!existsSync(TIME)) throw new Error(`${TIME} (GNU time) is needed to measure the peak memory of each kb process`);
  const sizes = options.quick ? SIZES.slice(0, 2) : SIZES;
  const rows = [];
  const figures = [];
  const samples = {};
  for (const count of sizes) {
    ctx.progress(`export-scale: seeding ${thousands(count)} namespaces through the store`);
    const token = await seed(ctx, count);
    const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: token });
    const file = join(ctx.root, `export-scale-${count}.yaml`);
    const statsFile = join(ctx.root, `export-scale-${count}.time`);
    const client = new ApiClient(ctx.main.urls, token, { connections: 1 });
    const subjects = {
      'HTTP GET ns_list + base_list_all (this process)': async () => {
        const started = performance.now();
        const [namespaces, bases] = [await client.get('/ns_list'), await client.get('/base_list_all')];
        if (namespaces.length !== count || bases.length !== Math.floor(count / BASE_EVERY)) throw new Error(`the server listed ${namespaces.length} namespaces and ${bases.length} bases`);
        return { ms: performance.now() - started };
      },
      'kb export -o FILE': async () => measure(ctx, env, ['export', '-o', file], statsFile),
      'kb apply --dry-run -f FILE': async () => {
        const result = await measure(ctx, env, ['apply', '--dry-run', '-f', file], statsFile);
        if (!result.stderr.includes('No changes')) throw new Error(`kb apply --dry-run of the export planned changes:\n${result.stderr.slice(0, 2000)}`);
        return result;
      },
      'kb apply -f FILE (no change)': async () => {
        const result = await measure(ctx, env, ['apply', '-f', file], statsFile);
        if (!result.stderr.includes('No changes')) throw new Error(`kb apply of the export made changes:\n${result.stderr.slice(0, 2000)}`);
        return result;
      },
    };
    // Fewer runs at 100,000: each takes seconds. Interleaved, after one warm-up round.
    const runs = count >= 100_000 ? 3 : 5;
    const results = Object.fromEntries(Object.keys(subjects).map((name) => [name, []]));
    for (let round = 0; round <= runs; round++) {
      ctx.progress(`export-scale: ${thousands(count)} namespaces, round ${round} of ${runs}`);
      for (const [name, run] of Object.entries(subjects)) {
        const result = await run();
        if (round > 0) results[name].push(result);
      }
    }
    client.close();
    const bytes = statSync(file).size;
    const stat = (name, field) => summarize(results[name].map((r) => r[field]));
    const http = stat('HTTP GET ns_list + base_list_all (this process)', 'ms');
    const budgeted = count === SIZES.at(-1);
    for (const name of ['kb export -o FILE', 'kb apply --dry-run -f FILE', 'kb apply -f FILE (no change)']) {
      const wall = stat(name, 'ms');
      const cpu = stat(name, 'cpuMs');
      const peak = stat(name, 'mb');
      figures.push(
        figure({ name: `${name}, ${thousands(count)} namespaces: ms vs the HTTP reads`, value: wall.median, baseline: http.median, unit: 'ms', budget: budgeted ? { on: 'value', op: '<=', limit: BUDGET.ms } : undefined }),
        figure({ name: `${name}, ${thousands(count)} namespaces: CPU ms (user + sys) vs the HTTP reads' wall ms`, value: cpu.median, baseline: http.median, unit: 'ms' }),
        figure({ name: `${name}, ${thousands(count)} namespaces: peak RSS`, value: peak.max, unit: 'MB', budget: budgeted ? { on: 'value', op: '<=', limit: BUDGET.mb } : undefined }),
      );
      rows.push([`${name} (${thousands(count)})`, thousands(Math.round(wall.median)), thousands(Math.round(cpu.median)), peak.max.toFixed(1)]);
      samples[`${name} (${count})`] = wall;
    }
    samples[`HTTP reads (${count})`] = http;
    rows.push([`HTTP GET ns_list + base_list_all (${thousands(count)})`, thousands(Math.round(http.median)), '', '']);
    rows.push([`the file (${thousands(count)} namespaces)`, '', '', `${(bytes / MB).toFixed(1)} (size)`]);
  }
  return {
    title: `Export and apply at scale: ${sizes.map(thousands).join(', ')} namespaces (medians; peak RSS the largest of the runs)`,
    figures,
    details: [
      { title: 'Wall and CPU time (ms) and peak memory (MB) of each kb process', headers: ['command', 'wall ms', 'CPU ms (user + sys)', 'peak RSS MB'], align: ['l', 'r', 'r', 'r'], rows },
      { title: 'Samples (wall ms)', ...SAMPLE_HEADERS, rows: Object.entries(samples).map(([name, stats]) => sampleRow(name, stats)) },
    ],
    notes: [
      `Each organization (bench-export-N) has N namespaces with descriptions of about 35 characters, one in ${BASE_EVERY} with a base, written through the store beside the running kb serve. kb export writes YAML with -o; kb apply reads that file, plans (no change) and, without --dry-run, finds nothing to send. Budgets at ${thousands(SIZES.at(-1))} namespaces: ${BUDGET.ms / 1000} s and ${BUDGET.mb} MB each (issue 26).`,
      `Peak RSS is ru_maxrss of the kb process, from ${TIME}; CPU time is its user + system time, steadier than wall time on a shared machine. The baseline is this process reading the same namespaces and bases over HTTP (GET /v1/ns_list, then GET /v1/base_list_all, on a kept-alive connection).`,
    ],
    raw: { rows },
  };
}
