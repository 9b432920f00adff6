import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { identityRuns, processIdentity } from '../../src/os/processes.js';

describe('a process told apart from a later one of its pid (src/os/processes.ts)', () => {
  it('is this process by its identity, not by its pid alone; a dead pid runs not; other text is no identity', () => {
    const own = processIdentity();
    expect(own).toMatch(new RegExp(`^${process.pid}@\\d+$`));
    expect(identityRuns(own)).toEqual({ pid: process.pid, runs: true });
    // The pid with another start: a process that had the pid before this one.
    expect(identityRuns(`${process.pid}@1`)).toEqual({ pid: process.pid, runs: false });
    // A bare pid (as kb wrote before) says only that some process of that pid runs.
    expect(identityRuns(`${process.pid}`)).toEqual({ pid: process.pid, runs: true });
    const gone = Number(execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }).trim());
    expect(identityRuns(`${gone}@1`)).toEqual({ pid: gone, runs: false });
    for (const text of ['', 'kb', '12@', '@12', '1.5', `${2 ** 60}`]) expect(identityRuns(text), text).toBeUndefined();
  });
});
