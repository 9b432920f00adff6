import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Oclif from '@oclif/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/** The CLI's own copy of oclif, bundled into dist/ with the commands: its error classes are the ones they throw. */
const { Config, Errors, run } = (await import(pathToFileURL(join(ROOT, 'dist/cli/run.js')).href)) as typeof Oclif;

const RUNS = Number(process.env.KB_FUZZ_RUNS ?? 150);
/**
 * Commands that would start a server, read stdin (which never ends inside a test worker), take over the terminal
 * or write outside the temp dirs.
 */
const EXCLUDED = new Set(['serve', 'auth:login', 'autocomplete', 'tui', 'export', 'import', 'apply', 'api']);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process, as bin/run.js does, capturing its output and exit code. */
async function kb(argv: string[]): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  process.exitCode = undefined;
  let code: number;
  try {
    await run(argv, ROOT);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof Errors.ExitError) code = error.oclif.exit ?? 0;
    else if (error instanceof Errors.CLIError) {
      // What bin/run.js's handler prints for oclif's own errors: the message, exit by its code.
      stderr += error.message;
      code = error.oclif.exit ?? 1;
    } else {
      stderr += `ESCAPED: ${(error as Error).stack ?? String(error)}`;
      code = 99;
    }
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = undefined;
  }
  return { code, stdout, stderr };
}

describe('the CLI\'s argument parsing, fuzzed', () => {
  let server: TestServer;
  let commands: Array<{ id: string; flags: string[]; args: number }>;
  const saved = { ...process.env };
  const cwd = process.cwd();

  beforeAll(async () => {
    server = await startTestServer();
    // Generated arguments name files and directories (kb serve backup DEST, -o FILE): relative ones land here.
    process.chdir(tempDir('kb-fuzz-cwd-'));
    Object.assign(process.env, {
      KB_URL: server.url,
      KB_TOKEN: server.token,
      KB_CONFIG_DIR: tempDir('kb-fuzz-config-'),
      KB_DATA_DIR: tempDir('kb-fuzz-data-'),
      CI: 'true',
    });
    const config = await Config.load(ROOT);
    commands = config.commands
      .filter((command) => !EXCLUDED.has(command.id.split(':')[0] === 'autocomplete' ? 'autocomplete' : command.id))
      .map((command) => ({
        id: command.id,
        flags: Object.values(command.flags).filter((flag) => flag.name !== 'output' && flag.name !== 'data-dir').map((flag) => flag.name),
        args: Object.keys(command.args).length,
      }));
  });
  afterAll(async () => {
    process.chdir(cwd);
    process.env = saved;
    await server.close();
  });

  it(`never lets an exception or a stack trace reach the user, and exits 0 to 6 (${RUNS} argvs)`, async () => {
    const word = fc.oneof(
      fc.constantFrom('docs', 'faq', '__proto__', 'constructor', '', ' ', '-', '--', '-x', '--json', '--yes', '--no-json', 'a'.repeat(64), 'ns_00000000', '10s', '0', '-1', 'NaN', '%s', '${HOME}', '\u0000', '😀'.repeat(3)),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
    );
    const argv = fc.integer({ min: 0, max: 1000 }).chain((pick) => {
      const command = commands[pick % commands.length] as (typeof commands)[number];
      const named = fc
        .constantFrom(...command.flags, 'json')
        .chain((name) => fc.oneof(fc.constant([`--${name}`]), word.map((value) => [`--${name}`, value]), word.map((value) => [`--${name}=${value}`])));
      const flag = fc.oneof(named, word.map((value) => [value]));
      return fc
        .tuple(fc.array(word, { maxLength: command.args + 1 }), fc.array(flag, { maxLength: 4 }))
        .map(([args, flags]) => [...command.id.split(':'), ...args, ...flags.flat()]);
    });
    const arbitrary = fc.oneof({ arbitrary: argv, weight: 9 }, { arbitrary: fc.array(word, { maxLength: 4 }), weight: 1 });

    await fc.assert(
      fc.asyncProperty(arbitrary, async (args) => {
        const outcome = await kb(args);
        const context = `kb ${JSON.stringify(args)} -> ${outcome.code}\n${outcome.stderr}`;
        expect(outcome.code, context).toBeGreaterThanOrEqual(0);
        expect(outcome.code, context).toBeLessThanOrEqual(6);
        expect(outcome.stderr, context).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
        expect(outcome.stderr, context).not.toMatch(/ESCAPED|TypeError|ReferenceError|Cannot read properties/);
        // `kb auth token` is the one command that prints the token, on stdout.
        if (!(args[0] === 'auth' && args[1] === 'token')) expect(outcome.stdout, context).not.toContain(server.token);
        expect(outcome.stderr, context).not.toContain(server.token);
      }),
      { numRuns: RUNS },
    );
  }, 60_000 + RUNS * 200);
});
