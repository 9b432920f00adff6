/** Whether a process of this pid runs on this host (one of another user's counts: signalling it is refused, EPERM). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
