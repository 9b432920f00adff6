import { describe, expect, it } from 'vitest';
import { isCi, skipReport } from '../skip-report.js';

const ran = { project: 'sqlite', file: 'test/e2e/a.test.ts', name: 'a > works', state: 'passed' };
const skipped = { project: 'sqlite', file: 'test/e2e/tui-tmux.test.ts', name: 'kb tui > q exits 0 [skipped: tmux is not installed]', state: 'skipped' };

describe('the skip report (test/skip-report.ts): a skipped test fails a CI run, naming what it lacked', () => {
  it('lists each skipped test with its reason, and fails the run for it with CI set', () => {
    const { text, fail } = skipReport([ran, skipped, { ...skipped, name: 'kb tui > sorts [skipped: tmux is not installed]' }], true);
    expect(fail).toBe(true);
    expect(text.split('\n')).toEqual([
      '',
      'skipped tests (2), each with its reason in its name:',
      '  [sqlite] test/e2e/tui-tmux.test.ts > kb tui > q exits 0 [skipped: tmux is not installed]',
      '  [sqlite] test/e2e/tui-tmux.test.ts > kb tui > sorts [skipped: tmux is not installed]',
      'tests: 1 passed, 0 failed, 2 skipped',
      'CI: 2 skipped tests fail the run: give the machine what each one names above (.ci/run installs zsh, fish and tmux, and runs as root)',
      '',
    ]);
  });

  it('only lists them without CI, and a CI run with none skipped passes', () => {
    expect(skipReport([ran, skipped], false)).toEqual({ fail: false, text: expect.not.stringContaining('CI:') });
    expect(skipReport([ran, { ...ran, state: 'failed' }], true)).toEqual({
      fail: false,
      text: '\nfailed tests (1):\n  [sqlite] test/e2e/a.test.ts > a > works\n\nskipped tests (0), each with its reason in its name:\n  none\ntests: 1 passed, 1 failed, 0 skipped\n',
    });
  });

  it('lists each failed test with the first three lines of its error, so that the end of a CI log says what failed', () => {
    const error = 'expected 2 to be 3\n\n- Expected\n+ Received\n\n- 3\n+ 2';
    const { text } = skipReport([ran, { ...ran, name: 'a > adds', state: 'failed', error }], true);
    expect(text.split('\n').slice(0, 7)).toEqual([
      '',
      'failed tests (1):',
      '  [sqlite] test/e2e/a.test.ts > a > adds',
      '      expected 2 to be 3',
      '      - Expected',
      '      + Received',
      '',
    ]);
  });

  it('reads CI as most tools do: set, and not "false" or "0"', () => {
    expect([undefined, '', 'false', '0', 'true', '1', 'github'].map(isCi)).toEqual([false, false, false, false, true, true, true]);
  });
});
