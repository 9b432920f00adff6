import type { Reporter, SerializedError, TestModule } from 'vitest/node';

type TestState = { project: string; file: string; name: string; state: string; error?: string };

/** The closing lines of a run, from each test's state, and whether the run fails for its skips. */
export function skipReport(
  tests: Iterable<TestState>,
  ci: boolean,
): { text: string; fail: boolean } {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const skipped: string[] = [];
  const failed: string[] = [];
  for (const test of tests) {
    if (test.state === 'passed') counts.passed++;
    else if (test.state === 'failed') {
      counts.failed++;
      failed.push(`  [${test.project}] ${test.file} > ${test.name}`);
      // The error's first lines: a CI log is often read from its end, far from vitest's own report of the failure.
      const lines = (test.error ?? '').split('\n').filter((line) => line.trim() !== '').slice(0, 3);
      failed.push(...lines.map((line) => `      ${line.slice(0, 300)}`));
    } else {
      counts.skipped++;
      skipped.push(`  [${test.project}] ${test.file} > ${test.name}`);
    }
  }
  let text = failed.length > 0 ? `\nfailed tests (${counts.failed}):\n${failed.join('\n')}\n` : '';
  text += `\nskipped tests (${counts.skipped}), each with its reason in its name:\n`;
  text += skipped.length > 0 ? `${skipped.join('\n')}\n` : '  none\n';
  text += `tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`;
  const fail = ci && counts.skipped > 0;
  if (fail) text += `CI: ${counts.skipped} skipped ${counts.skipped === 1 ? 'test fails' : 'tests fail'} the run: give the machine what each one names above (.ci/run installs zsh, fish and tmux, and runs as root)\n`;
  return { text, fail };
}

/**
 * Ends `npm test` with what a reader of the CI log needs: every failed test with its error's first lines, every
 * skipped test with its reason (the reason is in the
 * test's name, by the house rule), then one closing line of counts, "tests: N passed, N failed, N skipped". With CI
 * set (as .ci/run runs), a skipped test fails the run: a test that cannot run there hides what it would catch.
 */
export default class SkipReport implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const tests = testModules.flatMap((module): TestState[] => {
      const where = { project: module.project.name, file: module.moduleId.replace(`${process.cwd()}/`, '') };
      // A file that failed outside its tests (an import, a hook of the file) fails the run too: listed as one.
      const own: TestState[] = module.errors().map((error) => ({ ...where, name: '(the file, outside its tests)', state: 'failed', error: error.message }));
      return own.concat(
        Array.from(module.children.allTests(), (test) => ({
          ...where,
          name: test.fullName,
          state: test.result().state,
          error: test.result().errors?.[0]?.message,
        })),
      );
    });
    for (const error of unhandledErrors) tests.push({ project: '-', file: '-', name: '(an unhandled error)', state: 'failed', error: error.message });
    const { text, fail } = skipReport(tests, isCi(process.env.CI));
    process.stdout.write(text);
    if (fail) process.exitCode = 1;
  }
}

/** CI as most tools read it: set, and neither "false" nor "0". */
export function isCi(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}
