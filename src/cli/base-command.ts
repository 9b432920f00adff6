import { Command, type Config, Errors, Flags } from '@oclif/core';
import { KbApiError } from '../api/errors.js';
import { ApiError, exitCodeFor, ResponseFormatError } from '../client/errors.js';
import { looksLikeToken, maskTokensIn, TOKEN_IN_ARGV_HELP } from './auth.js';
import { Context } from './context.js';
import { paint, type IO } from './io.js';
import { renderJson, renderYaml } from './output.js';
import { parseErrorWords } from './help-text.js';
import { handleInterrupts, InterruptedError } from './interrupt.js';
import { type Jq, loadJq, renderJq } from './jq.js';
import { flagInArgv, loadQuery, type Query, queryInArgv, renderQuery } from './query.js';
import { escapeControls } from './text.js';

/** oclif marks its own parse failures (unknown flag, missing argument) with exit 2 in `oclif.exit`. */
function oclifExit(error: unknown): number | undefined {
  const meta = (error as { oclif?: { exit?: unknown } } | undefined)?.oclif;
  return typeof meta?.exit === 'number' ? meta.exit : undefined;
}

/**
 * What every command that takes --json takes (KbCommand.baseFlags): --json itself, said in kb's words (oclif's own
 * flag, which this one replaces, says "Format output as json."), and --query beside it.
 */
export const queryFlags = {
  json: Flags.boolean({ summary: 'Print the data as JSON: one document, nothing else.', helpGroup: 'GLOBAL' }),
  query: Flags.string({
    summary: 'A JMESPath expression over the JSON data ("[].key" on a list, "key" on one object): prints its result (implies --json).',
    helpGroup: 'GLOBAL',
    exclusive: ['jq'],
  }),
  jq: Flags.string({
    summary: 'A jq expression over the JSON data, in jq\'s own language (".[].key"), as gh\'s --jq: prints its results, strings bare (implies --json).',
    helpGroup: 'GLOBAL',
    exclusive: ['query'],
  }),
  output: Flags.string({
    char: 'o',
    summary: 'Output format, as kubectl\'s -o: json (as --json), yaml (the same data as YAML), or wide (the table with every column, nothing cut).',
    options: ['json', 'yaml', 'wide'],
    helpGroup: 'GLOBAL',
  }),
};

/** The output the flags of argv ask for, read before oclif parses (they decide jsonEnabled()). */
interface OutputChoice {
  query?: string | undefined;
  jq?: string | undefined;
  output?: string | undefined;
}

function outputIn(argv: readonly string[]): OutputChoice {
  return { query: queryInArgv(argv), jq: flagInArgv(argv, 'jq'), output: flagInArgv(argv, 'output', 'o') };
}

/**
 * What every kb command shares: one context (environment, IO, profiles, clients: src/cli/context.ts), --json
 * printing exactly the data, Ctrl-C ending it with exit 130, and errors turned into one line on stderr (then the
 * server's help, if any) with the exit code of docs/contract.md, Exit codes.
 */
export abstract class KbCommand extends Command {
  /** Made once for the invocation; oclif passes none, so it is this process's, and tests pass their own. */
  protected readonly context: Context;
  protected readonly io: IO;

  constructor(argv: string[], config: Config, context?: Context) {
    super(argv, config);
    this.context = context ?? new Context();
    this.io = this.context.io;
  }

  /**
   * --query's expression, checked and ready, when one was given to a command that takes --json. A command's static
   * `querySample` (src/cli/query.ts, QUERY_SAMPLES: data of its shape, every field set) is tried first (by --jq's too), so that an
   * expression that cannot work on such data fails before anything is sent. (Not declared on this class: declared here,
   * the manifest lost the baseFlags of the commands that extend KbCommand itself.)
   */
  private query: Query | undefined;
  /** --jq's, likewise. */
  private jq: Jq | undefined;
  /** Output still being written when run() has returned (--jq and -o yaml load what writes it): awaited by _run. */
  private writing: Promise<void> | undefined;

  /** What -o, --query and --jq ask for: nothing for a command without --json. */
  private outputChoice(): OutputChoice {
    return this.ctor.enableJsonFlag === true ? outputIn(this.argv) : {};
  }

  /** Ctrl-C while a request, a prompt, stdin or the config lock is awaited: exit 130 (kb serve shuts down itself). */
  override async init(): Promise<void> {
    handleInterrupts();
    await super.init();
    const { query, jq } = this.outputChoice();
    // A bad expression exits 2 before anything is sent or changed: one that fails on data of the command's shape too.
    const { querySample } = this.ctor as { querySample?: unknown };
    if (query !== undefined && jq === undefined) this.query = await loadQuery(query, querySample);
    if (jq !== undefined && query === undefined) this.jq = await loadJq(jq, querySample);
  }

  /** --query, --jq and -o json or yaml imply --json: the data, not the table, is what they print. */
  override jsonEnabled(): boolean {
    if (super.jsonEnabled()) return true;
    const { query, jq, output } = this.outputChoice();
    return query !== undefined || jq !== undefined || output === 'json' || output === 'yaml';
  }

  /** -o wide: tables show every column, and nothing is cut to the terminal's width. */
  protected wide(): boolean {
    return this.outputChoice().output === 'wide';
  }

  protected override async _run<T>(): Promise<T> {
    const result = await super._run<T>();
    await this.writing;
    return result;
  }

  override async finally(error: Error | undefined): Promise<void> {
    await this.context.close();
    await super.finally(error);
  }

  override logJson(json: unknown): void {
    const terminal = this.io.isStdoutTTY;
    const { jq } = this;
    if (jq !== undefined) {
      // jq runs asynchronously (WebAssembly); _run waits for it. A failure on the data exits 2, as --query's.
      this.writing = renderJq(jq, json, terminal).then((text) => this.io.stdout(text), (error: Error) => this.catch(error));
      return;
    }
    if (this.query === undefined && this.outputChoice().output === 'yaml' && !super.jsonEnabled()) {
      this.writing = renderYaml(json, terminal).then((text) => this.io.stdout(text));
      return;
    }
    if (this.query === undefined) {
      this.io.stdout(renderJson(json, terminal));
      return;
    }
    try {
      this.io.stdout(renderQuery(this.query, json, terminal));
    } catch (error) {
      // A function given the wrong type of value fails only now, on the data: exit 2 all the same.
      void this.catch(error as Error);
    }
  }

  protected verbose(): boolean {
    return this.context.env.debug || this.argv.includes('--verbose');
  }

  override async catch(error: Error & { help?: string | null }): Promise<void> {
    if (error instanceof Errors.ExitError) throw error;
    if (error instanceof InterruptedError) {
      // Ctrl-C at a prompt in raw mode: the user knows why it stopped.
      this.io.stderr('\n');
      process.exitCode = error.exitCode;
      return;
    }
    const code = oclifExit(error) ?? exitCodeFor(error);
    // Messages and help may be a server's words: control characters are shown, never sent to the terminal. Ours
    // (and oclif's) may span lines; a server's are one line each.
    const fromServer = (error instanceof ApiError && !error.local) || error instanceof ResponseFormatError;
    // A token typed into argv by mistake is not printed back (src/cli/auth.ts).
    // oclif's parse errors in kb's words (src/cli/help-text.ts).
    const flags = Object.keys({ ...this.ctor.baseFlags, ...this.ctor.flags }).map((name) => `--${name}`);
    const parse = error instanceof Errors.CLIError ? parseErrorWords(error.message, this.config.bin, this.id?.replaceAll(':', ' ') ?? '', flags) : undefined;
    const raw = parse?.message ?? (error.message || String(error));
    const message = escapeControls(maskTokensIn(raw), { keepLayout: !fromServer });
    const help = !fromServer && looksLikeToken(raw) ? TOKEN_IN_ARGV_HELP : (parse?.help ?? error.help);
    this.io.stderr(`${paint(this.io, 'red', 'Error:')} ${message}\n`);
    if (typeof help === 'string' && help !== '') this.io.stderr(`${escapeControls(maskTokensIn(help), { keepLayout: !fromServer })}\n`);
    // The server cannot know where the client found the token it refused: the CLI says so (gh names GH_TOKEN).
    const source = error instanceof ApiError && error.status === 401 && !error.local ? this.context.refusedTokenHelp() : undefined;
    if (source !== undefined) this.io.stderr(`${escapeControls(source, { keepLayout: true })}\n`);
    // The id under which the server logged the request, so that a report can be matched to its line.
    const requestId: unknown = (error as { requestId?: unknown }).requestId;
    if (this.verbose() && typeof requestId === 'string' && requestId !== '') this.io.stderr(`Request ID: ${escapeControls(requestId)}\n`);
    // A stack helps only with the unexpected: errors that carry their own exit code are explained already.
    const explained =
      error instanceof KbApiError || typeof (error as { exitCode?: unknown }).exitCode === 'number' || oclifExit(error) !== undefined;
    if (!explained && this.verbose() && error.stack) this.io.stderr(`${error.stack}\n`);
    process.exitCode = code;
  }
}

// --query beside --json, on every command that takes --json: a getter, since oclif reads baseFlags from the class of
// the command (and its manifest) and only those with enableJsonFlag take it.
Object.defineProperty(KbCommand, 'baseFlags', {
  configurable: true,
  get(this: { enableJsonFlag?: boolean }) {
    return this.enableJsonFlag === true ? queryFlags : {};
  },
});
