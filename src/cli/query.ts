import { UsageError } from './errors.js';
import { onSample } from './jq.js';
import { renderJson } from './output.js';
import { escapeControls } from './text.js';

/**
 * `--query EXPR`: JMESPath over a command's --json data, as aws and az have it (docs/contract.md, Commands). The
 * jmespath package is loaded only when a command is given --query, so no other run pays for it.
 */
interface Jmespath {
  compile(expression: string): unknown;
  search(data: unknown, expression: string): unknown;
}

export interface Query {
  expression: string;
  jmespath: Jmespath;
}

/**
 * The value of a flag in argv (before a `--`), if given: `--name VALUE` or `--name=VALUE`, and with a one-letter `short`,
 * `-o VALUE`, `-oVALUE` or `-o=VALUE`. Read before oclif parses, since it decides whether the command prints JSON.
 */
export function flagInArgv(argv: readonly string[], name: string, short?: string): string | undefined {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === `--${name}` || (short !== undefined && word === `-${short}`)) return words[i + 1] ?? '';
    if (word.startsWith(`--${name}=`)) return word.slice(name.length + 3);
    if (short !== undefined && word.startsWith(`-${short}`) && !word.startsWith('--')) return word.slice(2).replace(/^=/, '');
  }
  return undefined;
}

/** The expression of `--query EXPR` or `--query=EXPR` in argv (before a `--`), if any. */
export function queryInArgv(argv: readonly string[]): string | undefined {
  return flagInArgv(argv, 'query');
}

/**
 * What was wrong, in jmespath's words where it has them: its ParserError and LexerError, and the plain Errors it throws
 * while searching ("TypeError: length() expected argument 1 to be ...", "Unknown function: foo()"), the name of the
 * JavaScript error some of them start with left out. Anything else is the library tripping over the expression (`=`
 * makes it read a property of undefined): not words for a user.
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return 'not an expression kb can evaluate';
  if (error.name === 'ParserError' || error.name === 'LexerError') return error.message;
  if (error.name !== 'Error') return 'not an expression kb can evaluate';
  if (error.message === 'TypeError') return 'a function was given a value of the wrong type';
  // sort_by, max_by and min_by name the types by jmespath's own numbers.
  const numbered = /^TypeError: expected (\d+), received (\d+)$/.exec(error.message);
  if (numbered) return `expected ${typeName(numbered[1])} but received ${typeName(numbered[2])}`;
  return error.message.replace(/^(?:TypeError|ArgumentError|RuntimeError): /, '');
}

/** jmespath's numbers for its types (TYPE_NUMBER and the others in jmespath.js), as its other messages name them. */
const TYPE_NAMES = ['number', 'any', 'string', 'array', 'object', 'boolean', 'expression', 'null', 'array of numbers', 'array of strings'];

function typeName(number: string | undefined): string {
  return TYPE_NAMES[Number(number)] ?? 'another type';
}

function failure(expression: string, error: unknown, sample?: unknown): UsageError {
  const reason = reasonOf(error);
  return new UsageError(`Invalid --query ${JSON.stringify(expression)}: ${sample === undefined ? reason : reason.replace(/\.$/, '')}${onSample(sample)}`, 'It is a JMESPath expression (https://jmespath.org), e.g. --query "[].key".');
}

/**
 * Loads jmespath and checks the expression: a bad one is a usage error (exit 2) before anything is sent. With a sample
 * of the data the command answers (every field set), an expression that fails on it (a function given the wrong type,
 * an unknown function) fails now too: it would fail on the data, after the request was sent.
 */
export async function loadQuery(expression: string, sample?: unknown): Promise<Query> {
  const module = (await import('jmespath')) as unknown as Jmespath & { default?: Jmespath };
  const jmespath = typeof module.compile === 'function' ? module : (module.default as Jmespath);
  if (expression.trim() === '') throw failure(expression, new Error('the expression is empty'));
  try {
    jmespath.compile(expression);
  } catch (error) {
    throw failure(expression, error);
  }
  try {
    if (sample !== undefined) jmespath.search(sample, expression);
  } catch (error) {
    throw failure(expression, error, sample);
  }
  return { expression, jmespath };
}

/** Data of the shapes commands answer, every field set: what loadQuery tries an expression on before anything is sent. */
const NAMESPACE_SAMPLE = { key: 'docs', description: 'Product docs' };
const BASE_SAMPLE = { namespace: 'docs', key: 'faq', description: 'Questions' };
export const QUERY_SAMPLES = {
  namespace: NAMESPACE_SAMPLE,
  namespaces: [NAMESPACE_SAMPLE, { key: 'guides', description: 'Guides' }],
  base: BASE_SAMPLE,
  bases: [BASE_SAMPLE, { namespace: 'docs', key: 'intro', description: 'Introduction' }],
} as const;

/** A string on a line of its own: as it is when piped, its control characters escaped on a terminal. */
function bare(text: string, terminal: boolean): string {
  return `${terminal ? escapeControls(text) : text}\n`;
}

/**
 * The query's result as aws prints it: a string bare, a list of strings one per line (none for an empty list), anything else as JSON (on a
 * terminal with its control characters escaped, as --json).
 */
export function renderQuery(query: Query, data: unknown, terminal: boolean): string {
  let result: unknown;
  try {
    result = query.jmespath.search(data, query.expression);
  } catch (error) {
    throw failure(query.expression, error);
  }
  // jmespath leaves some results undefined (max_by of an empty list) where JMESPath says null.
  if (result === undefined) return renderJson(null, terminal);
  if (typeof result === 'string') return bare(result, terminal);
  // An empty list too (a list of no strings): nothing, which a shell loop reads as no lines.
  if (Array.isArray(result) && result.every((item) => typeof item === 'string')) {
    return result.map((item: string) => bare(item, terminal)).join('');
  }
  return renderJson(result, terminal);
}
