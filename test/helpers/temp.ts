import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new directory under the run's own scratch directory (test/global-setup.ts removes it at the end of the run). */
export function tempDir(prefix = 'kb-test-'): string {
  return mkdtempSync(join(process.env.KB_TEST_TMPDIR ?? tmpdir(), prefix));
}
