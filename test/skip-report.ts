import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends `npm test` with what a reader of the CI log needs: every skipped test with its reason (the reason is in the
 * test's name, by the house rule), then one closing line of counts, "tests: N passed, N failed, N skipped".
 */
export default class SkipReport implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else {
          counts.skipped++;
          skipped.push(`  [${module.project.name}] ${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
        }
      }
    }
    const out = process.stdout;
    out.write(`\nskipped tests (${counts.skipped}), each with its reason in its name:\n`);
    out.write(skipped.length > 0 ? `${skipped.join('\n')}\n` : '  none\n');
    out.write(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
