import { UsageError } from './errors.js';
import { escapeControls } from './text.js';

/**
 * `--jq EXPR`: jq's own language over a command's --json data, as gh has it (docs/contract.md, Commands). jq itself,
 * compiled to WebAssembly (the jq-wasm package), is loaded only when a command is given --jq: no other run pays for it.
 */
interface JqWasm {
  raw(data: string | object, filter: string, flags?: string[]): Promise<string>;
}

export interface Jq {
  expression: string;
  jq: JqWasm;
}

const HELP = 'It is a jq expression (https://jqlang.org/manual), e.g. --jq ".[].key".';

/** jq's own words: its first line (the rest quotes the expression back), without its "jq: error" prefix. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n').find((line) => line.trim() !== '') ?? 'jq failed';
  return first.replace(/^jq: error(?: \(at [^)]*\))?: /, '').replace(/:$/, '').trim();
}

function failure(expression: string, error: unknown, sample?: unknown): UsageError {
  return new UsageError(`Invalid --jq ${JSON.stringify(expression)}: ${reasonOf(error)}${onSample(sample)}`, HELP);
}

/** Where a value named in a failure came from, when it is the sample an expression is tried on (not the user's data). */
export function onSample(sample: unknown): string {
  return sample === undefined ? '' : ` (tried, before anything was sent, on a sample of what the command prints: ${JSON.stringify(sample)})`;
}

/**
 * Loads jq and checks the expression: one jq cannot compile is a usage error (exit 2) before anything is sent. With a
 * sample of the data the command answers (src/cli/query.ts, QUERY_SAMPLES: every field set), one that fails on it
 * (`.key+1`) fails now too, as --query's does: it would fail on the data after a write was sent and done.
 */
export async function loadJq(expression: string, sample?: unknown): Promise<Jq> {
  if (expression.trim() === '') throw failure(expression, new Error('the expression is empty'));
  const module = (await import('jq-wasm')) as unknown as JqWasm & { default?: JqWasm };
  const jq = typeof module.raw === 'function' ? module : (module.default as JqWasm);
  try {
    await jq.raw(sample === undefined ? 'null' : JSON.stringify(sample), expression, ['-r']);
  } catch (error) {
    // Run over null, an expression may fail that the data will not fail (`.[]`): only what jq cannot compile is refused.
    const compiled = !/compile error/.test(error instanceof Error ? error.message : '');
    if (sample !== undefined || !compiled) throw failure(expression, error, compiled ? sample : undefined);
  }
  return { expression, jq };
}

/** jq's output as `jq -r` prints it (gh's way): each result on a line, a string bare; on a terminal, controls escaped. */
export async function renderJq(query: Jq, data: unknown, terminal: boolean): Promise<string> {
  let output: string;
  try {
    output = await query.jq.raw(JSON.stringify(data), query.expression, ['-r']);
  } catch (error) {
    throw failure(query.expression, error);
  }
  if (output === '') return '';
  return `${terminal ? escapeControls(output, { keepLayout: true }) : output}\n`;
}
