import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectories, writeFileAtomic } from '../../src/os/files.js';
import { IS_ROOT, mountTmpfs, unmountTmpfs } from '../config/helpers.js';
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

describe('writeFileAtomic', () => {
  it('makes a new file with the mode the umask gives', async () => {
    const dir = tempDir('kb-os-');
    const previous = process.umask(0o022);
    try {
      await writeFileAtomic(join(dir, 'new.yaml'), 'a: 1\n');
    } finally {
      process.umask(previous);
    }
    expect(readFileSync(join(dir, 'new.yaml'), 'utf8')).toBe('a: 1\n');
    expect(statSync(join(dir, 'new.yaml')).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(['new.yaml']);
  });

  it('keeps the mode of the file it replaces: a private export stays private', async () => {
    const dir = tempDir('kb-os-');
    const path = join(dir, 'private.yaml');
    writeFileSync(path, 'old\n', { mode: 0o600 });
    await writeFileAtomic(path, 'new\n');
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('writes through a symbolic link, which stays a link', async () => {
    const dir = tempDir('kb-os-');
    writeFileSync(join(dir, 'real.yaml'), 'old\n');
    symlinkSync('real.yaml', join(dir, 'link.yaml'));
    await writeFileAtomic(join(dir, 'link.yaml'), 'new\n');
    expect(lstatSync(join(dir, 'link.yaml')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'real.yaml'), 'utf8')).toBe('new\n');
    expect(readdirSync(dir).sort()).toEqual(['link.yaml', 'real.yaml']);
  });

  it('writes /dev/fd/N and /proc/self/fd/N at the descriptor this process holds: appended, the file never replaced', async () => {
    const dir = tempDir('kb-os-');
    const path = join(dir, 'log.txt');
    writeFileSync(path, 'earlier\n');
    const inode = statSync(path).ino;
    const fd = openSync(path, 'a');
    try {
      await writeFileAtomic(`/dev/fd/${fd}`, 'one\n');
      await writeFileAtomic(`/proc/self/fd/${fd}`, 'two\n');
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(path, 'utf8')).toBe('earlier\none\ntwo\n');
    expect(statSync(path).ino).toBe(inode);
    expect(readdirSync(dir)).toEqual(['log.txt']);
  });

  it('writes through a dangling link, making its target; a loop of links fails with ELOOP', async () => {
    const dir = tempDir('kb-os-');
    symlinkSync('target.yaml', join(dir, 'link.yaml'));
    await writeFileAtomic(join(dir, 'link.yaml'), 'new\n');
    expect(lstatSync(join(dir, 'link.yaml')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'target.yaml'), 'utf8')).toBe('new\n');
    symlinkSync('b', join(dir, 'a'));
    symlinkSync('a', join(dir, 'b'));
    await expect(writeFileAtomic(join(dir, 'a'), 'x')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(readdirSync(dir).sort()).toEqual(['a', 'b', 'link.yaml', 'target.yaml']);
  });

  it('writes to what is not a regular file as it is (/dev/null here), without a file beside it', async () => {
    await expect(writeFileAtomic('/dev/null', 'x\n')).resolves.toBeUndefined();
  });

  it.skipIf(!IS_ROOT)('on a full disk (needs root: a tmpfs is mounted): fails with ENOSPC, the old file whole, nothing left beside it', async () => {
    const dir = mountTmpfs(64 * 1024);
    try {
      const path = join(dir, 'export.yaml');
      writeFileSync(path, 'kept\n');
      const big = 'x'.repeat(256 * 1024);
      await expect(writeFileAtomic(path, big)).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(readFileSync(path, 'utf8')).toBe('kept\n');
      expect(readdirSync(dir)).toEqual(['export.yaml']);
    } finally {
      unmountTmpfs(dir);
    }
  });
});
