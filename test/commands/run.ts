import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Config, Errors } from '@oclif/core';
import type { KbCommand } from '../../src/cli/base-command.js';
import { Context } from '../../src/cli/context.js';
import { ROOT } from '../helpers/cli.js';
import { memoryIO, type MemoryIO, type MemoryIOOptions } from '../helpers/io.js';
import { tempDir } from '../helpers/temp.js';

export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The prompts the command showed, in order. */
  asked: string[];
}

let config: Config | undefined;

type CommandClass = new (argv: string[], config: Config, context: Context) => KbCommand;

/** The command a kb argv names (its longest leading words that are a file of src/commands), and the rest of it. */
async function commandFor(argv: readonly string[]): Promise<{ command: CommandClass; rest: string[] }> {
  for (let words = Math.min(argv.length, 3); words > 0; words--) {
    const path = join(ROOT, 'src/commands', ...argv.slice(0, words));
    const file = existsSync(`${path}.ts`) ? `${path}.ts` : existsSync(join(path, 'index.ts')) ? join(path, 'index.ts') : undefined;
    if (file !== undefined) return { command: ((await import(file)) as { default: CommandClass }).default, rest: argv.slice(words) };
  }
  throw new Error(`no command in ${JSON.stringify(argv)}`);
}

/** An environment of one's own: an empty config dir and data dir, and nothing else unless given. */
export function freshEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { KB_CONFIG_DIR: tempDir('kb-cmd-config-'), KB_DATA_DIR: tempDir('kb-cmd-data-'), ...extra };
}

/**
 * Runs a kb command in this process, as oclif would run it (its `_run`: init, run, catch, finally, --json), with a
 * context of the test's own: `env` as the only environment variables, and an in-memory IO (no terminal unless
 * `tty`, stdin and prompt answers scripted). The exit code is what the command left in process.exitCode, or the one
 * an oclif ExitError carried; process.exitCode is reset after.
 */
export async function kb(argv: readonly string[], options: { env: Record<string, string> } & MemoryIOOptions): Promise<CommandRun> {
  config ??= await Config.load(ROOT);
  const { command, rest } = await commandFor(argv);
  const io: MemoryIO = memoryIO(options);
  const context = new Context({ variables: options.env, io });
  process.exitCode = undefined;
  let code: number;
  try {
    // `_run` is what oclif's Command.run calls once it has made the command: init, run, catch, finally, --json.
    await (new command(rest, config, context) as unknown as { _run(): Promise<unknown> })._run();
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!(error instanceof Errors.ExitError)) throw error;
    code = error.oclif.exit ?? 1;
  } finally {
    process.exitCode = undefined;
  }
  return { code, stdout: io.out, stderr: io.err, asked: io.asked };
}
