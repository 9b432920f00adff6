import { defineConfig } from 'vitest/config';

/** Engine-neutral suites, run once per engine: the server (in process and as a process) and the store contract. */
const BOTH_ENGINES = ['test/server/**/*.test.ts', 'test/store/contract.test.ts', 'test/e2e/serve.test.ts'];

/** The PostgreSQL engine's own tests: its schema and connections, replicas behind one URL, the README's session. */
const POSTGRES_ONLY = ['test/store/postgres.test.ts', 'test/e2e/replicas.test.ts', 'test/e2e/postgres.test.ts', 'test/e2e/postgres-faults.test.ts', 'test/server/postgres-load.test.ts'];

const timeouts = { testTimeout: 30_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    ...timeouts,
    // Runs once for the whole run, whichever projects it includes: end-to-end tests need a fresh build.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          ...timeouts,
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: POSTGRES_ONLY,
          env: { KB_TEST_ENGINE: 'sqlite' },
        },
      },
      {
        test: {
          ...timeouts,
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
