// Figures, budgets and the tables they are printed in.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const UNITS = {
  ms: (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`,
  µs: (x) => `${x.toFixed(x < 10 ? 2 : 1)} µs`,
  'req/s': (x) => `${Math.round(x).toLocaleString('en-US')} req/s`,
  MB: (x) => `${x.toFixed(1)} MB`,
  B: (x) => `${Math.round(x).toLocaleString('en-US')} B`,
  count: (x) => Math.round(x).toLocaleString('en-US'),
  x: (x) => `${x.toFixed(1)}`,
  'µs/req': (x) => `${x.toFixed(1)} µs/req`,
};

export function format(value, unit) {
  if (value === undefined || value === null) return '';
  if (Number.isNaN(value)) return 'n/a';
  return (UNITS[unit] ?? ((x) => `${x} ${unit}`))(value);
}

export function formatRatio(ratio) {
  if (ratio === undefined || ratio === null || Number.isNaN(ratio)) return '';
  return `${ratio < 0.1 ? ratio.toPrecision(2) : ratio.toFixed(2)}x`;
}

const OPS = {
  '<=': (a, b) => a <= b,
  '<': (a, b) => a < b,
  '>=': (a, b) => a >= b,
  '>': (a, b) => a > b,
  '=': (a, b) => a === b,
};

/**
 * A figure. `budget` is { on: 'ratio' | 'value', op, limit } (a limit on the value is in the value's unit);
 * without one the figure is for information. The ratio is value / baseline, or with `efficiency` (for costs, where
 * less is better) baseline / value: how efficient the subject is beside its baseline.
 */
export function figure({ name, value, unit, baseline, budget, note, stats, efficiency = false }) {
  const ratio = baseline === undefined || baseline === null ? undefined : efficiency ? baseline / value : value / baseline;
  let result = 'info';
  if (budget) {
    const measured = budget.on === 'ratio' ? ratio : value;
    result = measured !== undefined && !Number.isNaN(measured) && OPS[budget.op](measured, budget.limit) ? 'PASS' : 'FAIL';
  }
  return { name, value, unit, baseline, ratio, budget, result, note, stats };
}

export function describeBudget(budget, unit) {
  if (!budget) return '';
  const limit = budget.on === 'ratio' ? `${budget.limit}x` : format(budget.limit, unit);
  return `${budget.on} ${budget.op} ${limit}`;
}

/** A table in Markdown syntax, padded so it also reads as plain text. `align` holds 'l' or 'r' per column. */
export function table(headers, rows, align = []) {
  const cells = [headers, ...rows].map((row) => row.map((cell) => String(cell ?? '')));
  const widths = headers.map((_, i) => Math.max(3, ...cells.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => (align[i] === 'r' ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (align[i] === 'r' ? `${'-'.repeat(w + 1)}:` : `${'-'.repeat(w + 2)}`)).join('|')}|`;
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n');
}

/** Prints a section: its figures (figure | value | baseline | ratio | budget | result), then its detail tables and notes. */
export function renderSection(section) {
  const out = [`## ${section.title}`, ''];
  out.push(
    table(
      ['figure', 'value', 'baseline', 'ratio', 'budget', 'result'],
      section.figures.map((f) => [
        f.name,
        format(f.value, f.unit),
        f.baseline === undefined ? '' : format(f.baseline, f.unit),
        formatRatio(f.ratio),
        describeBudget(f.budget, f.unit),
        f.result,
      ]),
      ['l', 'r', 'r', 'r', 'l', 'l'],
    ),
  );
  for (const detail of section.details ?? []) {
    out.push('', `${detail.title}:`, '', table(detail.headers, detail.rows, detail.align));
  }
  for (const note of section.notes ?? []) out.push('', `- ${note}`);
  return `${out.join('\n')}\n`;
}

/** The samples of a timed command as a detail row: name | n | median | min | p90 | MAD (all ms). */
export function sampleRow(name, stats) {
  return [name, stats.n, stats.median.toFixed(1), stats.min.toFixed(1), stats.p90.toFixed(1), stats.mad.toFixed(1)];
}

export const SAMPLE_HEADERS = { headers: ['command', 'n', 'median ms', 'min ms', 'p90 ms', 'MAD ms'], align: ['l', 'r', 'r', 'r', 'r', 'r'] };

function gitCommit(cwd) {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bin', 'package.json'], { cwd, encoding: 'utf8' }).trim();
    return dirty ? `${head} (src changed)` : head;
  } catch {
    return 'unknown';
  }
}

export function machine(root) {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGB: Math.round(os.totalmem() / 1e9),
    node: process.version,
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    commit: gitCommit(root),
  };
}

export function renderHeader(info, options) {
  return [
    '# kb benchmark',
    '',
    `- machine: ${info.cpu}, ${info.cores} cores, ${info.memoryGB} GB RAM; ${info.kernel}`,
    `- node ${info.node}; kb at ${info.commit}; ${info.date}`,
    `- load average at start: ${info.loadavg} (1, 5, 15 min): a loaded machine slows the subject and its baseline alike, not their ratio`,
    `- engine ${options.engine}${options.replicas > 1 ? ` x ${options.replicas} replicas` : ''}; ${options.runs} runs per process figure (medians), wrk ${options.duration} s x ${options.rounds} round${options.rounds > 1 ? 's' : ''}, ${options.connections} connections${options.quick ? '; QUICK smoke run: figures are rough' : ''}`,
    '',
  ].join('\n');
}
