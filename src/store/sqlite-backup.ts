import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describeSystemError } from '../os/errors.js';
import { makeDirectories, syncDirectory } from '../os/files.js';
import { StoreOpenError } from './errors.js';
import { APPLICATION_ID, migrate, newLineage } from './migrations.js';
import { DATABASE_FILE, DATABASE_MODE, openSourceDatabase, removeAbandonedBuilds, removeScratch, scratchPath, sqliteCode } from './sqlite-open.js';

/** Backups go into a directory of their own: said by every refusal of a DEST. */
const NEW_DIRECTORY = 'Name a new or empty directory.';

/**
 * Refuses a DEST that holds any kb.db* file (docs/contract.md, Backup), before anything is written: a -wal or -shm
 * there would be replayed onto the copy, and a kb.db is never replaced. Also one that is not a directory.
 */
function checkDestination(destDir: string): void {
  let found;
  try {
    found = statSync(destDir, { throwIfNoEntry: false });
  } catch (error) {
    throw new StoreOpenError(`cannot back up to ${destDir}: ${describeSystemError(error)}.`, NEW_DIRECTORY);
  }
  if (found === undefined) return;
  if (!found.isDirectory()) throw new StoreOpenError(`cannot back up to ${destDir}: it is not a directory.`, NEW_DIRECTORY);
  let names: string[];
  try {
    names = readdirSync(destDir);
  } catch (error) {
    throw new StoreOpenError(`cannot back up to ${destDir}: cannot read it, ${describeSystemError(error)}.`, NEW_DIRECTORY);
  }
  const taken = names.filter((name) => name.startsWith(DATABASE_FILE)).sort();
  if (taken.length === 0) return;
  const files = taken.map((name) => join(destDir, name)).join(', ');
  throw new StoreOpenError(
    `${destDir} already holds ${files}: a backup goes into a directory with no kb.db* file at all (a backup never ` +
      "replaces a database, and SQLite would replay another database's -wal onto the copy). Nothing was written.",
    NEW_DIRECTORY,
  );
}

function makeDestination(destDir: string): void {
  try {
    makeDirectories(destDir, 0o700);
  } catch (error) {
    throw new StoreOpenError(`cannot create the directory ${destDir}: ${describeSystemError(error)}.`, NEW_DIRECTORY);
  }
}

/**
 * Copies the database as of one moment into destDir with SQLite's online backup (writers, of this process or another,
 * go on meanwhile), so that `kb serve --data-dir DEST` serves the copy. The copy gets a lineage of its own, is
 * checked, then linked into place: it appears whole or not at all, and an existing database is never replaced.
 */
async function copyDatabase(source: Database.Database, destDir: string): Promise<{ path: string; bytes: number }> {
  const target = join(destDir, DATABASE_FILE);
  removeAbandonedBuilds(destDir);
  const building = scratchPath(destDir, 'new');
  try {
    // After the first step, copy all that is left in one step: a step reads one snapshot, so another process's
    // commits cannot make it start over again and again.
    await source.backup(building, { progress: ({ remainingPages }) => Math.max(remainingPages, 100) });
    const copy = new Database(building, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = WAL');
      if (copy.pragma('application_id', { simple: true }) !== APPLICATION_ID) throw new Error('the copy is not a kb database');
      migrate(copy);
      newLineage(copy);
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy does not check out (${String(check)})`);
    } finally {
      copy.close();
    }
    chmodSync(building, DATABASE_MODE);
    const fd = openSync(building, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(building, target);
    syncDirectory(destDir);
    return { path: target, bytes: statSync(target).size };
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    if (sqliteCode(error) === 'EEXIST') throw new StoreOpenError(`${target} exists already: a backup never replaces a database.`, NEW_DIRECTORY);
    const reason = sqliteCode(error)?.startsWith('E') ? describeSystemError(error) : (error as Error).message;
    throw new StoreOpenError(`cannot back up to ${target}: ${reason}.`);
  } finally {
    removeScratch(building);
  }
}

/** Backs up the database of an open store into destDir (a new directory, or one with no kb.db* file). */
export function backupDatabase(source: Database.Database, destDir: string): Promise<{ path: string; bytes: number }> {
  checkDestination(destDir);
  makeDestination(destDir);
  return copyDatabase(source, destDir);
}

/**
 * Backs up the database of a data dir into destDir, reading it read-only: a data dir with no database is an error that
 * creates nothing (DEST included), and a read-only data dir or filesystem can be backed up.
 */
export async function backupDataDir(dataDir: string, destDir: string): Promise<{ path: string; bytes: number; warning?: string }> {
  checkDestination(destDir);
  let made = false;
  const scratchDir = () => {
    if (!made) makeDestination(destDir);
    made = true;
    return destDir;
  };
  try {
    const source = openSourceDatabase(dataDir, scratchDir);
    try {
      const copy = await copyDatabase(source.db, scratchDir());
      return source.warning === undefined ? copy : { ...copy, warning: source.warning };
    } finally {
      source.close();
    }
  } catch (error) {
    // A DEST made only for scratch copies is removed again (rmdir: only while it is empty).
    if (made) {
      try {
        rmdirSync(destDir);
      } catch {
        // not empty, or gone: left as it is
      }
    }
    throw error;
  }
}
