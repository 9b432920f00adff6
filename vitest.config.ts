import { availableParallelism } from 'node:os';
import { defineConfig, type Plugin } from 'vitest/config';
import { inkUnknownKeyName } from './scripts/ink-input.mjs';

/**
 * The in-process TUI tests (test/tui) run Ink as the build bundles it: with the fix of scripts/ink-input.mjs. Ink is
 * transformed by vitest for that (server.deps.inline), and ink-testing-library with it, so that both use that one Ink.
 */
const inkAsBundled: Plugin = {
  name: 'ink-as-bundled',
  transform: (code, id) => inkUnknownKeyName(id.split('?')[0] ?? id, code),
};
const inlineInk = { server: { deps: { inline: [/[\\/]node_modules[\\/]ink[\\/]/, /[\\/]node_modules[\\/]ink-testing-library[\\/]/] } } };

/** Engine-neutral suites, run once per engine: the server (in process and as a process), the store contract, kill -9 cycles. */
const BOTH_ENGINES = ['test/server/**/*.test.ts', 'test/store/contract.test.ts', 'test/e2e/serve.test.ts', 'test/e2e/crash.test.ts', 'test/e2e/admin.test.ts', 'test/e2e/tokens.test.ts', 'test/e2e/watch.test.ts', 'test/e2e/cli-live.test.ts'];

/** The PostgreSQL engine's own tests: its schema and connections, replicas behind one URL, docs/scaling.md's session. */
const POSTGRES_ONLY = ['test/store/postgres.test.ts', 'test/e2e/replicas.test.ts', 'test/e2e/replicas-log.test.ts', 'test/e2e/postgres.test.ts', 'test/e2e/postgres-faults.test.ts', 'test/e2e/postgres-stalls.test.ts', 'test/server/postgres-load.test.ts', 'test/e2e/watch-replicas.test.ts'];

/**
 * The in-process tests that change their own process (process.env, stdin and stdout, process.exit, the working
 * directory, Ink's reading of CI as it loads, a mocked component of the TUI), each file in a process of its own.
 */
const ISOLATED = ['test/tui/**/*.test.ts', 'test/cli/**/*.test.ts', 'test/config/**/*.test.ts', 'test/commands/**/*.test.ts'];

/**
 * Every other file runs in a worker that ran files before it, with the modules they loaded (the test helpers, src/):
 * a process of its own for each file cost about a second of CPU a file, on a suite bound by CPU. Their state is in the
 * processes, servers, temp dirs and databases they make. One that changes its own process belongs in ISOLATED: in a
 * shared one, what it left behind fails a later file (argv-fuzz.test.ts's HOME failed paths.test.ts that way).
 */
const shared = { isolate: false };

/**
 * Guards against a test that hangs, not budgets for its speed (the bench measures speed): two files run at a time,
 * beside CI's Node 22 and 24 runs, and a test that takes 10 s on a quiet machine took 30 on a loaded one.
 */
const timeouts = { testTimeout: 120_000, hookTimeout: 120_000 };
/**
 * A test that makes no assertion fails: it could not have failed otherwise. expect.poll waits as long as a test may
 * (its default, 1 s, is shorter than a kb serve's first start on a loaded machine: it failed CI on Node 24).
 */
const strict = { expect: { requireAssertions: true, poll: { timeout: 20_000 } } };

export default defineConfig({
  test: {
    ...timeouts,
    // Vitest runs one file at a time on two cores (its default is one fewer worker than cores), where most of a file's
    // time is spent waiting on the processes it started: two at a time took the suite from 25 to 15 minutes there, and
    // with two the cores still sat idle a fifth of the time (vmstat, CI=true on a fresh clone): three took npm test
    // from 435 to 380 s.
    maxWorkers: availableParallelism() + 1,
    // The default report, then the skipped tests with their reasons and one closing line of counts.
    reporters: ['default', './test/skip-report.ts'],
    // Runs once for the whole run, whichever projects it includes: end-to-end tests need a fresh build.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          ...timeouts,
          ...strict,
          ...shared,
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...POSTGRES_ONLY, ...ISOLATED],
          env: { KB_TEST_ENGINE: 'sqlite' },
        },
      },
      {
        plugins: [inkAsBundled],
        test: {
          ...timeouts,
          ...strict,
          ...inlineInk,
          name: 'isolated',
          include: ISOLATED,
          env: { KB_TEST_ENGINE: 'sqlite' },
        },
      },
      {
        test: {
          ...timeouts,
          ...strict,
          ...shared,
          name: 'postgres',
          include: [...BOTH_ENGINES, ...POSTGRES_ONLY],
          env: { KB_TEST_ENGINE: 'postgres' },
          // A real PostgreSQL for this project only, started and stopped by the run itself.
          globalSetup: ['test/postgres-setup.ts'],
        },
      },
    ],
  },
});
