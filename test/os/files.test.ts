import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectories } from '../../src/os/files.js';
import { processRuns } from '../../src/os/processes.js';
import { tempDir } from '../helpers/temp.js';

describe('makeDirectories', () => {
  it('makes every missing level with the mode, and leaves one that exists as it is', () => {
    const root = tempDir('kb-os-');
    const dir = join(root, 'a', 'b', 'c');
    makeDirectories(dir, 0o700);
    for (const level of [join(root, 'a'), join(root, 'a', 'b'), dir]) expect(statSync(level).mode & 0o777).toBe(0o700);
    expect(() => makeDirectories(dir, 0o755)).not.toThrow();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a file in the way', () => {
    const root = tempDir('kb-os-');
    writeFileSync(join(root, 'file'), '');
    expect(() => makeDirectories(join(root, 'file'), 0o700)).toThrow(/EEXIST/);
    expect(() => makeDirectories(join(root, 'file', 'below'), 0o700)).toThrow(/ENOTDIR/);
  });

  // Node's recursive mkdirSync loops forever there: this would never return.
  it.skipIf(!existsSync('/proc/self'))('fails at once where a level cannot be made under a parent that exists (/proc)', () => {
    expect(() => makeDirectories('/proc/kb-no-such-dir/data', 0o700)).toThrow(/ENOENT/);
  });
});

describe('processRuns', () => {
  it('says this process runs, and a pid no process has does not', () => {
    expect(processRuns(process.pid)).toBe(true);
    expect(processRuns(2 ** 22 + 1)).toBe(false);
  });
});
