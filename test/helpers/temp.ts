import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new directory under the run's own scratch directory (test/global-setup.ts removes it at the end of the run). */
export function tempDir(prefix = 'kb-test-'): string {
  return mkdtempSync(join(process.env.KB_TEST_TMPDIR ?? tmpdir(), prefix));
}

/**
 * A device whose every write fails with ENOSPC, as on a full disk: as root, one of its own in a temp dir (mknod, as
 * /dev/full is made), so that no test depends on, or could spoil, the machine's /dev/full; else the machine's.
 */
export function fullDevice(): string {
  if (process.getuid?.() !== 0) return '/dev/full';
  const device = join(tempDir('kb-full-'), 'full');
  execFileSync('mknod', ['-m', '666', device, 'c', '1', '7']);
  return device;
}
