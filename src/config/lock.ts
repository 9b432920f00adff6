import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT } from '../client/exit-codes.js';
import { identityRuns, processIdentity } from '../os/processes.js';

export interface LockOptions {
  /** How long to wait for another holder before giving up. */
  timeoutMs?: number;
  /** A lock file older than this is left over from a process that hung or died, and is taken over. */
  staleMs?: number;
  /**
   * Runs what is done once the lock is held, its release included; the CLI makes it uninterruptible, so that Ctrl-C
   * ends the wait for the lock at once but never a read-modify-write half-way.
   */
  hold?: <T>(work: () => Promise<T>) => Promise<T>;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
export const DEFAULT_STALE_LOCK_MS = 30_000;
/** A breaker holds its guard for one read and one unlink; a guard older than this belongs to a breaker that died. */
const STALE_GUARD_MS = 2000;

/** Another process held the lock for the whole wait. */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
  readonly code = 'config_locked';
  readonly exitCode = EXIT.failure;
  readonly help: string;

  constructor(
    readonly path: string,
    waitedMs: number,
    holderPid: number | undefined,
  ) {
    const holder = holderPid === undefined ? 'another process' : `another process (pid ${holderPid})`;
    super(`${holder} holds the lock ${path}; gave up after ${Math.round(waitedMs / 100) / 10} s`);
    this.help = `If no kb process is running, remove ${path}.`;
  }
}

interface Owner {
  pid: number;
  /** The same process as processIdentity tells it from a later one of its pid (absent in a lock of an older kb). */
  process?: string;
  host: string;
  /** Makes every acquisition's file content unique, so a holder can tell its lock from a successor's. */
  nonce: string;
}

interface Seen {
  raw: string;
  mtimeMs: number;
  owner: Owner | undefined;
}

function errno(error: unknown): string | undefined {
  return (error as { code?: unknown } | null)?.code as string | undefined;
}

function parseOwner(raw: string): Owner | undefined {
  try {
    const value = JSON.parse(raw) as Partial<Owner>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.nonce === 'string') {
      return { pid: value.pid, process: typeof value.process === 'string' ? value.process : undefined, host: value.host, nonce: value.nonce };
    }
  } catch {
    // A holder between creating the file and writing its content, or a foreign file: judged by age alone.
  }
  return undefined;
}

/** The lock file as it is now; undefined once it is gone. */
function look(path: string): Seen | undefined {
  try {
    const raw = readFileSync(path, 'utf8');
    const { mtimeMs } = statSync(path);
    return { raw, mtimeMs, owner: parseOwner(raw) };
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function isStale(seen: Seen, staleMs: number): boolean {
  if (Date.now() - seen.mtimeMs > staleMs) return true;
  // A pid means something only on the host that wrote it; and only while the process that wrote it runs, not a later
  // one given the same pid.
  return seen.owner !== undefined && seen.owner.host === hostname() && identityRuns(seen.owner.process ?? String(seen.owner.pid))?.runs === false;
}

function tryCreate(path: string, owner: Owner): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } catch (error) {
    closeSync(fd);
    unlinkSync(path);
    throw error;
  }
  closeSync(fd);
  return true;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (errno(error) !== 'ENOENT') throw error;
  }
}

/**
 * Removes a stale lock, unless it changed since it was judged stale. Two waiters may judge the same lock stale;
 * without the guard, the slower one could delete the lock the faster one has just created.
 * Returns true when the lock is gone.
 */
function breakStale(path: string, judged: Seen): boolean {
  const guard = `${path}.break`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx', 0o600);
  } catch (error) {
    if (errno(error) !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(guard).mtimeMs > STALE_GUARD_MS) removeQuietly(guard);
    } catch (statError) {
      if (errno(statError) !== 'ENOENT') throw statError;
    }
    return false;
  }
  try {
    const now = look(path);
    if (now === undefined) return true;
    if (now.raw !== judged.raw || now.mtimeMs !== judged.mtimeMs) return false;
    removeQuietly(path);
    return true;
  } finally {
    closeSync(fd);
    removeQuietly(guard);
  }
}

function pause(round: number): number {
  const base = Math.min(250, 10 * 1.5 ** round);
  return Math.round(base * (0.5 + Math.random()));
}

async function acquire(path: string, timeoutMs: number, staleMs: number): Promise<Owner> {
  const owner: Owner = { pid: process.pid, process: processIdentity(), host: hostname(), nonce: globalThis.crypto.randomUUID() };
  const started = Date.now();
  for (let round = 0; ; round++) {
    if (tryCreate(path, owner)) return owner;
    const seen = look(path);
    if (seen === undefined) continue;
    if (isStale(seen, staleMs) && breakStale(path, seen)) continue;
    if (Date.now() - started >= timeoutMs) throw new LockTimeoutError(path, Date.now() - started, seen.owner?.pid);
    await sleep(pause(round));
  }
}

function release(path: string, owner: Owner): void {
  // After a hold longer than staleMs another process may have taken the lock over; its lock is not ours to remove.
  const seen = look(path);
  if (seen?.owner?.nonce === owner.nonce) removeQuietly(path);
}

/**
 * Runs fn while holding an exclusive lock file, so read-modify-write cycles of concurrent processes do not
 * interleave. The lock is created with O_EXCL ('wx'), waited for with backoff, taken over when stale, and always
 * released. The directory of the lock file must exist.
 */
export async function withFileLock<T>(path: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const owner = await acquire(path, options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS, options.staleMs ?? DEFAULT_STALE_LOCK_MS);
  const held = async () => {
    try {
      return await fn();
    } finally {
      release(path, owner);
    }
  };
  return options.hold ? options.hold(held) : held();
}
