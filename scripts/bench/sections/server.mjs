// Section 3: kb serve under wrk on loopback, each endpoint beside a bare node:http server, run by run alternately;
// then what a request costs kb serve in CPU time beside node:http, beside itself silent and beside itself with metrics.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWrkCpu, warmUntilSettled } from '../lib/cpu.mjs';
import { childEnv } from '../lib/env.mjs';
import { ApiClient, pool } from '../lib/http.mjs';
import { spawnTracked } from '../lib/lifecycle.mjs';
import { figure } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { LUA, runWrkGroup } from '../lib/wrk.mjs';

const BASELINE_SERVER = fileURLToPath(new URL('../baselines/http-server.mjs', import.meta.url));
const FASTIFY_SERVER = fileURLToPath(new URL('../baselines/fastify-server.mjs', import.meta.url));

/** The baseline server, answering kb's health body, or with `bodyFile` that file's bytes; or another `script`. */
function startBaseline(env, bodyFile, script = BASELINE_SERVER) {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, [script, ...(bodyFile === undefined ? [] : [bodyFile])], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url) resolve({ child, url, urls: [url], pids: [child.pid] });
    });
    child.once('exit', (code) => reject(new Error(`the baseline server exited (${code}) before listening`)));
  });
}

/** 10,000 namespaces in one organization and 10,000 bases in one namespace of another, through the API. */
export async function seedServerData(ctx) {
  const { main, options } = ctx;
  ctx.progress(`server: seeding ${options.large.toLocaleString('en-US')} namespaces and ${options.large.toLocaleString('en-US')} bases through the API`);
  const [large, bases, create] = [await main.mintToken('bench-large'), await main.mintToken('bench-bases'), await main.mintToken('bench-create')];
  Object.assign(ctx.tokens, { large, bases, create });
  const indexes = Array.from({ length: options.large }, (_, i) => i);
  const started = performance.now();
  const nsClient = new ApiClient(main.urls, large);
  await pool(indexes, 32, (i) => nsClient.post('/ns_create', { key: `large-ns-${String(i).padStart(5, '0')}`, description: `Namespace ${i} of the large organization` }));
  nsClient.close();
  const baseClient = new ApiClient(main.urls, bases);
  await pool(indexes, 32, (i) => baseClient.post('/base_create', { namespace: 'bench-big', key: `big-${String(i).padStart(5, '0')}`, description: `Base ${i} of the big namespace` }));
  baseClient.close();
  ctx.shared.seedRate = (2 * options.large) / ((performance.now() - started) / 1000);
}

export async function serverSection(ctx) {
  const { options } = ctx;
  const parts = options.serverParts ?? ['throughput', 'cost'];
  const throughput = parts.includes('throughput') ? await throughputPart(ctx) : undefined;
  const cost = parts.includes('cost') && ctx.engine.name === 'sqlite' ? await costPart(ctx) : undefined;
  const done = [throughput, cost].filter(Boolean);
  return {
    title: `3. Server: wrk on loopback, ${options.connections} connections${options.replicas > 1 ? ` to each of ${options.replicas} replicas (req/s summed)` : ''}, beside bare node:http`,
    figures: done.flatMap((p) => p.figures),
    details: done.flatMap((p) => p.details),
    notes: done.flatMap((p) => p.notes),
    raw: Object.assign({}, ...done.map((p) => p.raw)),
  };
}

async function throughputPart(ctx) {
  const { options, main } = ctx;
  await seedServerData(ctx);
  const large = options.large.toLocaleString('en-US');
  const endpoints = [
    { id: 'health', name: 'GET /v1/health', path: '/v1/health', script: LUA.get, budget: { on: 'ratio', op: '>=', limit: 0.9 } },
    { id: 'auth', name: 'GET /v1/auth', path: '/v1/auth', token: ctx.tokens.small, script: LUA.get, budget: { on: 'ratio', op: '>=', limit: 0.6 } },
    { id: 'ns_list_small', name: `GET /v1/ns_list (${ctx.seed.smallCount} ns)`, path: '/v1/ns_list', token: ctx.tokens.small, script: LUA.get, budget: { on: 'ratio', op: '>=', limit: 0.75 } },
    { id: 'ns_list_large', name: `GET /v1/ns_list (${large} ns)`, path: '/v1/ns_list', token: ctx.tokens.large, script: LUA.get, p99Budget: { on: 'value', op: '<', limit: 50 } },
    // For information: the same with one connection, the latency of a request that waits for no other.
    { id: 'ns_list_large_1', name: `GET /v1/ns_list (${large} ns), 1 connection`, path: '/v1/ns_list', token: ctx.tokens.large, script: LUA.get, p99Info: true, connections: 1, rounds: 1 },
    { id: 'base_list_large', name: `GET /v1/base_list (${large} bases)`, path: '/v1/base_list?namespace=bench-big', token: ctx.tokens.bases, script: LUA.get, p99Info: true, rounds: 1 },
    { id: 'base_create', name: 'POST /v1/base_create (durable)', path: '/v1/base_create', token: ctx.tokens.create, script: LUA.create, budget: { on: 'value', op: '>=', limit: 5000 }, errorsBudget: true },
  ];

  const baselineEnv = childEnv(ctx.home);
  const baselines = [];
  for (let i = 0; i < options.replicas; i++) baselines.push(await startBaseline(baselineEnv));
  const sides = { baseline: baselines.map((b) => b.url), kb: main.urls };
  const wrk = { duration: options.duration, connections: options.connections, threads: options.wrkThreads };

  const figures = [];
  const rows = [];
  const raw = {};
  let runId = 0;
  for (const endpoint of endpoints) {
    const results = { baseline: [], kb: [] };
    const go = (side, duration) => {
      const env = childEnv(ctx.home, {
        KB_BENCH_TOKEN: endpoint.token ?? '',
        KB_BENCH_RUN: `${process.pid}x${runId++}`,
        KB_BENCH_NAMESPACE: 'bench-create',
      });
      return runWrkGroup(sides[side].map((url) => url + endpoint.path), { ...wrk, connections: endpoint.connections ?? wrk.connections, duration, script: endpoint.script, env });
    };
    if (options.wrkWarmup > 0) {
      ctx.progress(`server: ${endpoint.name}: warm-up`);
      await go('baseline', options.wrkWarmup);
      await go('kb', options.wrkWarmup);
    }
    const rounds = Math.min(endpoint.rounds ?? options.rounds, options.rounds);
    for (let round = 1; round <= rounds; round++) {
      for (const side of ['baseline', 'kb']) {
        ctx.progress(`server: ${endpoint.name}: ${side}, round ${round} of ${rounds}`);
        const result = await go(side, options.duration);
        results[side].push(result);
        rows.push([endpoint.name, side === 'kb' ? 'kb serve' : 'node:http', round, Math.round(result.rps).toLocaleString('en-US'), result.p50.toFixed(2), result.p99.toFixed(2), result.max.toFixed(1), result.errors, Math.round(result.bytesPerReply)]);
      }
    }
    raw[endpoint.id] = results;
    const rps = (side) => median(results[side].map((r) => r.rps));
    const p99 = (side) => median(results[side].map((r) => r.p99));
    if (endpoint.p99Budget || endpoint.p99Info) {
      figures.push(figure({ name: `${endpoint.name} p99`, value: p99('kb'), baseline: p99('baseline'), unit: 'ms', budget: endpoint.p99Budget }));
      figures.push(figure({ name: `${endpoint.name}`, value: rps('kb'), baseline: rps('baseline'), unit: 'req/s' }));
    } else {
      figures.push(figure({ name: endpoint.name, value: rps('kb'), baseline: rps('baseline'), unit: 'req/s', budget: endpoint.budget }));
    }
    if (endpoint.errorsBudget) {
      const errors = results.kb.reduce((sum, r) => sum + r.errors, 0);
      figures.push(figure({ name: `${endpoint.name}: replies other than 200`, value: errors, baseline: results.baseline.reduce((sum, r) => sum + r.errors, 0), unit: 'count', budget: { on: 'value', op: '=', limit: 0 } }));
    }
  }
  // Errors on a read endpoint void its figure: say so rather than hide it in the details.
  const readErrors = Object.entries(raw).filter(([id]) => id !== 'base_create').flatMap(([id, r]) => r.kb.filter((x) => x.errors > 0).map(() => id));

  const probe = new ApiClient(main.urls, ctx.tokens.create);
  const created = (await probe.get('/base_list?namespace=bench-create')).length;
  probe.close();

  for (const baseline of baselines) baseline.child.kill('SIGTERM');
  return {
    figures,
    details: [
      {
        title: `wrk runs (${options.duration} s each${options.wrkWarmup > 0 ? ` after a ${options.wrkWarmup} s warm-up of each side` : ''}, ${options.wrkThreads} thread${options.wrkThreads > 1 ? 's' : ''}, alternately the baseline and kb serve; a figure is the median over its rounds; figures for information get one round)`,
        headers: ['endpoint', 'server', 'round', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'bytes/reply'],
        align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        rows,
      },
    ],
    notes: [
      'kb serve runs at its default log level (info: one line per request), its log going to a file in the benchmark\'s temp dir.',
      'The baseline (scripts/bench/baselines/http-server.mjs) answers every request with {"success":true,"data":"alive"} and the same headers, after reading the body.',
      `base_create: every request a new key (run, thread, counter) in one namespace; ${created.toLocaleString('en-US')} bases were in it at the end.`,
      `Seeding through the API (node:http, 32 at a time): ${Math.round(ctx.shared.seedRate).toLocaleString('en-US')} writes/s.`,
      ...(readErrors.length > 0 ? [`ERRORS on ${[...new Set(readErrors)].join(', ')}: see the wrk runs above.`] : []),
    ],
    raw,
  };
}

/**
 * CPU time per request, each server warmed until its CPU per request settles, then measured in rounds that alternate
 * the servers of a comparison (A B C A B C), wrk's req/s beside it. The budgets are ratios of CPU per request:
 * node:http's over kb serve's (how efficient kb is beside the least any Node server pays), kb at its default log level
 * over kb silent (what the request log costs), kb without --admin-port over kb with it (what metrics cost).
 */
async function costPart(ctx) {
  const { options, main } = ctx;
  const env = childEnv(ctx.home);
  const nsBody = join(ctx.root, 'ns-list-body.json');
  const answer = await fetch(`${main.url}/v1/ns_list`, { headers: { authorization: `Bearer ${ctx.tokens.small}` } });
  if (answer.status !== 200) throw new Error(`GET /v1/ns_list answered ${answer.status}`);
  writeFileSync(nsBody, Buffer.from(await answer.arrayBuffer()));
  ctx.progress('server cost: starting the node:http baselines, a kb serve --log-level silent and a kb serve --admin-port');
  const nodeHealth = await startBaseline(env);
  const nodeNs = await startBaseline(env, nsBody);
  const bareFastify = await startBaseline(env, undefined, FASTIFY_SERVER);
  const silent = await ctx.engine.group('silent', ctx.home, 1, ['--log-level', 'silent']);
  const metrics = await ctx.engine.group('metrics', ctx.home, 1, ['--admin-port', '0']);
  // Another build beside this one (--against), at info over a store of its own.
  const againstKb = options.against && { ...ctx.kb, root: options.against, bin: join(options.against, 'bin', 'run.js') };
  const against = againstKb ? await ctx.engine.group('against', ctx.home, 1, [], {}, againstKb) : undefined;
  const server = (name, group, token) => ({ name, urls: group.urls, pids: group.pids ?? group.servers?.map((s) => s.pid), token });
  // Processes of one kb serve differ by up to a third in CPU per request, as each start leaves V8 in its own state
  // (docs/performance.md): each kb side is `processes` processes over the same store, a round on each in turn.
  const processes = async (name, group, token) => {
    const list = [server(name, group, token)];
    while (list.length < options.processes) {
      ctx.progress(`server cost: starting process ${list.length + 1} of ${options.processes} of ${name}`);
      const other = await group.another();
      list.push({ name, urls: [other.url], pids: [other.pid], token });
    }
    return list;
  };
  const servers = {
    node: [server('node:http, same body', nodeHealth)],
    fastify: [server('bare Fastify, same body', bareFastify)],
    nodeNs: [server('node:http, same body', nodeNs)],
    info: await processes('kb serve (log level info)', main, ctx.tokens.small),
    silent: await processes('kb serve --log-level silent', silent, silent.firstToken),
    metrics: await processes('kb serve --admin-port (metrics on)', metrics, metrics.firstToken),
    ...(against ? { against: await processes(`kb serve (info) of ${options.against}`, against, against.firstToken) } : {}),
  };
  const rounds = Math.max(options.rounds, options.processes);
  const comparisons = [
    { name: 'GET /v1/health', path: '/v1/health', sides: ['node', 'fastify', 'info', 'silent', 'metrics', ...(against ? ['against'] : [])] },
    { name: 'GET /v1/auth', path: '/v1/auth', sides: ['info', 'metrics'] },
    { name: `GET /v1/ns_list (${ctx.seed.smallCount} ns)`, path: '/v1/ns_list', sides: ['nodeNs', 'info'] },
  ];
  const wrk = { connections: options.connections, threads: options.wrkThreads, script: LUA.get };
  const warmSeconds = options.quick ? 1 : 2;
  const rows = [];
  const warmRows = [];
  const figures = [];
  const raw = {};
  let runId = 0;
  try {
    for (const comparison of comparisons) {
      const go = (s, duration) => {
        const runEnv = childEnv(ctx.home, { KB_BENCH_TOKEN: s.token ?? '', KB_BENCH_RUN: `${process.pid}c${runId++}` });
        return runWrkCpu(s.urls.map((url) => url + comparison.path), s.pids, { ...wrk, duration, env: runEnv });
      };
      const label = (side, i) => `${servers[side][i].name}${servers[side].length > 1 ? ` #${i + 1}` : ''}`;
      for (const side of comparison.sides) {
        for (const [i, s] of servers[side].entries()) {
          ctx.progress(`server cost: ${comparison.name}: warming ${label(side, i)}`);
          const seen = await warmUntilSettled(() => go(s, warmSeconds), { maxRuns: options.quick ? 3 : 8 });
          warmRows.push([comparison.name, label(side, i), seen.length, seen.map((x) => x.toFixed(1)).join(' → ')]);
        }
      }
      const results = Object.fromEntries(comparison.sides.map((side) => [side, []]));
      for (let round = 1; round <= rounds; round++) {
        for (const side of comparison.sides) {
          const i = (round - 1) % servers[side].length;
          ctx.progress(`server cost: ${comparison.name}: ${label(side, i)}, round ${round} of ${rounds}`);
          const result = await go(servers[side][i], options.duration);
          results[side].push(result);
          rows.push([comparison.name, label(side, i), round, result.cpuUsPerRequest.toFixed(1), Math.round(result.rps).toLocaleString('en-US'), result.errors]);
        }
      }
      raw[`cost ${comparison.name}`] = results;
      const cpu = (side) => median(results[side].map((r) => r.cpuUsPerRequest));
      const has = (side) => comparison.sides.includes(side);
      if (has('node')) {
        figures.push(figure({ name: `${comparison.name} CPU/req: kb serve (info) beside node:http (node:http's over kb's)`, value: cpu('info'), baseline: cpu('node'), unit: 'µs/req', efficiency: true, budget: { on: 'ratio', op: '>=', limit: 0.8 } }));
      }
      if (has('fastify')) {
        // For information, no budget: what Fastify itself costs beside node:http, and what kb serve adds to it.
        figures.push(figure({ name: `${comparison.name} CPU/req: bare Fastify beside node:http (node:http's over Fastify's)`, value: cpu('fastify'), baseline: cpu('node'), unit: 'µs/req', efficiency: true }));
        figures.push(figure({ name: `${comparison.name} CPU/req: kb serve (info) beside bare Fastify (Fastify's over kb's)`, value: cpu('info'), baseline: cpu('fastify'), unit: 'µs/req', efficiency: true }));
      }
      if (has('nodeNs')) {
        figures.push(figure({ name: `${comparison.name} CPU/req: kb serve (info) beside node:http with the same body (node:http's over kb's)`, value: cpu('info'), baseline: cpu('nodeNs'), unit: 'µs/req', efficiency: true, budget: { on: 'ratio', op: '>=', limit: 0.6 } }));
      }
      if (has('silent')) {
        figures.push(figure({ name: `${comparison.name} CPU/req: log level info vs silent`, value: cpu('info'), baseline: cpu('silent'), unit: 'µs/req', budget: { on: 'ratio', op: '<=', limit: 1.05 } }));
      }
      if (has('against')) {
        figures.push(figure({ name: `${comparison.name} CPU/req: kb serve (info) vs the build of ${options.against} (info)`, value: cpu('info'), baseline: cpu('against'), unit: 'µs/req', budget: { on: 'ratio', op: '<=', limit: 1.1 } }));
      }
      if (has('metrics')) {
        figures.push(figure({ name: `${comparison.name} CPU/req: --admin-port (metrics on) vs without (without's over on's)`, value: cpu('metrics'), baseline: cpu('info'), unit: 'µs/req', efficiency: true, budget: { on: 'ratio', op: '>=', limit: 0.9 } }));
      }
    }
  } finally {
    await Promise.all([silent.stop(), metrics.stop(), against?.stop()]);
    nodeHealth.child.kill('SIGTERM');
    nodeNs.child.kill('SIGTERM');
    bareFastify.child.kill('SIGTERM');
  }
  return {
    figures,
    details: [
      {
        title: `CPU per request (utime + stime of the server process over a wrk run, over the requests wrk counted; ${options.duration} s runs, alternately each server of an endpoint, each kb side ${options.processes} process(es) taking the rounds in turn; a figure is the median over its rounds)`,
        headers: ['endpoint', 'server', 'round', 'CPU µs/req', 'req/s', 'errors'],
        align: ['l', 'l', 'r', 'r', 'r', 'r'],
        rows,
      },
      {
        title: `Warm-up of each server before its rounds (${warmSeconds} s runs until two in a row are within 5% in CPU per request)`,
        headers: ['endpoint', 'server', 'runs', 'CPU µs/req, run by run'],
        align: ['l', 'l', 'r', 'l'],
        rows: warmRows,
      },
    ],
    notes: [
      'CPU per request is the budget\'s measure: on a shared machine req/s follows the load of other processes, CPU time per request much less.',
      `The node:http baselines (scripts/bench/baselines/http-server.mjs) answer the same bytes as kb serve (the health body, or the ns_list answer of ${ctx.seed.smallCount} namespaces captured once) with the same headers.`,
      'Bare Fastify (scripts/bench/baselines/fastify-server.mjs, for information): Fastify with no logger, options or plugins, one route answering the health body with the same headers.',
    ],
    raw,
  };
}
