import { UsageError } from './errors.js';
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

/** The expression of `--query EXPR` or `--query=EXPR` in argv (before a `--`), if any. */
export function queryInArgv(argv: readonly string[]): string | undefined {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === '--query') return words[i + 1] ?? '';
    if (word.startsWith('--query=')) return word.slice('--query='.length);
  }
  return undefined;
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
  return error.message.replace(/^(?:TypeError|ArgumentError|RuntimeError): /, '');
}

function failure(expression: string, error: unknown): UsageError {
  const reason = reasonOf(error);
  return new UsageError(`Invalid --query ${JSON.stringify(expression)}: ${reason}`, 'It is a JMESPath expression (https://jmespath.org), e.g. --query "[].key".');
}

/** Loads jmespath and checks the expression: a bad one is a usage error (exit 2) before anything is sent. */
export async function loadQuery(expression: string): Promise<Query> {
  const module = (await import('jmespath')) as unknown as Jmespath & { default?: Jmespath };
  const jmespath = typeof module.compile === 'function' ? module : (module.default as Jmespath);
  if (expression.trim() === '') throw failure(expression, new Error('the expression is empty'));
  try {
    jmespath.compile(expression);
  } catch (error) {
    throw failure(expression, error);
  }
  return { expression, jmespath };
}

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
  if (typeof result === 'string') return bare(result, terminal);
  // An empty list too (a list of no strings): nothing, which a shell loop reads as no lines.
  if (Array.isArray(result) && result.every((item) => typeof item === 'string')) {
    return result.map((item: string) => bare(item, terminal)).join('');
  }
  return renderJson(result, terminal);
}
