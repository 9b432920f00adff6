// Section 2: how long `kb tui` takes to draw its first screen of namespaces, in a real pseudo-terminal.
import { childEnv } from '../lib/env.mjs';
import { interleave, timeProcess, timeTerminal } from '../lib/processes.mjs';
import { figure, SAMPLE_HEADERS, sampleRow } from '../lib/report.mjs';

const ROWS = 40;
const COLS = 120;

function quote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export async function tuiSection(ctx) {
  const { kb, options } = ctx;
  // kb tui refuses to start under CI (childEnv drops it); TERM fixes what Ink assumes of the terminal.
  const env = childEnv(ctx.home, { KB_URL: ctx.main.url, KB_TOKEN: ctx.tokens.small, TERM: 'xterm-256color' });
  const command = `${quote(process.execPath)} ${quote(kb.bin)} tui`;
  const keys = ctx.seed.smallKeys;
  const terminal = { env, cwd: kb.root, rows: ROWS, cols: COLS };

  // Which seeded keys fit on the first screen: draw it once, take a good look, and wait for the last of them later.
  ctx.progress('tui: the first screen, once, to see what it shows');
  const look = await timeTerminal(command, { ...terminal, until: (text) => text.includes(keys[0]), settleMs: 1500 });
  const shown = keys.filter((key) => look.output.includes(key));
  const last = shown.at(-1);
  if (shown.length === 0 || shown.some((key, i) => key !== keys[i])) {
    throw new Error(`kb tui's first screen does not show the first namespaces in order; it drew:\n${look.output.slice(-3000)}`);
  }

  ctx.progress(`tui: kb tui until "${last}" is drawn, vs kb ns list --json`);
  const results = await interleave(
    [
      { name: 'kb ns list --json', run: async () => (await timeProcess(process.execPath, [kb.bin, 'ns', 'list', '--json'], { env, cwd: kb.root })).ms },
      { name: 'kb tui (first screen)', run: async () => (await timeTerminal(command, { ...terminal, until: (text) => text.includes(last) })).ms },
    ],
    { runs: options.runs, warmup: options.warmup, progress: ctx.tick },
  );
  const m = (name) => results.get(name).stats.median;
  return {
    title: `2. TUI first screen (ms from spawn to the namespace list drawn, ${COLS}x${ROWS} pty; medians)`,
    figures: [
      figure({
        name: `kb tui first screen vs kb ns list --json`,
        value: m('kb tui (first screen)'),
        baseline: m('kb ns list --json'),
        unit: 'ms',
        budget: { on: 'ratio', op: '<=', limit: 2 },
      }),
    ],
    details: [
      {
        title: `Samples (${options.runs} interleaved runs each after ${options.warmup} warm-up)`,
        ...SAMPLE_HEADERS,
        rows: [...results].map(([name, { stats }]) => sampleRow(name, stats)),
      },
    ],
    notes: [
      `kb tui runs under \`script -qfec "stty rows ${ROWS} cols ${COLS}; exec node bin/run.js tui" /dev/null\`; the clock stops when "${last}", the last of the ${shown.length} namespaces (of ${keys.length}) on its first screen, has been drawn; then q quits it.`,
    ],
    raw: Object.fromEntries(results),
  };
}
