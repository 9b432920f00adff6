// Section 2: how long `kb tui` takes to draw its first screen of namespaces, in a real pseudo-terminal, for a small
// list and for 100,000 namespaces, and how long a key (End, Home, PgDn, a filter keystroke) takes to show.
import { childEnv } from '../lib/env.mjs';
import { interleave, timeProcess, timeTerminal } from '../lib/processes.mjs';
import { seedThroughStore } from '../lib/seed.mjs';
import { figure, SAMPLE_HEADERS, sampleRow } from '../lib/report.mjs';
import { summarize } from '../lib/stats.mjs';

const ROWS = 40;
const COLS = 120;
const BIG = 100_000;
/** Runs of each big-list subject at most: a run of kb tui or kb ns list on 100,000 namespaces takes seconds. */
const BIG_RUNS = 11;
/** The rows of the list on a 40-row screen: the header, a title, the column header, two status lines, the key help, a spare row. */
const PAGE = ROWS - 7;

function quote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** "100,000": how kb tui writes counts. */
function thousands(n) {
  return n.toLocaleString('en-US');
}

/**
 * Organization `bench-big` on the main server, with `count` namespaces written through the store (src/store, by
 * way of tsx) beside the running kb serve, as `kb serve token create` writes beside it: one transaction, seconds,
 * where as many HTTP creates take minutes on a small machine. Resolves with a token of the organization.
 */
async function seedBig(ctx, count) {
  const key = (i) => `big-ns-${String(i).padStart(6, '0')}`;
  const { token, result } = await seedThroughStore(ctx, 'bench-big', async (store, orgId) => {
    const started = performance.now();
    // Asked for all at once: the SQLite engine writes what a turn of the event loop asks in one transaction.
    await Promise.all(Array.from({ length: count }, (_, i) => store.nsCreate(orgId, { key: key(i), description: `Namespace ${i} of the big list` })));
    return (performance.now() - started) / 1000;
  });
  return { token, firstKey: key(0), lastKey: key(count - 1), seconds: result };
}

/**
 * The keys each kb tui run presses once its first screen is drawn, and what shows that each has been handled: the
 * position at the right of the title ("100,000/100,000"), or the count of a filtered list ("(11,111/100,000)").
 */
function keySteps(count) {
  const total = thousands(count);
  return [
    { name: 'End', keys: '\u001B[F', until: (text) => text.includes(`${total}/${total}`) },
    { name: 'Home', keys: '\u001B[H', until: (text) => text.includes(` 1/${total}`) },
    { name: 'PgDn', keys: '\u001B[6~', until: (text) => text.includes(`${thousands(PAGE + 1)}/${total}`) },
    { name: '/ (open the filter)', keys: '/', until: (text) => /\d matches?[^:\n]*: enter keeps the filter/.test(text) },
    { name: '7 (filter the list)', keys: '7', until: (text) => new RegExp(`namespaces \\(\\d[\\d,]*/${total}\\)`).test(text) },
  ];
}

export async function tuiSection(ctx) {
  const { kb, options } = ctx;
  const big = options.quick ? options.large : BIG;
  ctx.progress(`tui: seeding ${thousands(big)} namespaces through the store`);
  const seeded = await seedBig(ctx, big);
  // kb tui refuses to start under CI (childEnv drops it); TERM fixes what Ink assumes of the terminal.
  const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: ctx.tokens.small, TERM: 'xterm-256color' });
  const bigEnv = { ...env, KB_TOKEN: seeded.token };
  // Refreshes off: one of 100,000 namespaces in the middle of the keys would be measured as a slow key.
  const command = `${quote(process.execPath)} ${quote(kb.bin)} tui --refresh 0`;
  const keys = ctx.seed.smallKeys;
  const terminal = { env, cwd: kb.root, rows: ROWS, cols: COLS };

  // Which seeded keys fit on the first screen: draw it once, take a good look, and wait for the last of them later.
  ctx.progress('tui: the first screen, once, to see what it shows');
  const look = await timeTerminal(command, { ...terminal, until: (text) => text.includes(keys[0]), settleMs: 1500 });
  const shown = keys.filter((key) => look.output.includes(key));
  const last = shown.at(-1);
  if (shown.length === 0 || shown.some((key, i) => key !== keys[i]) || shown.length !== PAGE) {
    throw new Error(`kb tui's first screen does not show the first ${PAGE} namespaces in order; it drew:\n${look.output.slice(-3000)}`);
  }
  const bigLast = `big-ns-${String(PAGE - 1).padStart(6, '0')}`;

  /** A kb tui run: the first screen, then the keys; the keys' times go to `steps` (the warm-up's too, dropped later). */
  const tuiRun = (runEnv, awaited, count, steps) => async () => {
    // The filter has the keys after the last step: enter keeps it and gives them back to the list, where q quits.
    const result = await timeTerminal(command, { ...terminal, env: runEnv, until: (text) => text.includes(awaited), steps: keySteps(count), quit: '\rq', timeoutMs: 60_000 });
    for (const [name, ms] of Object.entries(result.stepMs)) (steps[name] ??= []).push(ms);
    return result.ms;
  };
  const smallSteps = {};
  const bigSteps = {};

  ctx.progress(`tui: kb tui until "${last}" is drawn, then keys, vs kb ns list --json`);
  const small = await interleave(
    [
      { name: 'kb ns list --json', run: async () => (await timeProcess(process.execPath, [kb.bin, 'ns', 'list', '--json'], { env, cwd: kb.root })).ms },
      { name: 'kb tui (first screen)', run: tuiRun(env, last, ctx.seed.smallCount, smallSteps) },
    ],
    { runs: options.runs, warmup: options.warmup, progress: ctx.tick },
  );
  const bigRuns = Math.min(options.runs, BIG_RUNS);
  ctx.progress(`tui: the same on ${thousands(big)} namespaces`);
  const large = await interleave(
    [
      { name: `kb ns list --json (${thousands(big)})`, run: async () => (await timeProcess(process.execPath, [kb.bin, 'ns', 'list', '--json'], { env: bigEnv, cwd: kb.root, timeoutMs: 60_000 })).ms },
      { name: `kb tui (first screen, ${thousands(big)})`, run: tuiRun(bigEnv, bigLast, big, bigSteps) },
    ],
    { runs: bigRuns, warmup: 1, progress: ctx.tick },
  );
  const keyStats = (steps, warmup) => Object.fromEntries(Object.entries(steps).map(([name, samples]) => [name, summarize(samples.slice(warmup))]));
  const smallKeys = keyStats(smallSteps, options.warmup);
  const bigKeys = keyStats(bigSteps, 1);
  const m = (results, name) => results.get(name).stats.median;
  const stepNames = keySteps(big).map((step) => step.name);
  return {
    title: `2. TUI first screen and keys (ms, ${COLS}x${ROWS} pty; medians)`,
    figures: [
      figure({
        name: `kb tui first screen vs kb ns list --json (${ctx.seed.smallCount} namespaces)`,
        value: m(small, 'kb tui (first screen)'),
        baseline: m(small, 'kb ns list --json'),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 2 },
      }),
      figure({
        name: `kb tui first screen vs kb ns list --json (${thousands(big)} namespaces)`,
        value: m(large, `kb tui (first screen, ${thousands(big)})`),
        baseline: m(large, `kb ns list --json (${thousands(big)})`),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 2 },
      }),
      ...stepNames.map((name) =>
        figure({ name: `key ${name}, drawn: ${thousands(big)} namespaces vs ${ctx.seed.smallCount}`, value: bigKeys[name].median, baseline: smallKeys[name].median, unit: 'ms' }),
      ),
    ],
    details: [
      {
        title: `Samples (${options.runs} interleaved runs each after ${options.warmup} warm-up; ${bigRuns} after 1 for ${thousands(big)} namespaces)`,
        ...SAMPLE_HEADERS,
        rows: [...small, ...large].map(([name, { stats }]) => sampleRow(name, stats)),
      },
      {
        title: 'Keys: ms from the key written to the pty to its effect drawn',
        ...SAMPLE_HEADERS,
        rows: stepNames.flatMap((name) => [sampleRow(`${name} (${ctx.seed.smallCount})`, smallKeys[name]), sampleRow(`${name} (${thousands(big)})`, bigKeys[name])]),
      },
    ],
    notes: [
      `kb tui runs under \`script -qfec "stty rows ${ROWS} cols ${COLS}; exec node bin/run.js tui --refresh 0" /dev/null\`; the first screen is timed until "${last}" (small list) or "${bigLast}" (big list), the last namespace on it, has been drawn; then End, Home, PgDn, / and 7 are written one after another, each once the previous one has shown, and timed until the screen shows it; then q quits.`,
      `The ${thousands(big)} namespaces (organization bench-big, descriptions of about 30 characters) were written through the store beside the running kb serve in ${seeded.seconds.toFixed(1)} s.`,
    ],
    raw: { small: Object.fromEntries(small), large: Object.fromEntries(large), smallKeys: smallSteps, bigKeys: bigSteps },
  };
}
