// README.md's fenced blocks as a reader meets them, and the commands of its shell blocks one by one: what
// test/docs/readme.test.ts runs.

export interface Fence {
  /** The fence's language (`sh`, `text`, `yaml`...), '' when it has none. */
  lang: string;
  /** The 1-based line of the opening fence. */
  line: number;
  body: string[];
}

/** Every fenced block of a Markdown text, in order. */
export function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const close = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (close < 0) throw new Error(`the fence on line ${i + 1} is never closed`);
    found.push({ lang: open[1] as string, line: i + 1, body: lines.slice(i + 1, close) });
    i = close;
  }
  return found;
}

export const SHELL_LANGS = new Set(['sh', 'bash']);

export interface Step {
  /** The 1-based README line the command starts on. */
  line: number;
  /** The command as the README writes it, continuation lines included. */
  command: string;
  /** What the README shows as its output, in a `# → OUTPUT` comment (`...` stands for any text). */
  output?: string;
}

/** A line without its trailing `# comment` (one that starts after whitespace, as the shell reads it). */
function code(line: string): string {
  return line.replace(/(^|\s)#(\s.*)?$/, '').trimEnd();
}

/**
 * The commands of a shell block, one a step: a line ending in `&&`, `||`, `|` or `\` goes on to the next one;
 * blank and comment lines are no step. A block that starts with `#!` is a whole script: one step.
 */
export function steps(fence: Fence): Step[] {
  if (fence.body[0]?.startsWith('#!')) return [{ line: fence.line + 1, command: fence.body.join('\n') }];
  const found: Step[] = [];
  let pending: { line: number; lines: string[] } | undefined;
  fence.body.forEach((text, i) => {
    if (pending === undefined && code(text).trim() === '') return;
    pending ??= { line: fence.line + 1 + i, lines: [] };
    pending.lines.push(text);
    if (/(&&|\|\||\||\\)$/.test(code(text))) return;
    const output = /\s#\s→\s(.*)$/.exec(text)?.[1]?.trim();
    found.push({ line: pending.line, command: pending.lines.join('\n'), ...(output === undefined ? {} : { output }) });
    pending = undefined;
  });
  if (pending !== undefined) throw new Error(`the command on line ${pending.line} goes on past the end of its block`);
  return found;
}

/**
 * `kb serve` run in the foreground (not `kb serve backup` or `kb serve token`), as the last command of a step,
 * perhaps with variables of its own (`KB_DATA_DIR=... kb serve`).
 */
const SERVE = /(?:^|&&\s*)(?:[A-Za-z_]+=\S+\s+)*kb serve((?:\s+--[a-z-]+(?:\s+[^-\s][^\s]*)?)*)\s*$/;

export type Kind = 'install' | 'serve' | 'tui' | 'run';

/**
 * What a step is to a test: `install` reinstalls node_modules from the network (npm ci) or runs the suite itself
 * (npm test); `serve` starts a server that runs until stopped; `tui` needs a terminal; `run` runs and ends.
 */
export function kind(step: Step): Kind {
  const command = code(step.command.replace(/\\\n/g, ' ').replace(/\n/g, ' '));
  if (/^(?:[A-Za-z_]+=\S+\s+)*npm (?:ci|install|test)\b[^&|;]*$/.test(command)) return 'install';
  if (SERVE.test(command)) return 'serve';
  if (/^kb tui\b/.test(command)) return 'tui';
  return 'run';
}

/** The flags of a step's `kb serve`: `--port N`, `--data-dir DIR` and the others, by name. */
export function serveFlags(step: Step): Map<string, string> {
  const flags = new Map<string, string>();
  const text = SERVE.exec(code(step.command.replace(/\n/g, ' ')))?.[1] ?? '';
  for (const match of text.matchAll(/--([a-z-]+)(?:\s+([^-\s][^\s]*))?/g)) flags.set(match[1] as string, match[2] ?? '');
  return flags;
}

/** Whether a step's `kb serve` serves the default data dir (no `--data-dir`, `--database` or variable naming another). */
export function servesDefaultDataDir(step: Step): boolean {
  const flags = serveFlags(step);
  return !flags.has('data-dir') && !flags.has('database') && !/\bKB_(DATA_DIR|DATABASE_URL)=/.test(step.command);
}

/** `npm ci && rest` as `rest`: the install that a test does not repeat, the rest of the command as written. */
export function withoutInstall(command: string): string {
  return command.replace(/^npm ci\s*&&\s*/, '');
}

/** The ports a README's shell blocks name (`127.0.0.1:PORT`, `--port PORT`), and kb serve's default one. */
export function portsNamed(fenceList: Fence[], defaultPort: number): number[] {
  const ports = new Set<number>([defaultPort]);
  for (const fence of fenceList.filter((f) => SHELL_LANGS.has(f.lang))) {
    for (const match of fence.body.join('\n').matchAll(/(?:127\.0\.0\.1:|localhost:|--port\s+)(\d{2,5})\b/g)) ports.add(Number(match[1]));
  }
  return [...ports];
}

/** The text with every port of `map` replaced by its own (so `8080`, `local-8080` and `:8080` all move together). */
export function movePorts(text: string, map: ReadonlyMap<number, number>): string {
  return text.replace(/\b\d{2,5}\b/g, (digits) => String(map.get(Number(digits)) ?? digits));
}

/**
 * Whether `stdout` is what the README shows: the same text, trimmed, `...` standing for any run of characters. JSON
 * is shown on one line: stdout that is JSON is also compared in that form.
 */
export function shownOutput(shown: string, stdout: string): boolean {
  const pattern = shown
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  const forms = [stdout.trim()];
  try {
    forms.push(JSON.stringify(JSON.parse(stdout)));
  } catch {
    // Not JSON: the text as it is.
  }
  return forms.some((form) => new RegExp(`^${pattern}$`).test(form));
}
