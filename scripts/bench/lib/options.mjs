import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const SECTIONS = ['cli', 'node-versions', 'tui', 'server', 'profile', 'export-scale', 'scale', 'replicas', 'writes', 'watchers'];
/** What a run without --only runs: perf may be missing, or not allowed to sample. */
const DEFAULT_SECTIONS = SECTIONS.filter((s) => s !== 'profile' && s !== 'writes');

export const USAGE = `Usage: node scripts/bench/index.mjs [options]     (npm run bench -- [options] builds first)

Measures kb against baselines run in the same session and prints each figure, its baseline, their ratio,
the budget and PASS/FAIL.

  --only LIST        sections to run, comma-separated: ${SECTIONS.join(',')} (default: all
                     but profile, which says where kb serve's CPU per request goes, with perf as root)
  --runs N           runs of each timed process, interleaved (default 21, at least 11; --quick: 5)
  --duration S       seconds of each wrk run (default 5)
  --rounds N         wrk runs of each side an endpoint, alternating baseline and kb (default 2)
  --scale N          bases to create in the scale section (default 100000)
  --engine NAME      storage engine of kb serve: sqlite (default) or postgres (kb serve --database)
  --replicas N       kb serve processes over one database (postgres only; default 1)
  --server-parts L   parts of the server section, comma-separated: throughput (req/s of each endpoint),
                     cost (CPU per request beside node:http, silent and metrics on) (default: both)
  --processes N      kb serve processes of each kind in the server section's cost part, taking its rounds in
                     turn (default 3, --quick: 1): one process's CPU per request is a draw of V8's state at start
  --against DIR      another kb checkout, built (its bin/run.js and dist/): one more side of the cost part's
                     GET /v1/health, a kb serve of that build at info, and a figure of this build's CPU per
                     request over that one's (budget: at most 1.1x); and the writes section (--only writes):
                     durable writes of that build and this one in turn
  --json FILE        also write the results as JSON to FILE
  --quick            a smoke run (under a minute): 5 runs, 1 s wrk runs, 2,000 namespaces and bases
                     for the large lists, 10,000 in the scale section, export-scale up to 10,000
                     namespaces; figures are rough
  --check            exit 1 when a budget is missed (exit 2 when the benchmark itself fails)
  -h, --help         this text`;

function integer(name, text, min) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}, not ${JSON.stringify(text)}`);
  return value;
}

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      scale: { type: 'string' },
      engine: { type: 'string', default: 'sqlite' },
      replicas: { type: 'string', default: '1' },
      'server-parts': { type: 'string', default: 'throughput,cost' },
      processes: { type: 'string' },
      json: { type: 'string' },
      against: { type: 'string' },
      quick: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick;
  const only = (values.only ?? DEFAULT_SECTIONS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only.filter((s) => !SECTIONS.includes(s));
  if (unknown.length > 0) throw new Error(`--only: unknown section ${unknown.join(', ')}; the sections are ${SECTIONS.join(', ')}`);
  if (!['sqlite', 'postgres'].includes(values.engine)) throw new Error(`--engine must be sqlite or postgres, not ${JSON.stringify(values.engine)}`);
  const serverParts = values['server-parts'].split(',').map((s) => s.trim()).filter(Boolean);
  const unknownParts = serverParts.filter((s) => !['throughput', 'cost'].includes(s));
  if (unknownParts.length > 0) throw new Error(`--server-parts: unknown part ${unknownParts.join(', ')}; the parts are throughput, cost`);
  return {
    help: values.help,
    serverParts,
    only: SECTIONS.filter((s) => only.includes(s)),
    runs: values.runs === undefined ? (quick ? 5 : 21) : integer('runs', values.runs, 11),
    warmup: quick ? 1 : 2,
    duration: values.duration === undefined ? (quick ? 1 : 5) : integer('duration', values.duration, 1),
    rounds: values.rounds === undefined ? (quick ? 1 : 2) : integer('rounds', values.rounds, 1),
    processes: values.processes === undefined ? (quick ? 1 : 3) : integer('processes', values.processes, 1),
    wrkWarmup: quick ? 0 : 1,
    wrkThreads: 1,
    connections: 32,
    large: quick ? 2_000 : 10_000,
    scale: values.scale === undefined ? (quick ? 10_000 : 100_000) : integer('scale', values.scale, 4),
    engine: values.engine,
    replicas: integer('replicas', values.replicas, 1),
    json: values.json,
    against: values.against === undefined ? undefined : resolve(values.against),
    quick,
    check: values.check,
  };
}
