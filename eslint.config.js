import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import contextExpect from './scripts/lint/context-expect.js';

/**
 * zod classic (and the index of all its locales) is ~450 KB that every command would load at start-up; src uses
 * zod/mini, and only through src/api/zod.ts, which sets the English messages that classic would have set itself.
 */
const ZOD_MESSAGE = 'Import { z } from src/api/zod.ts: zod/mini with the English messages (zod classic costs every command ~25 ms of start-up).';
const zodPaths = ['zod', 'zod/v4', 'zod/v3', 'zod/v4-mini', 'zod/v4/mini', 'zod/mini', 'zod/locales', 'zod/v4/locales'].map((name) => ({ name, message: ZOD_MESSAGE }));

/** The import boundaries of docs/ARCHITECTURE.md: `api` is the root; `server` never reaches the CLI or the TUI; only `client` talks HTTP. */
const boundary = (files, patterns, message, regex) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: zodPaths,
        patterns: [
          { group: ['zod/v4/classic/*', 'zod/v4/locales/*'], message: ZOD_MESSAGE },
          ...patterns.map((group) => ({ group: [group], message, allowTypeImports: true })),
          ...(regex ? [{ regex, message, allowTypeImports: true }] : []),
        ],
      },
    ],
  },
});

/** Exit codes come from the one table, EXIT (src/client/exit-codes.ts), which the error catalog carries. */
const EXIT_LITERALS = [
  {
    selector: [
      "NewExpression[callee.name=/^(CliError|UsageError)$/] > Literal.arguments[raw=/^[0-9]+$/]",
      "AssignmentExpression[left.property.name='exitCode'] > Literal.right",
      "PropertyDefinition[key.name='exitCode'] > Literal.value",
      "CallExpression[callee.object.name='process'][callee.property.name='exit'] > Literal.arguments",
    ].join(', '),
    message: 'Take exit codes from EXIT (src/client/exit-codes.ts), the one table of them.',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'dist.new-*/', 'dist.old-*/', '.build-*/', 'node_modules/', 'coverage/', 'oclif.manifest.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  // Every file of src is under one of the boundaries below; this one is for any that is not.
  boundary(['src/**'], []),
  boundary(['src/api/**'], ['../*', '!../api/*', 'undici', 'fastify', 'better-sqlite3', 'pg', 'conf', 'ink', 'react'], 'src/api imports only zod (zod/mini).'),
  boundary(['src/os/**'], ['../*', '!../os/*', 'undici', 'fastify', 'better-sqlite3', 'pg', 'conf', 'ink', 'react', 'zod', 'zod/*'], 'src/os holds what the operating system gives every layer: it imports only Node built-ins.'),
  boundary(['src/text/**'], ['../*', '!../text/*', 'undici', 'fastify', 'better-sqlite3', 'pg', 'conf', 'ink', 'react', 'zod', 'zod/*'], 'src/text measures terminal text for the CLI and the TUI: it imports only get-east-asian-width.'),
  boundary(['src/store/**'], ['../server/*', '../cli/*', '../commands/*', '../tui/*', '../client/*', '../config/*'], 'src/store depends only on src/api.'),
  boundary(['src/server/**'], ['../cli/*', '../commands/*', '../tui/*', '../client/*', '../config/*'], 'src/server never imports the CLI, the TUI or the client.'),
  boundary(['src/client/**'], ['../server/*', '../store/*', '../cli/*', '../commands/*', '../tui/*', '../config/*', 'fastify', 'better-sqlite3', 'pg'], 'src/client depends only on src/api.'),
  boundary(['src/config/**'], ['../server/*', '../store/*', '../cli/*', '../commands/*', '../tui/*', 'fastify', 'better-sqlite3', 'pg'], 'src/config depends only on src/api and src/client.'),
  boundary(['src/tui/**'], ['../server/*', '../store/*', '../commands/*', '../cli/*', 'undici', 'fastify', 'better-sqlite3', 'pg'], 'src/tui reaches the network only through src/client, and receives what it needs: it never imports src/cli.'),
  boundary(
    ['src/sync/**'],
    ['../server/*', '../store/*', '../commands/*', '../tui/*', '../config/*', 'undici', 'fastify', 'better-sqlite3', 'pg', 'ink', 'react'],
    'src/sync plans and applies through src/client, and takes its IO from src/cli.',
  ),
  boundary(
    ['src/cli/**', 'src/commands/**'],
    ['undici', 'fastify', 'better-sqlite3', 'pg', 'ink', 'react'],
    'Commands reach the network through src/client; the server, the store and the TUI load lazily (await import).',
    // server/log.js and store/database-url.js import nothing: the serve command's flags need them at parse time;
    // store/errors.js holds only the error classes the CLI recognises.
    '/(server/(?!log\\.js$)|store/(?!(errors|database-url)\\.js$)|tui/)',
  ),
  // kb's environment variables are read in one place, src/config/env.ts (readEnv); the rest of src takes them from
  // the command's context (src/cli/context.ts), so a test can give its own.
  {
    files: ['src/**'],
    ignores: ['src/config/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read environment variables through readEnv() (src/config/env.ts), handed over by the context (src/cli/context.ts).' },
      ],
    },
  },
  { files: ['src/**'], rules: { 'no-restricted-syntax': ['error', ...EXIT_LITERALS] } },
  // Tests that run concurrently count their assertions on the test context's expect (scripts/lint/context-expect.js
  // says why); a helper takes the test's expect as a parameter, so no module of test/ but a test file imports the global one.
  { files: ['test/**/*.test.{ts,tsx}'], plugins: { kb: { rules: { 'context-expect': contextExpect } } }, rules: { 'kb/context-expect': 'error' } },
  {
    files: ['test/**'],
    ignores: ['test/**/*.test.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vitest', importNames: ['expect'], message: 'A helper takes the test\'s expect as a parameter (expect: ExpectStatic): the global one counts the assertions of whichever test started last.' }] },
      ],
    },
  },
  // A command never imports another command's module: what two commands share lives in src/cli (or below).
  {
    files: ['src/commands/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...EXIT_LITERALS,
        {
          selector: "ImportDeclaration[source.value=/^(?!(\\.\\.\\/)+(api|cli|client|config|server|store|sync|tui)\\/)\\./], ImportExpression[source.value=/^(?!(\\.\\.\\/)+(api|cli|client|config|server|store|sync|tui)\\/)\\./]",
          message: 'A command never imports another command: move what they share to src/cli (or the layer it belongs to).',
        },
      ],
    },
  },
);
