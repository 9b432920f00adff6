import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/client/errors.js';
import { LockTimeoutError, withFileLock } from '../../src/config/lock.js';
import { tempDir } from '../helpers/server.js';

let lock: string;
beforeEach(() => {
  lock = join(tempDir('kb-lock-'), 'config.lock');
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

function foreignLock(owner: { pid: number; process?: string; host?: string }, ageMs = 0): void {
  writeFileSync(lock, JSON.stringify({ pid: owner.pid, process: owner.process, host: owner.host ?? hostname(), nonce: 'someone-else' }));
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    utimesSync(lock, then, then);
  }
}

describe('withFileLock', () => {
  it('holds the lock file while fn runs, returns its result and removes the file', async () => {
    const result = await withFileLock(lock, () => {
      expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
      return 42;
    });
    expect(result).toBe(42);
    expect(existsSync(lock)).toBe(false);
  });

  it('runs fn and the release inside `hold`, and waits for the lock outside it', async () => {
    const events: string[] = [];
    foreignLock({ pid: process.pid }, 60_000);
    const hold = async <T>(work: () => Promise<T>): Promise<T> => {
      // The stale lock was taken over before: the wait is over once hold is called.
      events.push(`hold, locked by us: ${JSON.parse(readFileSync(lock, 'utf8')).nonce !== 'someone-else'}`);
      try {
        return await work();
      } finally {
        events.push(`after work, lock file there: ${existsSync(lock)}`);
      }
    };
    const result = await withFileLock(lock, () => (events.push('fn'), 'done'), { hold, staleMs: 30_000 });
    expect(result).toBe('done');
    expect(events).toEqual(['hold, locked by us: true', 'fn', 'after work, lock file there: false']);
  });

  it('releases the lock when fn throws', async () => {
    await expect(withFileLock(lock, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
  });

  it('lets one holder in at a time', async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        withFileLock(lock, async () => {
          most = Math.max(most, ++inside);
          await sleep(5);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('waits for a live holder to finish', async () => {
    const order: string[] = [];
    const first = withFileLock(lock, async () => {
      await sleep(150);
      order.push('first');
    });
    await sleep(10);
    await withFileLock(lock, () => order.push('second'));
    await first;
    expect(order).toEqual(['first', 'second']);
  });

  it('gives up with LockTimeoutError (exit 1) naming the file and the holder, leaving the holder\'s lock alone', async () => {
    foreignLock({ pid: process.pid });
    const started = Date.now();
    const error = await withFileLock(lock, () => 'never', { timeoutMs: 300 }).catch((thrown: unknown) => thrown);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ name: 'LockTimeoutError', code: 'config_locked', exitCode: 1, path: lock });
    expect((error as Error).message).toMatch(new RegExp(`another process \\(pid ${process.pid}\\) holds the lock ${lock}; gave up after 0\\.\\d s`));
    expect((error as LockTimeoutError).help).toBe(`If no kb process is running, remove ${lock}.`);
    expect(exitCodeFor(error)).toBe(1);
    expect(readFileSync(lock, 'utf8')).toContain('someone-else');
  });

  it('takes over a fresh lock because its process is dead, not because of its age', async () => {
    foreignLock({ pid: deadPid() });
    // The lock is younger than staleMs for the whole wait, so only the dead pid can let this through.
    expect(await withFileLock(lock, () => 'mine', { timeoutMs: 10_000, staleMs: 600_000 })).toBe('mine');
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a fresh lock of a process that is gone though a later process took its pid', async () => {
    // This test's own pid, which runs, with another start: the process that had the pid before it.
    foreignLock({ pid: process.pid, process: `${process.pid}@1` });
    expect(await withFileLock(lock, () => 'mine', { timeoutMs: 10_000, staleMs: 600_000 })).toBe('mine');
  });

  it('does not take over a fresh lock whose process lives', async () => {
    foreignLock({ pid: process.pid });
    await expect(withFileLock(lock, () => 'mine', { timeoutMs: 200, staleMs: 600_000 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(readFileSync(lock, 'utf8')).toContain('someone-else');
  });

  it('takes over a lock older than staleMs even when its process lives', async () => {
    foreignLock({ pid: process.pid }, 60_000);
    expect(await withFileLock(lock, () => 'mine', { timeoutMs: 5000, staleMs: 30_000 })).toBe('mine');
  });

  it('does not judge a pid from another host: only age makes such a lock stale', async () => {
    foreignLock({ pid: deadPid(), host: 'some-other-host' });
    await expect(withFileLock(lock, () => 'mine', { timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    foreignLock({ pid: deadPid(), host: 'some-other-host' }, 60_000);
    expect(await withFileLock(lock, () => 'mine', { timeoutMs: 2000 })).toBe('mine');
  });

  it('waits for a lock file still being written (no content yet), until it is stale by age', async () => {
    writeFileSync(lock, '');
    await expect(withFileLock(lock, () => 'mine', { timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    const then = new Date(Date.now() - 60_000);
    utimesSync(lock, then, then);
    expect(await withFileLock(lock, () => 'mine', { timeoutMs: 2000 })).toBe('mine');
  });

  it('lets exactly one of many waiters take over the same stale lock at a time', async () => {
    foreignLock({ pid: deadPid() });
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(lock, async () => {
          most = Math.max(most, ++inside);
          await sleep(5);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(existsSync(lock)).toBe(false);
  });

  it('leaves a lock that is no longer its own when it releases', async () => {
    await withFileLock(lock, () => foreignLock({ pid: process.pid }));
    expect(readFileSync(lock, 'utf8')).toContain('someone-else');
  });
});
