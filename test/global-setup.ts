import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end tests run the built CLI (bin/run.js over dist/), so build first: a stale dist/ would test old code. */
export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
