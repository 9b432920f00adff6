// Where kb serve's CPU goes, per request: `perf record` on a warmed kb serve under a steady wrk load, one endpoint
// at a time, and its top costs by symbol (kernel, Node and V8's own code, and JavaScript named through
// --perf-basic-prof), each as a share of the samples and as CPU microseconds per request. Information, no budget:
// the budgets are in the server section's cost part; this says where the cost behind them is.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSeconds, runWrkCpu, warmUntilSettled } from '../lib/cpu.mjs';
import { childEnv } from '../lib/env.mjs';
import { ApiClient, pool } from '../lib/http.mjs';
import { spawnTracked } from '../lib/lifecycle.mjs';
import { timeProcess } from '../lib/processes.mjs';
import { LUA } from '../lib/wrk.mjs';

const TOP = 12;
const FREQUENCY = 1999;

/** Fails early, with the package to install, where perf is missing or may not sample other processes. */
async function checkPerf() {
  try {
    await timeProcess('perf', ['record', '-q', '-F', '99', '-o', '/dev/null', '--', 'true'], { env: process.env });
  } catch (error) {
    throw new Error(`the profile section needs perf allowed to sample (apt-get install linux-perf; as root, or kernel.perf_event_paranoid <= 1): ${error.message.split('\n')[0]}`);
  }
}

/** Where a symbol's code lives, from the object perf found it in; V8's compiled JavaScript by its package. */
function kindOf(dso, symbol) {
  if (dso.includes('kernel')) return 'kernel';
  if (dso.startsWith('[JIT]') || dso.includes('perf-')) {
    if (symbol.startsWith('Builtin:') || symbol.startsWith('BytecodeHandler:')) return 'V8 builtin';
    if (/ node:/.test(symbol)) return 'JS: Node\'s own';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(symbol)?.[1];
    if (pkg) return `JS: ${pkg}`;
    return /\/dist\//.test(symbol) ? 'JS: kb' : 'JS: other';
  }
  if (/(^|\/)node$/.test(dso)) {
    if (symbol.startsWith('Builtins_')) return 'V8 builtin';
    if (/^v8::internal::(compiler|maglev|baseline|interpreter|Compiler|Parser|Scanner)|Turbofan|Maglev/.test(symbol)) return 'V8 compiler';
    if (/^v8::internal::.*(Heap|Scaveng|MarkCompact|Mark|Sweep|Evacuat|GC|Minor|Remembered|Slot)/.test(symbol)) return 'V8 garbage collector';
    if (/^(llhttp|uv_|uv__)|node::/.test(symbol)) return 'Node C++ (HTTP parser, streams, libuv)';
    return 'V8 runtime and API';
  }
  if (/libc|libstdc|ld-linux|libm/.test(dso)) return 'libc';
  if (dso.includes('better_sqlite3')) return 'SQLite';
  return dso;
}

/** perf report's lines, "  12.34%  dso  [.] symbol", as { share, kind, symbol }. */
function parseReport(text) {
  const rows = [];
  for (const line of text.split('\n')) {
    // The object is one word, or "[JIT] tid N" for V8's compiled code.
    const m = /^\s+([\d.]+)%\s+(\[JIT\] tid \d+|\S+)\s+\[([.k])\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, share, dso, level, symbol] = m;
    rows.push({ share: Number(share), kind: level === 'k' ? 'kernel' : kindOf(dso, symbol.trim()), symbol: symbol.trim() });
  }
  return rows;
}

/** A JavaScript symbol as --perf-basic-prof names it ("JS:*fn file:///…/dist/chunk.js:1:234"), short. */
function shortSymbol(symbol) {
  return symbol
    .replace(/(file:\/\/)?\/\S*\/(node_modules|dist)\//g, '')
    .replace(/^(JS|LazyCompile|Function):[*~^+]?/, '')
    .slice(0, 72);
}

/** Kinds by share, those under 0.3% of the samples summed in one row. */
function kindRows(kinds) {
  const sorted = [...kinds].sort((a, b) => b[1] - a[1]);
  const small = sorted.filter(([, share]) => share < 0.3);
  const rest = small.reduce((sum, [, share]) => sum + share, 0);
  return [...sorted.filter(([, share]) => share >= 0.3), ...(small.length > 0 ? [[`${small.length} more, under 0.3% each`, rest]] : [])];
}

async function profileEndpoint(ctx, server, endpoint, dir) {
  const { options } = ctx;
  const env = childEnv(ctx.home, { KB_BENCH_TOKEN: server.token, KB_BENCH_RUN: `${process.pid}p${endpoint.name.length}` });
  const wrk = { connections: options.connections, threads: options.wrkThreads, script: LUA.get, env };
  const go = (duration) => runWrkCpu([server.url + endpoint.path], [server.pid], { ...wrk, duration });
  ctx.progress(`profile: ${endpoint.name}: warming kb serve`);
  await warmUntilSettled(() => go(options.quick ? 1 : 2), { maxRuns: options.quick ? 3 : 8 });
  const data = join(dir, `perf-${endpoint.file}.data`);
  ctx.progress(`profile: ${endpoint.name}: perf record for ${options.duration} s`);
  const recorder = spawnTracked('perf', ['record', '-q', '-F', String(FREQUENCY), '-p', String(server.pid), '-o', data], { stdio: ['ignore', 'ignore', 'pipe'] });
  const recorded = new Promise((resolve) => recorder.once('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = cpuSeconds(server.pid);
  const result = await go(options.duration);
  const cpuUs = ((cpuSeconds(server.pid) - before) * 1e6) / result.requests;
  recorder.kill('SIGINT');
  await recorded;
  // perf report reads V8's names from /tmp/perf-PID.map; the file stays until the server stops (removed then).
  const { stdout: report } = await timeProcess('perf', ['report', '-i', data, '--no-children', '--sort', 'dso,sym', '--stdio', '--percent-limit', '0'], { env: process.env, timeoutMs: 120_000 });
  const rows = parseReport(report);
  const kinds = new Map();
  for (const row of rows) kinds.set(row.kind, (kinds.get(row.kind) ?? 0) + row.share);
  return { endpoint, cpuUs, rps: result.rps, rows, kinds };
}

export async function profileSection(ctx) {
  await checkPerf();
  // --perf-basic-prof: V8 writes /tmp/perf-PID.map, which names its compiled JavaScript for perf.
  const group = await ctx.engine.group('profile', ctx.home, 1, [], { NODE_OPTIONS: '--perf-basic-prof' });
  const server = { url: group.url, pid: group.pids[0], token: group.firstToken };
  try {
    const client = new ApiClient(group.urls, server.token);
    const keys = Array.from({ length: 100 }, (_, i) => `profile-ns-${String(i).padStart(3, '0')}`);
    await pool(keys, 16, (key) => client.post('/ns_create', { key, description: `Namespace ${key.slice(11)} of the profile` }));
    client.close();
    const endpoints = [
      { name: 'GET /v1/health', path: '/v1/health', file: 'health' },
      { name: 'GET /v1/ns_list (100 ns)', path: '/v1/ns_list', file: 'ns-list' },
    ];
    const results = [];
    for (const endpoint of endpoints) results.push(await profileEndpoint(ctx, server, endpoint, ctx.root));
    const us = (r, share) => ((share / 100) * r.cpuUs).toFixed(2);
    return {
      title: `Profile of kb serve (${ctx.engine.name}, log level info): where a request's CPU goes (perf, ${FREQUENCY} Hz)`,
      figures: results.map((r) => ({ name: `${r.endpoint.name} CPU/req while profiled`, value: r.cpuUs, unit: 'µs/req', result: 'info' })),
      details: results.flatMap((r) => [
        {
          title: `${r.endpoint.name}: ${r.cpuUs.toFixed(1)} µs of CPU a request, ${Math.round(r.rps).toLocaleString('en-US')} req/s while profiled; by kind of code`,
          headers: ['kind', 'share', 'µs/req'],
          align: ['l', 'r', 'r'],
          rows: kindRows(r.kinds).map(([kind, share]) => [kind, `${share.toFixed(1)}%`, us(r, share)]),
        },
        {
          title: `${r.endpoint.name}: top ${TOP} symbols`,
          headers: ['share', 'µs/req', 'kind', 'symbol'],
          align: ['r', 'r', 'l', 'l'],
          rows: r.rows.slice(0, TOP).map((row) => [`${row.share.toFixed(1)}%`, us(r, row.share), row.kind, shortSymbol(row.symbol)]),
        },
      ]),
      notes: [
        'Samples of every thread of kb serve (the log\'s writes in the thread pool too) while wrk runs, after a warm-up until CPU per request settles. The µs per request of a row is its share of the CPU per request measured over the same run; perf adds a little of its own.',
        `kb serve runs with NODE_OPTIONS=--perf-basic-prof, so that perf can name V8's compiled code; the raw data is left in the run's temporary directory until the bench ends.`,
      ],
      raw: Object.fromEntries(results.map((r) => [r.endpoint.name, { cpuUs: r.cpuUs, rps: r.rps, rows: r.rows.slice(0, 40) }])),
    };
  } finally {
    await group.stop();
    rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
    // Node 20's V8 logs with --perf-basic-prof too, to isolate-ADDRESS-PID-v8.log in the server's directory.
    for (const name of readdirSync(ctx.kb.root)) {
      if (name.startsWith('isolate-') && name.endsWith(`-${server.pid}-v8.log`)) rmSync(join(ctx.kb.root, name), { force: true });
    }
  }
}
