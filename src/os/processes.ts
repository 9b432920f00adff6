import { readFileSync } from 'node:fs';

/** Whether a process of this pid runs on this host (one of another user's counts: signalling it is refused, EPERM). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When the process of this pid started (Linux: clock ticks since boot, /proc/PID/stat), or undefined elsewhere. */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces: the fields counted after its closing one (starttime is 22nd).
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let own: string | undefined;

/**
 * This process as another can tell it from a later one of the same pid: `PID@START` where the start can be read
 * (Linux), else `PID`. Pids are reused, the sooner the more processes a machine starts (32,768 of them by default).
 */
export function processIdentity(): string {
  if (own === undefined) {
    const start = startOf(process.pid);
    own = start === undefined ? `${process.pid}` : `${process.pid}@${start}`;
  }
  return own;
}

/**
 * The pid of an identity (processIdentity's, or a bare pid), with whether that very process still runs: a later
 * process given the same pid is not it. Undefined for text that is no identity.
 */
export function identityRuns(identity: string): { pid: number; runs: boolean } | undefined {
  const match = /^(\d+)(?:@(\d+))?$/.exec(identity);
  const pid = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(pid)) return undefined;
  const start = match[2];
  if (!processRuns(pid)) return { pid, runs: false };
  const now = start === undefined ? undefined : startOf(pid);
  return { pid, runs: now === undefined || now === start };
}
