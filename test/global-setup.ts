import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs once for the whole run. End-to-end tests run the built CLI (bin/run.js over dist/ and the manifest), so it
 * builds first: a stale build would test old code. Every temporary directory of the run goes under one directory,
 * removed at the end (test/helpers/temp.ts reads KB_TEST_TMPDIR), so that a run leaves nothing in /tmp.
 */
export default function setup(): () => void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const scratch = mkdtempSync(join(tmpdir(), 'kb-test-run-'));
  process.env.KB_TEST_TMPDIR = scratch;
  // Retried: a process a failed test left behind may still be writing in it as it is removed (ENOTEMPTY).
  return () => rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
}
