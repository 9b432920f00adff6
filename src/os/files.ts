import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import { open, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * `mkdir -p`, one level at a time, each level it makes with `mode`; a directory that exists (or that another process
 * makes meanwhile) is left as it is. Node's own recursive mkdirSync never returns when a level cannot be made under a
 * parent that exists, with ENOENT (as under /proc): kb hung there, deaf to signals.
 */
export function makeDirectories(dir: string, mode: number): void {
  const parent = dirname(dir);
  if (parent !== dir && !existsSync(parent)) makeDirectories(parent, mode);
  try {
    mkdirSync(dir, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
  }
}

/** fsync of a directory: makes a file created or renamed in it survive a crash (a file's own fsync does not). */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Writes a file whole or not at all, as it will be after a crash too: a new file beside it, written and fsynced, then
 * renamed over it and the directory fsynced. A file that exists keeps its mode (an export kept 0600 stays 0600), and
 * a symbolic link is written through, not replaced. Anything that is not a regular file (`/dev/stdout`, a FIFO) is
 * written to as it is. Throws the system's error, with nothing left behind.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const existing = await statOrUndefined(path);
  if (existing !== undefined && !existing.isFile()) return writeFile(path, data, 'utf8');
  const target = existing === undefined ? path : await realpath(path);
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  try {
    // 'wx': a name that another writer took meanwhile fails, instead of being shared.
    const handle = await open(temporary, 'wx', existing === undefined ? 0o666 : existing.mode & 0o777);
    try {
      // The mode given to open is narrowed by the umask: the file it replaces had this one.
      if (existing !== undefined) await handle.chmod(existing.mode & 0o777);
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(target));
}
