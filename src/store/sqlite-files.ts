import { closeSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { syncDirectory } from '../os/files.js';
import { identityRuns, processIdentity } from '../os/processes.js';

/**
 * The files of a kb database as the processes that use them see them (docs/contract.md, Files and start-up): which
 * kb.db, -wal and -shm a connection holds, whether kb.db holds every commit (`clean`), and which kb serve has it open.
 * SQLite finds a database's -wal and -shm by name, so a file deleted or replaced while a connection holds it splits the
 * database in two: the connection goes on writing into a file no one will open again, and another process opening the
 * names gets other files (and, with another -shm, no locking against the first). Each file is known by its device and
 * inode.
 */

export const SIDECAR_WAL = '-wal';
export const SIDECAR_SHM = '-shm';
/**
 * `kb.db-open`: beside kb.db from before a connection's first write until the database's last connection closes it
 * clean, naming the kb serve that holds it. SQLite keeps no trace of a database whose kb.db and -wal are both gone
 * (moved or deleted while kb serve ran, the server killed before it noticed): this file outlives them, and a data dir
 * that has it and no kb.db is refused, never given a new, empty database (sqlite-open.ts). Once kb serve has marked
 * kb.db in use, naming itself in it as its holder, the file says so on a second line (MARKED): a kb.db that names
 * another holder, or none, is then another database than the one that server acknowledged writes into.
 */
export const SIDECAR_OPEN = '-open';
const MARKED = 'marked';

/** What an `-open` file says: the kb serve it names (empty for a command's), and whether it marked kb.db in use. */
export function readOpenFile(path: string): { identity: string; marked: boolean } | undefined {
  let text: string;
  try {
    text = readFileSync(`${path}${SIDECAR_OPEN}`, 'utf8');
  } catch {
    return undefined;
  }
  const [identity = '', marked] = text.split('\n');
  return { identity: identity.trim(), marked: marked === MARKED };
}

/** The kb serve an `-open` file names when it still runs, or undefined (none named, or one that exited). */
export function openFileHolder(path: string): number | undefined {
  const holder = identityRuns(readOpenFile(path)?.identity ?? '');
  return holder !== undefined && holder.pid !== process.pid && holder.runs ? holder.pid : undefined;
}

/** Puts the `-open` file beside kb.db (kb serve names itself in it, `marked` once kb.db names it); true when this call made it. */
function markOpen(path: string, serving: boolean, marked = false): boolean {
  const file = `${path}${SIDECAR_OPEN}`;
  const made = statSync(file, { throwIfNoEntry: false }) === undefined;
  if (serving) writeFileSync(file, `${processIdentity()}\n${marked ? `${MARKED}\n` : ''}`, { mode: 0o600 });
  else closeSync(openSync(file, 'a', 0o600));
  if (made) syncDirectory(dirname(path));
  return made;
}

/** A file's identity, `device:inode`, or undefined when there is no file at the path. */
function fileId(path: string): string | undefined {
  const found = statSync(path, { throwIfNoEntry: false, bigint: true });
  return found === undefined ? undefined : `${found.dev}:${found.ino}`;
}

/** The files the database at `path` names now. */
export interface DatabaseFiles {
  db: string | undefined;
  wal: string | undefined;
  shm: string | undefined;
}

export function filesAt(path: string): DatabaseFiles {
  return { db: fileId(path), wal: fileId(`${path}${SIDECAR_WAL}`), shm: fileId(`${path}${SIDECAR_SHM}`) };
}

const NAMES: Record<keyof DatabaseFiles, string> = { db: '', wal: SIDECAR_WAL, shm: SIDECAR_SHM };

/** What became of the files a connection holds, as a sentence (`kb.db-wal was deleted`), or undefined when all are in place. */
export function moved(path: string, held: DatabaseFiles): { file: keyof DatabaseFiles; what: string } | undefined {
  const now = filesAt(path);
  for (const file of ['db', 'wal', 'shm'] as const) {
    if (now[file] === held[file]) continue;
    const name = `${path}${NAMES[file]}`;
    return { file, what: now[file] === undefined ? `${name} was deleted or moved away` : `${name} was replaced by another file` };
  }
  return undefined;
}

/** The kb serve that has a database open, as its meta row names it. */
export interface Holder extends DatabaseFiles {
  pid: number;
  /** The same process as processIdentity tells it from a later one of its pid (absent in a holder kb wrote before). */
  process?: string;
  /** Its data dir, resolved (realpath). */
  dir: string;
}

export function parseHolder(text: string | undefined): Holder | undefined {
  if (text === undefined) return undefined;
  try {
    const holder = JSON.parse(text) as Partial<Holder>;
    return typeof holder.pid === 'number' && typeof holder.dir === 'string' ? (holder as Holder) : undefined;
  } catch {
    return undefined;
  }
}

/** The holder when it is another process that still runs; a holder killed or stopped cleanly holds nothing. */
export function liveHolder(text: string | undefined): Holder | undefined {
  const holder = parseHolder(text);
  return holder !== undefined && holder.pid !== process.pid && identityRuns(holder.process ?? String(holder.pid))?.runs === true ? holder : undefined;
}

/** Marks a new database, or a copy, closed with everything in kb.db, held by no one. */
export const MARK_CLEAN = 'UPDATE meta SET clean = 1, holder = NULL WHERE id = 1';

/**
 * Marks a database closed with everything in kb.db: its last connection's last write. The holder stays named: a kb serve
 * killed between this and removing its `-open` file leaves a kb.db that names it, as the file does.
 */
export const MARK_CLOSED = 'UPDATE meta SET clean = 1 WHERE id = 1';

/** Copies the whole -wal into kb.db (and fsyncs it); false when another connection's read kept part of it back. */
export function checkpointWhole(db: Database.Database, mode: 'FULL' | 'TRUNCATE' = 'FULL'): boolean {
  const [row] = db.pragma(`wal_checkpoint(${mode})`) as { busy: number; log: number; checkpointed: number }[];
  return row !== undefined && row.busy === 0 && row.log === row.checkpointed;
}

/**
 * Marks kb.db in use before this connection writes anything it will acknowledge: clean = 0 in kb.db itself (the -wal
 * checkpointed into it), so that a kb.db whose -wal goes missing after a crash is refused, not served without its last
 * writes. kb serve also names itself and the files it holds (`holder`), for the processes that open the same names
 * beside it. Returns the files held, or undefined when the mark could not reach kb.db within `waitMs` (another
 * connection reads an older snapshot all that time).
 */
export function markInUse(db: Database.Database, path: string, dataDir: string, serving: boolean, waitMs: number): DatabaseFiles | undefined {
  const made = markOpen(path, serving);
  try {
    const held = filesAt(path);
    if (serving) {
      const holder: Holder = { pid: process.pid, process: processIdentity(), dir: realpathSync(dataDir), ...held };
      db.prepare('UPDATE meta SET clean = 0, holder = ? WHERE id = 1').run(JSON.stringify(holder));
    } else {
      db.prepare('UPDATE meta SET clean = 0 WHERE id = 1').run();
    }
    // A checkpoint meets another process's checkpoint (each opening or last-closing connection runs one) with SQLITE_BUSY
    // at once, without the busy handler: tried again until the busy timeout, as a write would wait.
    for (const deadline = Date.now() + waitMs; ; pause(CHECKPOINT_RETRY_MS)) {
      if (checkpointWhole(db)) {
        if (serving) markOpen(path, serving, true);
        return held;
      }
      if (Date.now() >= deadline) break;
    }
  } catch (error) {
    if (made) rmSync(`${path}${SIDECAR_OPEN}`, { force: true });
    throw error;
  }
  // A start refused leaves the data dir as it found it.
  if (made) rmSync(`${path}${SIDECAR_OPEN}`, { force: true });
  return undefined;
}

const CHECKPOINT_RETRY_MS = 10;

/** Blocks this thread for `ms` (opening and closing are synchronous, as better-sqlite3 is). */
export function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Closes a connection, marking kb.db clean when it is the database's last connection: then SQLite checkpoints the
 * -wal into kb.db and removes it. Whether it is the last is asked of SQLite's own locks: an exclusive lock on kb.db is
 * had only when no other connection (of any process) holds it open. A store that closes to reopen (sqlite-recover.ts)
 * keeps the `-open` file: if it cannot reopen, the file still tells a later start that a kb serve had kb.db in use, so
 * that kb.db deleted then is refused by name, not replaced by a new database.
 */
export function closeMarkingClean(db: Database.Database, reopening = false): void {
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN IMMEDIATE');
    db.exec(MARK_CLOSED);
    db.exec('COMMIT');
    // Under the exclusive lock, so that no connection opens between: kb.db holds everything, and no longer needs its mark.
    if (checkpointWhole(db, 'TRUNCATE') && !reopening) rmSync(`${db.name}${SIDECAR_OPEN}`, { force: true });
  } catch {
    // Another connection holds kb.db open: it stays marked in use, for that connection's last close to mark.
    if (db.inTransaction) db.exec('ROLLBACK');
  } finally {
    db.close();
  }
}
