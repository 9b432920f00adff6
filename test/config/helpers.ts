import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG_OP = fileURLToPath(new URL('./fixtures/config-op.ts', import.meta.url));

export const IS_ROOT = process.getuid?.() === 0;
export const IS_POSIX = process.getuid !== undefined;

/** The uid and gid of `nobody`, the user root's tests drop to. */
function nobody(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

export const NOBODY = IS_POSIX ? nobody() : { uid: -1, gid: -1 };

/**
 * The user a test runs its "no permission" cases as: nobody when the tests run as root (root may read and write
 * anything), else the test's own user, which has no privilege to drop.
 */
export const UNPRIVILEGED = IS_ROOT ? NOBODY : { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };

const made: string[] = [];

/** A fresh temporary directory (0700), given to `owner` when the tests run as root; removed by removeTempDirs. */
export function tempDirFor(prefix: string, owner?: { uid: number; gid: number }): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  if (owner !== undefined && IS_ROOT) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface OpResult {
  ok?: unknown;
  error?: { name: string; code?: string; exitCode?: number; message: string; help?: string };
  warnings: string[];
  stderr: string;
}

/** Runs fixtures/config-op.ts as UNPRIVILEGED, with KB_CONFIG_DIR set to `configDir`. */
export function runConfigOp(args: string[], configDir: string): Promise<OpResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CONFIG_OP, ...args], {
      cwd: ROOT,
      env: { ...process.env, KB_CONFIG_DIR: configDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(IS_ROOT ? UNPRIVILEGED : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve({ ...(JSON.parse(line) as Omit<OpResult, 'stderr'>), stderr });
      } catch {
        reject(new Error(`config-op ${args.join(' ')} exited ${code} without a result: ${stdout}\n${stderr}`));
      }
    });
  });
}

/** A tmpfs of `size` bytes on a fresh directory (tests that use it run as root); unmount it with unmountTmpfs. */
export function mountTmpfs(size: number): string {
  const dir = tempDirFor('kb-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  return dir;
}

export function remountReadOnly(dir: string): void {
  execFileSync('mount', ['-o', 'remount,ro', dir]);
}

export function unmountTmpfs(dir: string): void {
  execFileSync('umount', [dir]);
}
