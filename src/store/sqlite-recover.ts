import { chmodSync, linkSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeDirectories, syncDirectory } from '../os/files.js';
import { checkpointWhole, closeMarkingClean, type DatabaseFiles, filesAt, MARK_CLOSED, SIDECAR_SHM, SIDECAR_WAL } from './sqlite-files.js';
import { DATABASE_MODE, removeScratch, savedName, scratchPath, sqliteCode } from './sqlite-open.js';

/**
 * What kb serve does when kb.db, its -wal or its -shm is no longer the file it holds (docs/contract.md, Files and
 * start-up; SQLite's "How To Corrupt An SQLite Database File": "Unlinking or renaming a database file while in use"): a file deleted or renamed stays whole
 * while it is open, so everything the connection committed is first checkpointed into the kb.db it holds, then
 * - a -wal or -shm deleted or replaced: kb.db holds everything; another file at a sidecar's name is set aside (it is
 *   not this database's), and the store reopens with new ones;
 * - kb.db deleted or moved away (even with its data dir): a copy of the database it held is put back in its place, and
 *   the store reopens it;
 * - kb.db replaced by another file: neither is thrown away. The database it held is saved beside it (savedName) and
 *   writes are refused from then on; the next start refuses by name until one of the two is chosen.
 */

export type Recovery =
  /** Everything is in a kb.db at its name again, and the old connection is closed: open it again. */
  | { kind: 'reopen'; said: string }
  /** Nothing could be done yet (another process's read holds the checkpoint back): try again at the next write. */
  | { kind: 'later'; said: string }
  /** Writes cannot be kept any more: refuse them until a restart. */
  | { kind: 'lost'; said: string };

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Moves a file found at a sidecar's name that is not the one the connection holds out of SQLite's way. */
function setAsideStrangers(path: string, held: DatabaseFiles): string[] {
  const now = filesAt(path);
  const moved: string[] = [];
  for (const [file, suffix] of [['wal', SIDECAR_WAL], ['shm', SIDECAR_SHM]] as const) {
    if (now[file] === undefined || now[file] === held[file]) continue;
    const aside = `${path}${suffix}.stale-${stamp()}`;
    renameSync(`${path}${suffix}`, aside);
    moved.push(aside);
  }
  return moved;
}

/**
 * A whole copy of the connection's database at `file`, marked closed cleanly (it needs no -wal), still naming this kb
 * serve as its holder, as its `-open` file does. The copy is the
 * database's pages as they are, page for page (SQLite's serialize), not a VACUUM INTO, which lays them out anew: the log
 * of the connection it comes from, left beside it if kb serve is killed before that connection checkpoints, then
 * replays onto it as onto the file it came from (the accident model found a VACUUM INTO copy corrupted by it).
 */
function copyOut(db: Database.Database, file: string): void {
  writeFileSync(file, db.serialize(), { mode: DATABASE_MODE, flag: 'wx' });
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.exec(MARK_CLOSED);
  } finally {
    copy.close();
  }
  chmodSync(file, DATABASE_MODE);
}

export function recoverFiles(db: Database.Database, dataDir: string, gone: { file: keyof DatabaseFiles; what: string }, held: DatabaseFiles): Recovery {
  const path = db.name;
  if (!checkpointWhole(db, 'TRUNCATE')) {
    return { kind: 'later', said: `${gone.what}: its writes could not be checkpointed yet (another process is reading); writes wait` };
  }
  if (gone.file !== 'db') {
    const aside = setAsideStrangers(path, held);
    closeMarkingClean(db, true);
    const moved = aside.length > 0 ? `; the file found in its place was moved to ${aside.join(', ')}` : '';
    return { kind: 'reopen', said: `${gone.what} while kb serve ran: every write it acknowledged was checkpointed into ${path}, which it reopened${moved}` };
  }
  makeDirectories(dataDir, 0o700);
  const copy = scratchPath(dataDir, 'new');
  try {
    copyOut(db, copy);
    try {
      // link() never replaces a file: a kb.db put there meanwhile is kept, as below.
      linkSync(copy, path);
    } catch (error) {
      if (sqliteCode(error) !== 'EEXIST') throw error;
    }
    if (filesAt(path).db !== filesAt(copy).db) {
      const saved = join(dataDir, savedName(stamp()));
      renameSync(copy, saved);
      syncDirectory(dataDir);
      return {
        kind: 'lost',
        said:
          `${path} was replaced by another file while kb serve ran: the database it held, with every write it acknowledged, ` +
          `is saved as ${saved}; writes are refused until kb serve restarts, and the next start asks which to keep`,
      };
    }
    syncDirectory(dataDir);
    setAsideStrangers(path, held);
    closeMarkingClean(db, true);
    return { kind: 'reopen', said: `${gone.what} while kb serve ran: a copy of the database it held, with every write it acknowledged, was put back as ${path} and reopened` };
  } catch (error) {
    return { kind: 'lost', said: `${gone.what} while kb serve ran, and the database it held could not be put back: ${(error as Error).message}; writes are refused` };
  } finally {
    removeScratch(copy);
  }
}
