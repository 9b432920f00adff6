// Section 5: kb serve replicas over PostgreSQL beside the SQLite engine and beside a plain `pg` program, in one run:
// durable creates through 2 replicas with 32 clients (and how many creates each commit carried), and ns_list of
// 10,000 namespaces per replica, and the CPU time each server process spends per create (warmed until it settles).
// PostgreSQL keeps its defaults: fsync and synchronous_commit on.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../lib/engines.mjs';
import { childEnv } from '../lib/env.mjs';
import { ApiClient, pool } from '../lib/http.mjs';
import { timeProcess } from '../lib/processes.mjs';
import { figure } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { LUA, runWrkGroup } from '../lib/wrk.mjs';

const PG_INSERTS = fileURLToPath(new URL('../baselines/pg-inserts.mjs', import.meta.url));
const REPLICAS = 2;
const CLIENTS = 32;
/** Clock ticks per second of /proc/PID/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;
/**
 * Warm-up runs of each server: at least WARMUP_MIN and WARMUP_SECONDS of load (a fresh server's JIT takes some 10 s),
 * at most WARMUP_RUNS, and how close the last two runs' CPU per create must be to call it settled.
 */
const WARMUP_MIN = 3;
const WARMUP_SECONDS = 15;
const WARMUP_RUNS = 8;
const SETTLED = 0.1;

/** CPU seconds (user + system) a process has used so far: /proc/PID/stat, fields 14 and 15. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Runs `load` (a wrk run of the group) and adds the microseconds of CPU its servers spent per request, summed over them. */
async function withCpu(group, load) {
  const cpu = () => group.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const before = cpu();
  const result = await load();
  return { ...result, cpuPerRequest: ((cpu() - before) / Math.max(1, result.requests)) * 1e6 };
}

async function withClient(url, fn) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Transactions committed in the database so far (reads too: a replica's fences are transactions), transaction ids
 * handed out in the cluster (one per transaction that wrote, and one per savepoint that wrote: nothing else runs in
 * the bench's cluster meanwhile), and WAL flushes to disk in the whole cluster (pg_stat_io, PostgreSQL 16 and later):
 * what a durable commit costs. Backends report their counts when idle, at most once a second: hence the wait.
 */
async function counters(url) {
  await new Promise((resolve) => setTimeout(resolve, 1200));
  return withClient(url, async (client) => {
    const { rows } = await client.query(
      `SELECT xact_commit::bigint AS n, pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xids
       FROM pg_stat_database WHERE datname = current_database()`,
    );
    const fsyncs = await client
      .query("SELECT coalesce(sum(fsyncs), 0)::bigint AS n FROM pg_stat_io WHERE object = 'wal'")
      .then((result) => Number(result.rows[0].n), () => NaN);
    return { commits: Number(rows[0].n), xids: Number(rows[0].xids), fsyncs };
  });
}

/** The PostgreSQL backends serving kb serve in the database (the replicas' pool and LISTEN connections), by pid. */
async function backendPids(url) {
  return withClient(url, async (client) => {
    const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'kb serve%'");
    return rows.map((row) => row.pid);
  });
}

/** CPU seconds of processes that may have ended meanwhile (an ended one counts what it had when last read). */
function cpuOf(pids, last = new Map()) {
  for (const pid of pids) {
    try {
      last.set(pid, cpuSeconds(pid));
    } catch {
      // Ended: keep what it had.
    }
  }
  return last;
}

async function seedNamespaces(group, token, count) {
  const client = new ApiClient(group.urls, token);
  await pool(Array.from({ length: count }, (_, i) => i), 32, (i) =>
    client.post('/ns_create', { key: `large-ns-${String(i).padStart(5, '0')}`, description: `Namespace ${i} of the large organization` }),
  );
  client.close();
}

export async function replicasSection(ctx) {
  const { options, kb, root, home } = ctx;
  const large = options.large;
  const postgres = ctx.engine.name === 'postgres' ? ctx.engine : createEngine('postgres', kb, root);
  if (postgres !== ctx.engine) {
    ctx.progress('replicas: starting a PostgreSQL');
    await postgres.start(home);
  }
  const sqliteEngine = createEngine('sqlite', kb, root);
  ctx.progress(`replicas: ${REPLICAS} kb serve over PostgreSQL, and one over SQLite`);
  const pgGroup = await postgres.group('replicas', home, REPLICAS);
  const sqliteGroup = await sqliteEngine.group('replicas-sqlite', home, 1);
  try {
    const pgUrl = pgGroup.storeArgs[1];
    const settings = await withClient(pgUrl, async (client) => {
      const read = async (name) => (await client.query(`SHOW ${name}`)).rows[0][name];
      return { fsync: await read('fsync'), synchronous_commit: await read('synchronous_commit'), version: await read('server_version') };
    });
    const tokens = {
      pg: { create: await pgGroup.mintToken('bench-create'), large: await pgGroup.mintToken('bench-large') },
      sqlite: { create: await sqliteGroup.mintToken('bench-create'), large: await sqliteGroup.mintToken('bench-large') },
    };
    ctx.progress(`replicas: seeding ${large.toLocaleString('en-US')} namespaces on each engine`);
    await seedNamespaces(pgGroup, tokens.pg.large, large);
    await seedNamespaces(sqliteGroup, tokens.sqlite.large, large);

    let runId = 0;
    const wrk = (urls, path, token, script, connections) =>
      runWrkGroup(urls.map((url) => url + path), {
        duration: options.duration,
        connections,
        threads: options.wrkThreads,
        script,
        env: childEnv(home, { KB_BENCH_TOKEN: token, KB_BENCH_RUN: `${process.pid}x${runId++}`, KB_BENCH_NAMESPACE: 'bench-create' }),
      });
    const perReplica = CLIENTS / REPLICAS;
    const runs = { pg: [], baseline: [], sqlite: [], pgList: [], sqliteList: [] };
    const commitRatios = [];
    const writeRatios = [];
    const flushRatios = { kb: [], plain: [] };
    const rows = [];
    // A fresh server costs more per request while its JIT warms up: each runs creates, alternately, until its CPU per
    // create settles (two runs in a row within SETTLED of each other), so the figures below are of warm servers.
    const creates = {
      pg: () => withCpu(pgGroup, () => wrk(pgGroup.urls, '/v1/base_create', tokens.pg.create, LUA.create, perReplica)),
      sqlite: () => withCpu(sqliteGroup, () => wrk(sqliteGroup.urls, '/v1/base_create', tokens.sqlite.create, LUA.create, CLIENTS)),
    };
    const warmup = { pg: [], sqlite: [] };
    const least = Math.max(WARMUP_MIN, Math.ceil(WARMUP_SECONDS / options.duration));
    const settled = (list) => list.length >= least && Math.abs(list.at(-1) - list.at(-2)) <= SETTLED * list.at(-2);
    for (let run = 1; run <= WARMUP_RUNS && !(settled(warmup.pg) && settled(warmup.sqlite)); run++) {
      ctx.progress(`replicas: warm-up ${run}, until the CPU per create settles`);
      for (const side of ['pg', 'sqlite']) if (!settled(warmup[side])) warmup[side].push((await creates[side]()).cpuPerRequest);
    }
    for (let round = 1; round <= options.rounds; round++) {
      ctx.progress(`replicas: creates through ${REPLICAS} PostgreSQL replicas, round ${round}`);
      const before = await counters(pgUrl);
      const backends = await backendPids(pgUrl);
      const backendsBefore = cpuOf(backends);
      const pg = await creates.pg();
      // A backend that started meanwhile (a connection the pool opened) counts all its CPU; one that ended, until last read.
      const backendsAfter = cpuOf(new Set([...backends, ...(await backendPids(pgUrl))]), new Map(backendsBefore));
      const after = await counters(pgUrl);
      pg.backendCpuPerRequest = ([...backendsAfter].reduce((sum, [pid, seconds]) => sum + seconds - (backendsBefore.get(pid) ?? 0), 0) / Math.max(1, pg.requests)) * 1e6;
      runs.pg.push(pg);
      const perCommit = pg.requests / Math.max(1, after.commits - before.commits);
      const perWrite = pg.requests / Math.max(1, after.xids - before.xids);
      const perFlush = pg.requests / Math.max(1, after.fsyncs - before.fsyncs);
      commitRatios.push(perCommit);
      writeRatios.push(perWrite);
      flushRatios.kb.push(perFlush);
      rows.push(['base_create', `kb serve x${REPLICAS}, PostgreSQL`, round, Math.round(pg.rps).toLocaleString('en-US'), pg.p99.toFixed(2), pg.errors, pg.cpuPerRequest.toFixed(1), pg.backendCpuPerRequest.toFixed(1), perCommit.toFixed(1), perWrite.toFixed(1), perFlush.toFixed(1)]);

      ctx.progress(`replicas: one INSERT per commit from a plain pg program, round ${round}`);
      const plainBefore = await counters(pgUrl);
      const { stdout } = await timeProcess(process.execPath, [PG_INSERTS, pgUrl, String(CLIENTS), String(options.duration)], { cwd: kb.root, env: childEnv(home) });
      const plainAfter = await counters(pgUrl);
      const plain = JSON.parse(stdout);
      runs.baseline.push({ rps: plain.inserts / plain.seconds });
      const plainPerFlush = plain.inserts / Math.max(1, plainAfter.fsyncs - plainBefore.fsyncs);
      flushRatios.plain.push(plainPerFlush);
      rows.push(['INSERT', `plain pg, ${CLIENTS} clients`, round, Math.round(plain.inserts / plain.seconds).toLocaleString('en-US'), '', 0, '', '', (plain.inserts / Math.max(1, plainAfter.commits - plainBefore.commits)).toFixed(1), (plain.inserts / Math.max(1, plainAfter.xids - plainBefore.xids)).toFixed(1), plainPerFlush.toFixed(1)]);

      ctx.progress(`replicas: creates through kb serve on SQLite, round ${round}`);
      const sqlite = await creates.sqlite();
      runs.sqlite.push(sqlite);
      rows.push(['base_create', 'kb serve, SQLite', round, Math.round(sqlite.rps).toLocaleString('en-US'), sqlite.p99.toFixed(2), sqlite.errors, sqlite.cpuPerRequest.toFixed(1), '', '', '', '']);

      ctx.progress(`replicas: ns_list of ${large.toLocaleString('en-US')} namespaces, round ${round}`);
      // What one replica serves: the other is idle meanwhile (on their own hosts, each would have its own cores).
      const pgList = await wrk(pgGroup.urls.slice(0, 1), '/v1/ns_list', tokens.pg.large, LUA.get, CLIENTS);
      runs.pgList.push(pgList);
      rows.push([`ns_list (${large.toLocaleString('en-US')})`, 'one kb serve replica, PostgreSQL', round, Math.round(pgList.rps).toLocaleString('en-US'), pgList.p99.toFixed(2), pgList.errors, '', '', '', '', '']);
      const sqliteList = await wrk(sqliteGroup.urls, '/v1/ns_list', tokens.sqlite.large, LUA.get, CLIENTS);
      runs.sqliteList.push(sqliteList);
      rows.push([`ns_list (${large.toLocaleString('en-US')})`, 'kb serve, SQLite', round, Math.round(sqliteList.rps).toLocaleString('en-US'), sqliteList.p99.toFixed(2), sqliteList.errors, '', '', '', '', '']);
    }
    const rps = (list) => median(list.map((r) => r.rps));
    const errors = [...runs.pg, ...runs.sqlite].reduce((sum, r) => sum + r.errors, 0);
    const listErrors = [...runs.pgList, ...runs.sqliteList].reduce((sum, r) => sum + r.errors, 0);
    const pgListPerReplica = rps(runs.pgList);
    const cpu = (list) => median(list.map((r) => r.cpuPerRequest));
    return {
      title: `5. Replicas: ${REPLICAS} kb serve over one PostgreSQL ${settings.version} (fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}) beside SQLite and plain pg`,
      figures: [
        figure({ name: `durable base_create through ${REPLICAS} PostgreSQL replicas, ${CLIENTS} clients, vs plain pg (one INSERT per commit)`, value: rps(runs.pg), baseline: rps(runs.baseline), unit: 'req/s', budget: { on: 'value', op: '>=', limit: 5000 } }),
        figure({ name: `durable base_create through ${REPLICAS} PostgreSQL replicas vs one kb serve on SQLite, same client`, value: rps(runs.pg), baseline: rps(runs.sqlite), unit: 'req/s', budget: { on: 'ratio', op: '>=', limit: 0.6 } }),
        figure({ name: `CPU per durable create: a PostgreSQL replica (of ${REPLICAS}, ${perReplica} clients each) vs kb serve on SQLite (${CLIENTS} clients), warm`, value: cpu(runs.pg), baseline: cpu(runs.sqlite), unit: 'µs', budget: { on: 'ratio', op: '<=', limit: 1.3 } }),
        figure({ name: `PostgreSQL's own CPU per durable create (the backends of the ${REPLICAS} replicas' connections; not in the figure above)`, value: median(runs.pg.map((r) => r.backendCpuPerRequest)), unit: 'µs' }),
        figure({ name: 'creates per PostgreSQL commit (pg_stat_database.xact_commit, reads included)', value: median(commitRatios), unit: 'x' }),
        figure({ name: 'creates per write transaction (transaction ids assigned, savepoints included)', value: median(writeRatios), unit: 'x' }),
        figure({ name: 'creates per WAL flush (pg_stat_io) vs plain pg inserts per WAL flush', value: median(flushRatios.kb), baseline: median(flushRatios.plain), unit: 'x', budget: { on: 'value', op: '>', limit: 1 } }),
        figure({ name: `ns_list (${large.toLocaleString('en-US')} ns) per PostgreSQL replica vs kb serve on SQLite`, value: pgListPerReplica, baseline: rps(runs.sqliteList), unit: 'req/s', budget: { on: 'ratio', op: '>=', limit: 0.5 } }),
        figure({ name: `ns_list (${large.toLocaleString('en-US')} ns) per PostgreSQL replica`, value: pgListPerReplica, unit: 'req/s', budget: { on: 'value', op: '>=', limit: 1000 } }),
        figure({ name: 'replies other than 200 (creates, lists)', value: errors + listErrors, unit: 'count', budget: { on: 'value', op: '=', limit: 0 } }),
      ],
      details: [
        {
          title: `Runs (${options.duration} s each, ${options.rounds} round${options.rounds > 1 ? 's' : ''}; creates on PostgreSQL: one wrk of ${perReplica} connections per replica at once, req/s summed; ns_list on PostgreSQL: one wrk of ${CLIENTS} on one replica; SQLite: one wrk of ${CLIENTS})`,
          headers: ['what', 'server', 'round', 'req/s', 'p99 ms', 'errors', 'CPU µs/create', 'PostgreSQL CPU µs/create', 'writes/commit', 'writes/xid', 'writes/WAL flush'],
          align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
          rows,
        },
      ],
      notes: [
        `Everything on one machine: PostgreSQL, the ${REPLICAS} replicas, the SQLite server, wrk and the plain pg program share its cores.`,
        'Plain pg: scripts/bench/baselines/pg-inserts.mjs, a connection per client, each INSERT its own transaction, into a table shaped like bases.',
        `CPU µs/create: user + system time of the kb serve processes (/proc/PID/stat) over the run, per create; for PostgreSQL, both replicas' over both replicas' creates (PostgreSQL's own backends not counted there: PostgreSQL CPU µs/create is theirs, the backends of the replicas' connections from pg_stat_activity, measured rounds only). Each server first ran creates (${least} runs at least) until two runs in a row were within ${SETTLED * 100}% of each other (warm-up runs, CPU µs/create: PostgreSQL ${warmup.pg.map((x) => x.toFixed(0)).join(', ')}; SQLite ${warmup.sqlite.map((x) => x.toFixed(0)).join(', ')}).`,
        'writes/commit: the writes counted over the transactions pg_stat_database counted in the database meanwhile, read-only ones included (each replica\'s fence before a turn of requests is one); writes/xid: over the transaction ids handed out meanwhile (one per transaction that wrote, one per savepoint that wrote), so over the write transactions alone; writes/WAL flush: over the WAL fsyncs of the cluster (pg_stat_io), the cost a durable commit pays.',
      ],
      raw: { settings, runs, warmup, commitRatios, writeRatios, flushRatios },
    };
  } finally {
    await pgGroup.stop();
    await sqliteGroup.stop();
  }
}
