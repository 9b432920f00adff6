import { EXIT_MEANINGS } from '../client/exit-codes.js';
import { displayWidth } from '../text/width.js';
import { closeTo } from './did-you-mean.js';

/**
 * Help text as paragraphs, wrapped to the terminal (docs/contract.md, Output: 80 columns when piped). The root help,
 * `kb help exit-codes` and `kb help environment` print the tables from here.
 */

/**
 * A description written over several lines, as paragraphs: a line break inside a paragraph becomes a space, so the
 * help can wrap it to any width. Blank lines, and lines that begin with a space or a list mark, keep their break.
 */
export function joinParagraphs(text: string): string {
  return text.replace(/[ \t]*\n(?![\n \t]|[*-] )/g, (match, offset: number) => (offset > 0 && text[offset - 1] !== '\n' ? ' ' : match));
}

/** Words of `text` in lines of at most `width` columns; a word wider than that is cut. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (displayWidth(word) > width) {
      if (line !== '') lines.push(line);
      lines.push(word.slice(0, width));
      word = word.slice(width);
      line = '';
    }
    if (line === '') line = word;
    else if (displayWidth(line) + 1 + displayWidth(word) <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * Two columns, each row's text wrapped under itself (a hanging indent): a label wider than the column goes on a line of
 * its own, its text on the next. `width` is the terminal's; rows are indented by two spaces, as oclif's sections.
 */
export function renderDefinitions(rows: readonly (readonly [string, string])[], width: number, maxLabel = 16): string {
  const labelWidth = Math.max(0, ...rows.map(([label]) => displayWidth(label)).filter((width) => width <= maxLabel));
  const indent = 2 + labelWidth + 2;
  const textWidth = Math.max(20, width - indent);
  const out: string[] = [];
  for (const [label, text] of rows) {
    const lines = wrapWords(text, textWidth);
    if (displayWidth(label) > labelWidth) {
      out.push(`  ${label}`);
      out.push(...lines.map((line) => `${' '.repeat(indent)}${line}`));
    } else {
      const [first = '', ...rest] = lines;
      out.push(`  ${label}${' '.repeat(labelWidth - displayWidth(label) + 2)}${first}`);
      out.push(...rest.map((line) => `${' '.repeat(indent)}${line}`));
    }
  }
  return out.join('\n');
}

/** The environment variables kb reads (src/config/env.ts reads them), as `kb --help` and `kb help environment` list them. */
export const ENVIRONMENT_VARIABLES: readonly (readonly [string, string])[] = [
  ['KB_PROFILE', 'The profile to use (--profile wins).'],
  ['KB_URL', "The deployment's URL, over the profile's."],
  ['KB_TOKEN', "The token, over the profile's. Prefer it to flags: argv is visible to other users."],
  ['KB_CA_CERT', "A CA file (PEM) trusted for the deployment's certificate, on top of the system's (--cacert wins, then this, then the profile's)."],
  ['NODE_EXTRA_CA_CERTS', "Node's own extra CAs (PEM): trusted as the system's are, a CA given as above too."],
  ['KB_TIMEOUT', 'Request timeout, e.g. 10s or 500ms (--timeout wins; default 30s).'],
  ['KB_MAX_RESPONSE', 'The largest reply read, e.g. 256MiB (default 64MiB); a larger one fails with exit 1.'],
  ['KB_CONFIG_DIR', 'Where profiles are kept (default: ~/.config/kb).'],
  ['KB_DATA_DIR', 'Where kb serve keeps its database (default: ~/.local/share/kb).'],
  ['KB_DATABASE_URL', 'PostgreSQL URL for kb serve and kb serve token, shared by replicas (default: SQLite in KB_DATA_DIR).'],
  ['KB_DEBUG=1', 'Trace each request to stderr, as --verbose does.'],
  ['NO_COLOR', 'No colors. None are used either when output is not a terminal, or CI is set.'],
  ['CI', 'Set (and not 0 or false): no colors, no spinners, no prompts; kb tui exits 2.'],
  ['OCLIF_COLUMNS', "The width help wraps to (default: the terminal's, 80 when piped)."],
  ['PATH', 'Hints name kb as your shell finds it: kb when the first kb on PATH is this one, else its path.'],
  ['VISUAL, EDITOR', 'The editor kb tui opens for a description (VISUAL first; default vi).'],
  ['HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY', 'Proxies for requests (either case), read as curl reads them: NO_PROXY takes names, domains, addresses, CIDR ranges and *.'],
];

/** The exit codes, from their one table (src/client/exit-codes.ts). */
export function exitCodesTable(width: number): string {
  return renderDefinitions(
    EXIT_MEANINGS.map(([code, meaning]) => [String(code), meaning]),
    width,
  );
}

export function environmentTable(width: number): string {
  return renderDefinitions(ENVIRONMENT_VARIABLES, width);
}

/**
 * oclif's own parse errors (an unknown flag, a missing argument, flags that exclude each other) in kb's words: the
 * reason alone, without "The following error occurred:", and oclif's "See more help with --help" made the command's
 * own line, as gh says it, with the command's flags closest to one it does not have (`--jsn`: --json).
 * Undefined for any other error.
 */
export function parseErrorWords(message: string, bin: string, command: string, flags: readonly string[] = []): { message: string; help: string } | undefined {
  const suffix = '\nSee more help with --help';
  if (!message.endsWith(suffix)) return undefined;
  // eslint-disable-next-line no-control-regex -- oclif dims the reasons on a terminal
  let text = message.slice(0, -suffix.length).replace(/\u001b\[[0-9;]*m/g, '');
  const reasons = /^The following errors? occurred:\n([\s\S]*)$/.exec(text);
  if (reasons) text = (reasons[1] ?? '').split('\n').map((line) => line.trim()).filter(Boolean).join('; ');
  let help = `See \`${bin} ${command} --help\`.`;
  // `--jsn`: the command's own flags closest to each unknown one.
  const unknown = /^Nonexistent flags?: (.*)$/.exec(text)?.[1]?.split(', ') ?? [];
  const close = [...new Set(unknown.flatMap((flag) => (flag.startsWith('--') ? closeTo(flag, flags) : [])))];
  if (close.length > 0) help = `Did you mean ${close.length === 1 ? close[0] : `${close.slice(0, -1).join(', ')} or ${close.at(-1)}`}? ${help}`;
  return { message: text, help };
}
