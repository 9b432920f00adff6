// Section node-versions: kb's start on each Node major users run (20, 22, 24), from the one dist/ that `npm run bench`
// built, beside bare node processes of the same Node doing the same job.
//
// The Nodes come from the npm registry's `node` package (as .ci/node-version fetches them), kept in
// node_modules/.cache/kb-bench/node-MAJOR for later runs; a Node that cannot be fetched is skipped with a note. The
// build made the vendor bundles' V8 code caches with the Node that built (scripts/vendor-cache.mjs): another Node makes
// its own in its compile cache directory at its first run (scripts/vendor-load.mjs), here a directory of the bench's
// own per Node; the warm-up runs make it. From Node 22, a "first run" row shows what a start costs before that.
//
// Figures are CPU time (user + system, from wait4 in a python3 wrapper), which other work on a shared machine
// disturbs far less than wall-clock time; without python3, wall-clock time from spawn to exit.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from '../lib/env.mjs';
import { subDir } from '../lib/lifecycle.mjs';
import { interleave, timeProcess } from '../lib/processes.mjs';
import { figure, SAMPLE_HEADERS, sampleRow } from '../lib/report.mjs';

const MAJORS = [20, 22, 24];

/** Runs argv[1:] as a child, passes its exit code on, and prints its CPU milliseconds as the last line of stderr. */
const CPU_WRAPPER = `import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\nkb-bench-cpu-ms %.3f\\n" % ((usage.ru_utime + usage.ru_stime) * 1000))
sys.exit(os.waitstatus_to_exitcode(status))`;

/** The node binary of the latest `major` from the npm registry, fetched into `cacheRoot` once. */
function fetchNode(cacheRoot, major) {
  const prefix = join(cacheRoot, `node-${major}`);
  const bin = join(prefix, 'node_modules/node/bin/node');
  if (!existsSync(bin)) {
    const npm = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', prefix, `node@${major}`], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (npm.status !== 0 || !existsSync(bin)) {
      const why = (npm.error?.message ?? npm.stderr ?? '').trim().split('\n')[0] || `npm exited ${npm.status}`;
      throw new Error(`npm could not fetch node@${major} (${why})`);
    }
  }
  return bin;
}

export async function nodeVersionsSection(ctx) {
  const { kb, options } = ctx;
  const cacheRoot = join(kb.root, 'node_modules/.cache/kb-bench');
  const cpu = spawnSync('python3', ['-c', 'import os; os.wait4'], { stdio: 'ignore' }).status === 0;
  const unit = 'ms';
  const measure = cpu ? 'ms of CPU' : 'ms from spawn to exit';
  const httpScript = join(kb.benchDir, 'baselines', 'ns-list-http.mjs');
  const kbList = ['ns', 'list', '--json'];
  const figures = [];
  const details = [];
  const notes = [
    `one dist/, built by ${process.version}; each Node runs it as installed, its compile cache in a directory of the bench's own`,
    cpu ? 'figures are CPU time (user + system) of the measured process' : 'no python3: figures are wall-clock time from spawn to exit',
  ];
  for (const major of MAJORS) {
    ctx.progress(`node-versions: Node ${major} from the npm registry`);
    let node;
    try {
      node = fetchNode(cacheRoot, major);
    } catch (error) {
      notes.push(`Node ${major}: skipped: ${error.message}`);
      continue;
    }
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    const compileCache = subDir(ctx.root, `compile-cache-node${major}`);
    const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: ctx.tokens.small, NODE_COMPILE_CACHE: compileCache });
    let fresh = 0;
    /** One run of `node args`, in `runEnv`: its CPU (or wall-clock) milliseconds. */
    const run = (args, runEnv = () => env) => async () => {
      const result = cpu
        ? await timeProcess('python3', ['-c', CPU_WRAPPER, node, ...args], { env: runEnv(), cwd: kb.root })
        : await timeProcess(node, args, { env: runEnv(), cwd: kb.root });
      if (!cpu) return result.ms;
      const match = /kb-bench-cpu-ms (\d+(?:\.\d+)?)\n$/.exec(result.stderr);
      if (!match) throw new Error(`node ${args.join(' ')}: no CPU time reported:\n${result.stderr}`);
      return Number(match[1]);
    };

    const printed = execFileSync(node, [kb.bin, '--version'], { env, encoding: 'utf8' });
    if (!printed.includes(`node-${version}`)) throw new Error(`kb --version on ${version} printed ${printed.trim()}`);
    const subjects = [
      { name: `${version}: node -e 0`, run: run(['-e', '0']) },
      { name: `${version}: kb --version`, run: run([kb.bin, '--version']) },
      { name: `${version}: node ns-list-http.mjs`, run: run([httpScript]) },
      { name: `${version}: kb ns list --json`, run: run([kb.bin, ...kbList]) },
    ];
    if (major >= 22) {
      // Each run with an empty compile cache: no code cache for kb's modules, nor for the vendor bundles.
      subjects.push({
        name: `${version}: kb ns list --json, first run`,
        run: run([kb.bin, ...kbList], () => ({ ...env, NODE_COMPILE_CACHE: subDir(ctx.root, `compile-cache-node${major}-fresh-${fresh++}`) })),
      });
    }
    ctx.progress(`node-versions: ${version}`);
    const results = await interleave(subjects, { runs: options.runs, warmup: options.warmup, progress: ctx.tick });
    const m = (name) => results.get(`${version}: ${name}`).stats.median;
    figures.push(
      figure({ name: `${version}: kb --version vs node -e 0`, value: m('kb --version'), baseline: m('node -e 0'), unit, budget: { on: 'ratio', op: '<=', limit: 4.0 } }),
      figure({
        name: `${version}: kb ns list --json (${ctx.seed.smallCount} ns) vs node:http`,
        value: m('kb ns list --json'),
        baseline: m('node ns-list-http.mjs'),
        unit,
        budget: { on: 'ratio', op: '<=', limit: 3.0 },
      }),
    );
    if (major >= 22) {
      figures.push(
        figure({
          name: `${version}: kb ns list --json, first run (no compile cache yet) vs node:http`,
          value: m('kb ns list --json, first run'),
          baseline: m('node ns-list-http.mjs'),
          unit,
        }),
      );
    }
    details.push(...[...results].map(([name, result]) => sampleRow(name, result.stats)));
  }
  return {
    title: `node-versions. kb's start on Node ${MAJORS.join(', ')} from one build (${measure}; medians)`,
    figures,
    details: [{ title: `Samples (${measure})`, ...SAMPLE_HEADERS, rows: details }],
    notes,
  };
}
