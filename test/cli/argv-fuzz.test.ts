import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Readable } from 'node:stream';
import { format } from 'node:util';
import type * as Oclif from '@oclif/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runKb } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * The CLI's own copy of oclif, bundled into dist/ with the commands: `execute` is what bin/run.js calls, and its
 * error handler (oclif's `handle`) is the one users get.
 */
const { Config, execute } = (await import(pathToFileURL(join(ROOT, 'dist/cli/run.js')).href)) as typeof Oclif;

const RUNS = Number(process.env.KB_FUZZ_RUNS ?? 150);
/**
 * Commands fuzzed as processes of the built CLI, a run for every 50 of the others: `kb serve` and the STREAMING ones
 * run until they are stopped, and the autocomplete plugin's commands are classes oclif can load only once a process.
 */
const PROCESS_RUNS = Math.max(10, Math.ceil(RUNS / 50));
/** Flags naming a path: fuzzed, they could point anywhere on the machine; the environment gives temp dirs instead. */
const PATH_FLAGS = new Set(['output', 'data-dir']);
/**
 * Commands that run until stopped or until their condition holds (kb watch follows the changes; kb wait waits up to
 * 30 s): fuzzed as processes, each stopped after a few seconds. In process, one valid argv hung the property.
 */
const STREAMING = new Set(['watch', 'wait:ns', 'wait:base']);
/** The lists' --watch (-w) streams as kb watch does: the in-process fuzz leaves it out (the processes do not need it). */
const STREAM_FLAGS = new Set(['watch']);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process exactly as bin/run.js does (oclif's execute, with its error handler), capturing its
 * output and exit code. process.exit, which the handler calls, is recorded instead of ending the worker; stdin is
 * an empty stream that has ended, as `< /dev/null` gives.
 */
async function kb(argv: string[]): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  let exited: number | undefined;
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const exit = process.exit.bind(process);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  // oclif's handler writes through console.error, which the test runner would otherwise take for itself.
  const consoleError = console.error;
  const consoleLog = console.log;
  console.error = (...parts: unknown[]) => void (stderr += `${format(...parts)}\n`);
  console.log = (...parts: unknown[]) => void (stdout += `${format(...parts)}\n`);
  process.exit = ((code?: number) => {
    exited ??= code ?? 0;
  }) as typeof process.exit;
  const stdin = Object.getOwnPropertyDescriptor(process, 'stdin') as PropertyDescriptor;
  Object.defineProperty(process, 'stdin', { value: Readable.from([]), configurable: true, writable: true });
  process.exitCode = undefined;
  let code: number;
  try {
    await execute({ args: argv, dir: pathToFileURL(join(ROOT, 'bin/run.js')).href });
    code = exited ?? Number(process.exitCode ?? 0);
  } catch (error) {
    stderr += `ESCAPED: ${(error as Error).stack ?? String(error)}`;
    code = 99;
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exit = exit;
    console.error = consoleError;
    console.log = consoleLog;
    Object.defineProperty(process, 'stdin', stdin);
    process.exitCode = undefined;
  }
  return { code, stdout, stderr };
}

describe('the CLI\'s argument parsing, fuzzed', () => {
  let server: TestServer;
  let commands: Array<{ id: string; flags: string[]; args: number }>;
  let outOfProcess: Array<{ id: string; flags: string[]; args: number }>;
  const saved = { ...process.env };
  const cwd = process.cwd();

  beforeAll(async () => {
    server = await startTestServer();
    const home = tempDir('kb-fuzz-home-');
    Object.assign(process.env, {
      KB_URL: server.url,
      KB_TOKEN: server.token,
      KB_CONFIG_DIR: tempDir('kb-fuzz-config-'),
      KB_DATA_DIR: tempDir('kb-fuzz-data-'),
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      CI: 'true',
    });
    // Relative paths in fuzzed arguments (kb export -o, kb serve backup DEST, files to apply) land in a temp dir.
    process.chdir(tempDir('kb-fuzz-cwd-'));
    const config = await Config.load(ROOT);
    const all = config.commands.map((command) => ({
      id: command.id,
      inProcess: command.id !== 'serve' && !STREAMING.has(command.id) && command.pluginName === config.name,
      flags: Object.values(command.flags).filter((flag) => !PATH_FLAGS.has(flag.name) && !STREAM_FLAGS.has(flag.name)).map((flag) => flag.name),
      args: Object.keys(command.args).length,
    }));
    commands = all.filter((command) => command.inProcess);
    outOfProcess = all.filter((command) => !command.inProcess);
  });
  afterAll(async () => {
    process.chdir(cwd);
    // In place: the test files after this one in the worker share this process, and env-paths keeps the process.env
    // object it saw when it loaded (a new object here would leave it reading this file's HOME and XDG dirs).
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await server.close();
  });

  const word = fc.oneof(
    fc.constantFrom('docs', 'faq', '__proto__', 'constructor', '', ' ', '-', '--', '-x', '--json', '--yes', '--no-json', 'a'.repeat(64), 'ns_00000000', '10s', '0', '-1', 'NaN', '%s', '${HOME}', '\u0000', '😀'.repeat(3)),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
  );

  /** The words after a command's id: up to one more argument than it takes, and a few flags, its own or not. */
  function argsFor(flags: readonly string[], args: number): fc.Arbitrary<string[]> {
    const named = fc
      .constantFrom(...flags, 'json')
      .chain((name) => fc.oneof(fc.constant([`--${name}`]), word.map((value) => [`--${name}`, value]), word.map((value) => [`--${name}=${value}`])));
    const flag = fc.oneof(named, word.map((value) => [value]));
    return fc.tuple(fc.array(word, { maxLength: args + 1 }), fc.array(flag, { maxLength: 4 })).map(([words, chosen]) => [...words, ...chosen.flat()]);
  }

  function expectHandled(outcome: { code: number | null; stderr: string }, context: string): void {
    expect(outcome.stderr, context).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(outcome.stderr, context).not.toMatch(/ESCAPED|TypeError|ReferenceError|Cannot read properties/);
  }

  it(`never lets an exception or a stack trace reach the user, and exits 0 to 6 (${RUNS} argvs over every command of kb's own but serve, watch and wait)`, async () => {
    const argv = fc.integer({ min: 0, max: 1000 }).chain((pick) => {
      const command = commands[pick % commands.length] as (typeof commands)[number];
      return argsFor(command.flags, command.args).map((rest) => [...command.id.split(':'), ...rest]);
    });
    const arbitrary = fc.oneof({ arbitrary: argv, weight: 9 }, { arbitrary: fc.array(word, { maxLength: 4 }), weight: 1 });

    await fc.assert(
      fc.asyncProperty(arbitrary, async (args) => {
        const outcome = await kb(args);
        const context = `kb ${JSON.stringify(args)} -> ${outcome.code}\n${outcome.stderr}`;
        expect(outcome.code, context).toBeGreaterThanOrEqual(0);
        expect(outcome.code, context).toBeLessThanOrEqual(6);
        expectHandled(outcome, context);
        // `kb auth token` is the one command that prints the token, on stdout.
        if (!(args[0] === 'auth' && args[1] === 'token')) expect(outcome.stdout, context).not.toContain(server.token);
        expect(outcome.stderr, context).not.toContain(server.token);
      }),
      { numRuns: RUNS },
    );
  }, 60_000 + RUNS * 200);

  it(`kb serve, kb watch, kb wait and the autocomplete plugin, as processes of the built CLI: exit 0 to 6 (7 for wait) without a stack trace, or still running (${PROCESS_RUNS} argvs)`, async () => {
    expect(outOfProcess.map((command) => command.id)).toEqual(expect.arrayContaining(['serve', ...STREAMING]));
    const argv = fc.integer({ min: 0, max: 1000 }).chain((pick) => {
      const command = outOfProcess[pick % outOfProcess.length] as (typeof outOfProcess)[number];
      return argsFor(command.flags, command.args).map((rest) => [...command.id.split(':'), ...rest]);
    });
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        // A process's arguments cannot hold a NUL byte.
        fc.pre(!args.some((arg) => arg.includes('\u0000')));
        const env = { ...process.env, KB_DATA_DIR: tempDir('kb-fuzz-serve-'), KB_CONFIG_DIR: tempDir('kb-fuzz-serve-config-') };
        // A server that starts keeps running: it is stopped after a few seconds, which is a pass once it listens.
        const outcome = await runKb(args, { env, cwd: process.cwd(), timeoutMs: 5000 });
        const context = `kb ${JSON.stringify(args)} -> ${outcome.code ?? outcome.signal}\n${outcome.stderr}`;
        const streaming = STREAMING.has(args.slice(0, 2).join(':')) || args[0] === 'watch';
        // Stopped while it ran: kb serve once it listens, kb watch or kb wait while they follow the changes.
        if (outcome.code === null) {
          if (!streaming) expect(outcome.stderr, context).toMatch(/listening on/);
        } else {
          expect(outcome.code, context).toBeGreaterThanOrEqual(0);
          // 7: kb wait's condition did not hold by its --timeout.
          expect(outcome.code, context).toBeLessThanOrEqual(streaming ? 7 : 6);
        }
        expectHandled(outcome, context);
      }),
      { numRuns: PROCESS_RUNS },
    );
  }, 60_000 + PROCESS_RUNS * 8000);
});
