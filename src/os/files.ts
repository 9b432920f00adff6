import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, statSync, type Stats, write } from 'node:fs';
import { lstat, open, readlink, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

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

/** The descriptor a path names of this process's own: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`. */
function ownDescriptor(path: string): number | undefined {
  if (path === '/dev/stdout') return 1;
  if (path === '/dev/stderr') return 2;
  const match = /^\/(?:dev\/fd|proc\/(?:self|thread-self|(\d+))\/fd)\/(\d+)$/.exec(path);
  if (match === null || (match[1] !== undefined && Number(match[1]) !== process.pid)) return undefined;
  return Number(match[2]);
}

/** Where a write to a path lands: a descriptor of this process, or a file (which may not exist yet), as lstat found it. */
type Target = { kind: 'descriptor'; fd: number } | { kind: 'file'; path: string; stats: Stats | undefined };

/**
 * Follows a path's symbolic links one at a time, as open() would, stopping at a descriptor of this process
 * (`/dev/stdout` links to `/proc/self/fd/1`, which links to whatever fd 1 is: a file opened for appending, a pipe) or
 * at what the last link names, which may not exist yet (a dangling link).
 */
async function resolveTarget(path: string): Promise<Target> {
  let current = resolve(path);
  for (let links = 0; links <= 40; links++) {
    const fd = ownDescriptor(current);
    if (fd !== undefined) return { kind: 'descriptor', fd };
    // The directory as the kernel walks it: /dev/fd is itself a link, to /proc/<pid>/fd.
    current = join(await realpath(dirname(current)), basename(current));
    const viaDirectory = ownDescriptor(current);
    if (viaDirectory !== undefined) return { kind: 'descriptor', fd: viaDirectory };
    let stats: Stats;
    try {
      stats = await lstat(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'file', path: current, stats: undefined };
      throw error;
    }
    if (!stats.isSymbolicLink()) return { kind: 'file', path: current, stats };
    current = resolve(dirname(current), await readlink(current));
  }
  throw Object.assign(new Error(`ELOOP: too many symbolic links, open '${path}'`), { code: 'ELOOP', errno: -40, syscall: 'open', path });
}

const writeToFd = promisify(write);

/**
 * Writes all of data to a descriptor this process already holds, at its own offset (appending, if it was opened so):
 * what `>&N` gives a shell's command. A pipe that another reader made non-blocking is waited on, not failed.
 */
async function writeDescriptor(fd: number, data: string): Promise<void> {
  const bytes = Buffer.from(data, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += (await writeToFd(fd, bytes, offset, bytes.length - offset, null)).bytesWritten;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await new Promise((wake) => setTimeout(wake, 10));
    }
  }
}

/**
 * Writes a file whole or not at all, as it will be after a crash too: a new file beside it, written and fsynced, then
 * renamed over it and the directory fsynced. A file that exists keeps its mode (an export kept 0600 stays 0600). A
 * symbolic link is written through, not replaced; a dangling one gets its target made, as a shell's `>` makes it.
 * Anything that is not a regular file is written to as it is: a device or a FIFO is opened, and `/dev/stdout`,
 * `/dev/fd/N` and the like are this process's own descriptors, written at their offset (`kb export -o /dev/stdout
 * >> log` appends, as `>&1` would; reopening or renaming over the file would lose what it held). Throws the system's
 * error, with nothing left beside the file.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  // A path that ends in a slash names a directory, as open() takes it: never a file of the name without the slash.
  if (path.endsWith('/')) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, open '${path}'`), { code: 'EISDIR', errno: -21, syscall: 'open', path });
  const target = await resolveTarget(path);
  if (target.kind === 'descriptor') return writeDescriptor(target.fd, data);
  const existing = target.stats;
  if (existing !== undefined && !existing.isFile()) return writeFile(target.path, data, 'utf8');
  const temporary = join(dirname(target.path), `.${basename(target.path)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
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
    await rename(temporary, target.path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(target.path));
}
