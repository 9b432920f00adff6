import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { escapeRegExp } from '../helpers/cli-e2e.js';

const RULES = new Set(['kb/context-expect', 'no-restricted-imports', 'parse']);

/** The project's own ESLint configuration (eslint.config.js), as `npm run lint` runs it. */
const eslint = new ESLint({ cwd: ROOT });

/** Each kb/context-expect or no-restricted-imports error of `source`, linted as if it were the file at `path`, as `line: message`. */
async function errors(source: string, path = 'test/e2e/race.test.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${ROOT}/${path}` });
  return (result?.messages ?? []).filter((message) => RULES.has(message.ruleId ?? 'parse')).map((message) => `${message.line}: ${message.ruleId ?? 'parse'}: ${message.message}`);
}

/**
 * The two-test race. Vitest keeps one assertion count on the global expect, reset as each test starts and checked as
 * it ends: run (requireAssertions on), "asserts nothing" passes on the count its neighbour made. The same count reset
 * by a test starting while "asserts, then awaits" waits fails that one with "expected any number of assertion, but
 * got none" (cli-network.test.ts in CI at e32fb03).
 */
const RACE = `import { describe, expect, it } from 'vitest';

let neighbourStarted = (): void => undefined;
const started = new Promise<void>((resolve) => (neighbourStarted = resolve));

describe.concurrent('two tests at once', () => {
  it('asserts, then awaits', async () => {
    expect(1 + 1).toBe(2);
    await started;
  });

  it('asserts nothing', () => {
    neighbourStarted();
  });
});
`;

/** The same two tests, each counting on its own context's expect: run, "asserts nothing" fails, as a test with no assertion must, and only it. */
const FIXED = `import { describe, it } from 'vitest';

let neighbourStarted = (): void => undefined;
const started = new Promise<void>((resolve) => (neighbourStarted = resolve));

describe.concurrent('two tests at once', () => {
  it('asserts, then awaits', async ({ expect }) => {
    expect(1 + 1).toBe(2);
    await started;
  });

  it('asserts nothing', ({ expect: _expect }) => {
    neighbourStarted();
  });
});
`;

const TAKE = 'This test runs concurrently: take expect from its context (({ expect }) => ...)';
const GLOBAL = "This file runs tests concurrently: use the test context's expect ({ expect }), passed to helpers";

describe('kb/context-expect (scripts/lint/context-expect.js): concurrent tests count their assertions on their own expect', { timeout: 60_000 }, () => {
  it('fails the two-test race: each test for taking no expect of its own, and the global expect where it is used', async () => {
    const got = await errors(RACE);
    expect(got).toEqual([
      expect.stringMatching(new RegExp(`^7: kb/context-expect: ${escapeRegExp(TAKE)}`)),
      expect.stringMatching(new RegExp(`^8: kb/context-expect: ${escapeRegExp(GLOBAL)}`)),
      expect.stringMatching(new RegExp(`^12: kb/context-expect: ${escapeRegExp(TAKE)}`)),
    ]);
  });

  it('passes the same tests once each takes its context\'s expect', async () => {
    expect(await errors(FIXED)).toEqual([]);
  });

  it('follows concurrency wherever it is asked: it.concurrent, test.concurrent, { concurrent: true }, nested suites; it.sequential and plain files are left alone', async () => {
    const each = (head: string) => `import { describe, expect, it, test } from 'vitest';\n${head}\n`;
    expect(await errors(each("it.concurrent('a', () => { expect(1).toBe(1); });"))).toHaveLength(2);
    expect(await errors(each("test.concurrent('a', async ({ expect }) => { expect(1).toBe(1); });"))).toEqual([]);
    expect(await errors(each("describe('s', { concurrent: true }, () => { describe('inner', () => { it('a', ({ expect }) => { expect(1).toBe(1); }); it('b', () => undefined); }); });"))).toEqual([
      expect.stringMatching(new RegExp(`^2: kb/context-expect: ${escapeRegExp(TAKE)}`)),
    ]);
    expect(await errors(each("describe.concurrent('s', () => { it.sequential('a', () => undefined); });"))).toEqual([]);
    expect(await errors(each("describe('s', () => { it('a', () => { expect(1).toBe(1); }); });"))).toEqual([]);
  });

  it('fails a helper of the file that uses the global expect, and it.each, which gives no context; hooks may assert with it', async () => {
    const source = `import { beforeAll, describe, expect, it } from 'vitest';
function ok(code: number): void {
  expect(code).toBe(0);
}
beforeAll(() => {
  expect(1).toBe(1);
});
describe.concurrent('s', () => {
  it.each([0])('%s', (code) => ok(code));
  it.for([0])('%s', (code, { expect }) => expect(code).toBe(0));
});
`;
    expect(await errors(source)).toEqual([
      expect.stringMatching(new RegExp(`^3: kb/context-expect: ${escapeRegExp(GLOBAL)}`)),
      expect.stringMatching(/^9: kb\/context-expect: This test runs concurrently, and it\.each gives it no context/),
    ]);
  });

  it('fails a module of test/ that is not a test file when it imports the global expect', async () => {
    const got = await errors("import { expect } from 'vitest';\nexport function ok(code: number): void {\n  expect(code).toBe(0);\n}\n", 'test/helpers/race.ts');
    expect(got).toEqual([expect.stringMatching(/^1: no-restricted-imports: 'expect' import from 'vitest' is restricted\. A helper takes the test's expect as a parameter/)]);
    expect(await errors("import type { ExpectStatic } from 'vitest';\nexport function ok(expect: ExpectStatic, code: number): void {\n  expect(code).toBe(0);\n}\n", 'test/helpers/race.ts')).toEqual([]);
  });
});
