// Section 1: how long a `kb` process takes, beside what a bare node process takes for the same job.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from '../lib/env.mjs';
import { ApiClient } from '../lib/http.mjs';
import { interleave, timeProcess } from '../lib/processes.mjs';
import { figure, SAMPLE_HEADERS, sampleRow } from '../lib/report.mjs';

export async function cliSection(ctx) {
  const { kb, options } = ctx;
  const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: ctx.tokens.small });
  const node = process.execPath;
  const run = (command, args) => async () => (await timeProcess(command, args, { env, cwd: kb.root })).ms;

  // curl reads the header from a file, so the token is in no process's argv.
  const header = join(ctx.root, 'curl-auth-header');
  writeFileSync(header, `Authorization: Bearer ${ctx.tokens.small}\n`, { mode: 0o600 });
  chmodSync(header, 0o600);
  const curlArgs = ['-sS', '--fail', '-H', `@${header}`, `${ctx.main.url}/v1/ns_list`];

  const kbList = ['ns', 'list', '--json'];
  const fetchScript = join(kb.benchDir, 'baselines', 'ns-list-fetch.mjs');
  const httpScript = join(kb.benchDir, 'baselines', 'ns-list-http.mjs');
  await checkSameData(ctx, env, [fetchScript, httpScript], kbList, curlArgs);

  ctx.progress('cli: kb --version vs node -e 0');
  const start = await interleave(
    [
      { name: 'kb --version', run: run(node, [kb.bin, '--version']) },
      { name: 'node -e 0', run: run(node, ['-e', '0']) },
    ],
    { runs: options.runs, warmup: options.warmup, progress: ctx.tick },
  );
  ctx.progress('cli: kb ns list --json vs node:http vs node fetch vs curl');
  const list = await interleave(
    [
      { name: 'kb ns list --json', run: run(node, [kb.bin, ...kbList]) },
      { name: 'node ns-list-http.mjs', run: run(node, [httpScript]) },
      { name: 'node ns-list-fetch.mjs', run: run(node, [fetchScript]) },
      { name: 'curl', run: run('curl', curlArgs) },
    ],
    { runs: options.runs, warmup: options.warmup, progress: ctx.tick },
  );
  const m = (results, name) => results.get(name).stats.median;
  const n = ctx.seed.smallCount;
  const apply = await applyRounds(ctx);

  return {
    title: '1. CLI start (ms from spawn to exit; medians)',
    figures: [
      figure({
        name: 'kb --version vs node -e 0',
        value: m(start, 'kb --version'),
        baseline: m(start, 'node -e 0'),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 4.0 },
      }),
      figure({
        name: `kb ns list --json (${n} ns) vs node:http`,
        value: m(list, 'kb ns list --json'),
        baseline: m(list, 'node ns-list-http.mjs'),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 3.0 },
      }),
      figure({
        name: `kb ns list --json (${n} ns) vs node fetch`,
        value: m(list, 'kb ns list --json'),
        baseline: m(list, 'node ns-list-fetch.mjs'),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 1.3 },
      }),
      figure({
        name: `kb ns list --json (${n} ns) vs curl`,
        value: m(list, 'kb ns list --json'),
        baseline: m(list, 'curl'),
        unit: 'ms',
      }),
      figure({
        name: `kb apply of ${APPLY_NAMESPACES} new namespaces vs as many creates one after another`,
        value: median(apply.kb),
        baseline: median(apply.sequential),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 0.5 },
      }),
      ...applyCpuFigures(apply),
    ],
    details: [
      {
        title: `Samples (${options.runs} interleaved runs each after ${options.warmup} warm-up)`,
        ...SAMPLE_HEADERS,
        rows: [...start, ...list].map(([name, { stats }]) => sampleRow(name, stats)),
      },
    ],
    notes: [
      `kb apply: the whole process (start, plan, ${APPLY_NAMESPACES} creates, report) of a file of ${APPLY_NAMESPACES} new namespaces into an organization of its own, against the same creates sent one after another on one kept-alive connection from this process (no process start); ${APPLY_ROUNDS} alternated rounds, medians.`,
      'kb apply CPU: user + system time, from /proc (Linux): of the kb process (what this process reaped, /proc/self/stat) against this process\'s own while it sent the creates one after another, and of kb serve during each. On a loaded machine the wall-clock ratio drifts towards the ratio of all the CPU each side spends; the CPU figures say which side bounds it.',
      'node ns-list-http.mjs and ns-list-fetch.mjs (scripts/bench/baselines/) are the same GET /v1/ns_list with node:http and with node\'s fetch, the same token, printing the data as JSON; NODE_EXTRA_CA_CERTS is unset for every side (lib/env.mjs).',
    ],
    raw: Object.fromEntries([...start, ...list].map(([name, r]) => [name, r])),
  };
}

/** Before timing anything: every ns_list command must print the same namespaces, or the comparison is void. */
async function checkSameData(ctx, env, scripts, kbList, curlArgs) {
  const opts = { env, cwd: ctx.kb.root };
  const [kbOut, curlOut, ...scriptOuts] = await Promise.all([
    timeProcess(process.execPath, [ctx.kb.bin, ...kbList], opts),
    timeProcess('curl', curlArgs, opts),
    ...scripts.map((script) => timeProcess(process.execPath, [script], opts)),
  ]);
  const a = JSON.stringify(JSON.parse(kbOut.stdout));
  const c = JSON.stringify(JSON.parse(curlOut.stdout).data);
  const others = scriptOuts.map((out) => JSON.stringify(JSON.parse(out.stdout)));
  if (a !== c || others.some((b) => b !== a)) throw new Error('kb ns list --json, the node baselines and curl printed different data');
  if (JSON.parse(a).length !== ctx.seed.smallCount) throw new Error(`kb ns list --json listed ${JSON.parse(a).length} namespaces, expected ${ctx.seed.smallCount}`);
}

const APPLY_NAMESPACES = 500;
const APPLY_ROUNDS = 5;
/** Clock ticks a second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds from /proc/PID/stat: this process's own and its reaped children's (`self`), or a process's own; undefined off Linux. */
function cpuMs(pid, { children = false } = {}) {
  try {
    // The fields after the command name (which may hold spaces), from field 3 (state): utime is 14, stime 15, cutime 16, cstime 17.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ');
    const at = (field) => Number(fields[field - 3]);
    const ticks = children ? at(16) + at(17) : at(14) + at(15);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

function serverCpuMs(ctx) {
  const each = ctx.main.pids.map((pid) => cpuMs(pid));
  return each.includes(undefined) ? undefined : each.reduce((a, b) => a + b, 0);
}

/** CPU spent by `run`'s side, measured by `read` before and after. */
async function withCpu(read, run) {
  const before = read();
  const result = await run();
  const after = read();
  return { result, cpu: before === undefined || after === undefined ? undefined : after - before };
}

function applyCpuFigures(apply) {
  if (apply.cpu.kb.includes(undefined) || apply.cpu.sequential.includes(undefined)) return [];
  const figures = [
    figure({
      name: `kb apply of ${APPLY_NAMESPACES} namespaces, CPU: the kb process vs the sequential client`,
      value: median(apply.cpu.kb),
      baseline: median(apply.cpu.sequential),
      unit: 'ms',
    }),
    figure({
      name: `kb apply of ${APPLY_NAMESPACES} namespaces, CPU: its --dry-run (start, file, plan) vs the whole apply`,
      value: median(apply.cpu.dryRun),
      baseline: median(apply.cpu.kb),
      unit: 'ms',
    }),
  ];
  if (!apply.cpu.serverKb.includes(undefined) && !apply.cpu.serverSequential.includes(undefined)) {
    figures.push(
      figure({
        name: `kb apply of ${APPLY_NAMESPACES} namespaces, CPU: kb serve during kb apply vs during the sequential creates`,
        value: median(apply.cpu.serverKb),
        baseline: median(apply.cpu.serverSequential),
        unit: 'ms',
      }),
    );
  }
  return figures;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** kb apply of a file of new namespaces, and the same creates one by one, each into an organization of its own. */
async function applyRounds(ctx) {
  const keys = Array.from({ length: APPLY_NAMESPACES }, (_, i) => `apply-ns-${String(i).padStart(3, '0')}`);
  const file = join(ctx.root, 'apply-bench.json');
  writeFileSync(file, JSON.stringify({ version: 1, namespaces: keys.map((key) => ({ key, description: `Namespace ${key}`, bases: [] })) }));
  const times = { kb: [], sequential: [], cpu: { kb: [], dryRun: [], sequential: [], serverKb: [], serverSequential: [] } };
  for (let round = 0; round < APPLY_ROUNDS; round++) {
    ctx.progress(`cli: kb apply of ${APPLY_NAMESPACES} namespaces vs sequential creates (round ${round + 1} of ${APPLY_ROUNDS})`);
    const [mine, theirs] = await Promise.all([ctx.main.mintToken(`bench-apply-${round}`), ctx.main.mintToken(`bench-seq-${round}`)]);
    const client = new ApiClient(ctx.main.urls, theirs, { connections: 1 });
    const ownCpu = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    const sequential = async () => {
      const server = await withCpu(() => serverCpuMs(ctx), () => withCpu(ownCpu, async () => {
        const started = performance.now();
        for (const key of keys) await client.post('/ns_create', { key, description: `Namespace ${key}` });
        return performance.now() - started;
      }));
      times.sequential.push(server.result.result);
      times.cpu.sequential.push(server.result.cpu);
      times.cpu.serverSequential.push(server.cpu);
    };
    const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: mine });
    const kbApply = async () => {
      // First the same file with --dry-run, into the same organization (it changes nothing): the start, reading the
      // file and the plan, which is what kb apply spends before its first create.
      const planned = await withCpu(() => cpuMs('self', { children: true }), () =>
        timeProcess(process.execPath, [ctx.kb.bin, 'apply', '-f', file, '--dry-run'], { env, cwd: ctx.kb.root, timeoutMs: 120_000 }));
      times.cpu.dryRun.push(planned.cpu);
      // The kb process's CPU is what this process reaps of its children meanwhile: kb apply is the only one.
      const server = await withCpu(() => serverCpuMs(ctx), () => withCpu(() => cpuMs('self', { children: true }), async () =>
        (await timeProcess(process.execPath, [ctx.kb.bin, 'apply', '-f', file], { env, cwd: ctx.kb.root, timeoutMs: 120_000 })).ms));
      times.kb.push(server.result.result);
      times.cpu.kb.push(server.result.cpu);
      times.cpu.serverKb.push(server.cpu);
    };
    if (round % 2 === 0) {
      await kbApply();
      await sequential();
    } else {
      await sequential();
      await kbApply();
    }
    client.close();
  }
  return times;
}
