import { accessSync, chmodSync, closeSync, constants, copyFileSync, linkSync, lstatSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describeSystemError } from '../os/errors.js';
import { makeDirectories, syncDirectory } from '../os/files.js';
import { identityRuns, processIdentity } from '../os/processes.js';
import { shellQuote } from '../os/shell.js';
import { StoreOpenError } from './errors.js';
import { APPLICATION_ID, migrate, SCHEMA_VERSION } from './migrations.js';
import { type DatabaseFiles, MARK_CLEAN, markInUse, pause } from './sqlite-files.js';
import { awaitHolder, awaitPutBack, copyLacks, freshStartSteps, moveAside, refuseHeldElsewhere, refuseLostDatabase, refuseLostLog, refuseReplacedInUse } from './sqlite-in-use.js';
import { logMismatch } from './sqlite-wal.js';

/**
 * Opening a kb database safely (docs/contract.md, Files and start-up): build a new one beside kb.db and link it into place,
 * refuse what cannot be trusted leaving every file untouched, and never let SQLite replay a sidecar file (-wal,
 * -journal) that another database wrote.
 */

export const DATABASE_FILE = 'kb.db';

/** SQLite's files beside a database, which belong to the database that wrote them. */
export const SIDECAR_SUFFIXES = ['-wal', '-shm', '-journal'] as const;

/** A database kb makes is readable and writable by its owner alone (as its data dir is 0700). */
export const DATABASE_MODE = 0o600;

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export function sqliteCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function describeOpenError(path: string, error: unknown): string {
  const code = sqliteCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'EROFS' || code?.startsWith('SQLITE_READONLY')) {
    return `cannot open ${path} for writing: ${reason}. kb serve needs to write its data dir: pick one on a writable filesystem.`;
  }
  if (code === 'EACCES' || code === 'EPERM' || code?.startsWith('SQLITE_CANTOPEN')) {
    return `cannot open ${path}: ${reason}. Check that the data dir exists and that you may read and write it.`;
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return `${path} is corrupt (${reason}). ${restore(path)}`;
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return `${path} is locked by another process (${reason}).`;
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    // A start copies the -wal into kb.db (markInUse): kb.db may grow by as much as the log holds.
    const log = statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    const room = log > 0 ? `: a start copies its -wal into it, which may need up to ${Math.ceil(log / 2 ** 20)} MiB more` : '';
    return `cannot open ${path}: the disk is full (${reason})${room}. Free space in the data dir and start again.`;
  }
  return `cannot open ${path}: ${reason}`;
}

/**
 * How to start empty beside a kb.db that cannot be used: every kb.db* file moved aside together, never kb.db alone
 * (its -wal would be refused, or replayed into the next database).
 */
function startEmpty(path: string): string {
  const dir = dirname(path);
  return `move every kb.db* file aside together to start empty: ${moveAside(dir, `${shellQuote(resolve(dir))}/kb.db*`)}`;
}

/** What to do with a database that cannot be used: said by every refusal of a damaged file. */
function restore(path: string): string {
  return `Restore it from a backup (\`kb serve backup\` makes one), or ${startEmpty(path)}.`;
}

/** The sidecar files beside the database at `path` (a dangling symlink counts: SQLite would follow it). */
function sidecarsOf(path: string): string[] {
  return SIDECAR_SUFFIXES.map((suffix) => `${path}${suffix}`).filter((file) => lstatSync(file, { throwIfNoEntry: false }) !== undefined);
}

/** Sidecar files whose database is missing: replayed into a new kb.db, they would bring back its data and tokens. */
function orphanRefusal(dataDir: string, path: string, sidecars: string[]): StoreOpenError {
  const names = sidecars.join(', ');
  const them = sidecars.length === 1 ? 'it is' : 'they are';
  return new StoreOpenError(
    `${names} ${sidecars.length === 1 ? 'is' : 'are'} left without ${path}: ${them} SQLite's record of a database that is gone, ` +
      'which SQLite would replay into a new one (bringing back its data and tokens). Nothing was changed.',
    freshStartSteps(dataDir),
  );
}

/** A rollback journal beside kb.db: kb's databases are in WAL mode from birth, so it was written by another one. */
function journalRefusal(dataDir: string, path: string): StoreOpenError {
  const journal = `${path}-journal`;
  return new StoreOpenError(
    `${journal} is not ${path}'s own (kb's databases never write a rollback journal): SQLite would roll it back onto ` +
      `${path}. Nothing was changed.`,
    `Move it aside: ${moveAside(dataDir, shellQuote(journal), '.stale')}. ${freshStartSteps(dataDir)}`,
  );
}

/**
 * Checks the file's header and size before SQLite touches it, so an empty, truncated or foreign file is refused
 * without a single byte written (opening it read-write would start a WAL and could rewrite the header).
 */
function inspectFile(path: string): void {
  const size = statSync(path).size;
  if (size === 0) {
    throw new StoreOpenError(`${path} is empty, so it is not a kb database. Nothing was changed: ${startEmpty(path)}.`);
  }
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 100 || !header.subarray(0, 16).equals(SQLITE_HEADER)) {
    throw new StoreOpenError(`${path} is not a kb database (no SQLite header). Nothing was changed: ${startEmpty(path)}.`);
  }
  // A write-ahead log with frames holds pages newer than the file, and SQLite replays it on open: a checkpoint cut
  // short (a full disk, a crash) can leave the header's page count ahead of the file, with every page still in the
  // log. Only a file with no log to recover from is judged by its size.
  if (walFrames(path)) return;
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pageCount = header.readUInt32BE(28);
  const changeCounter = header.readUInt32BE(24);
  const validFor = header.readUInt32BE(92);
  if (pageCount > 0 && changeCounter === validFor && size < pageCount * pageSize) {
    throw new StoreOpenError(`${path} is truncated (${size} bytes, its header says ${pageCount * pageSize}). ${restore(path)}`);
  }
}

/** Whether the database's -wal file holds frames (a WAL header is 32 bytes; each frame follows it). */
function walFrames(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 32;
  } catch {
    return false;
  }
}

/** Whether this process may write the directory or file at `target` (root may write anything: the owner's write bit counts). */
function unwritableReason(target: string): string | undefined {
  try {
    accessSync(target, constants.W_OK);
    return (statSync(target).mode & 0o200) === 0 ? 'it is read-only' : undefined;
  } catch (error) {
    const code = sqliteCode(error);
    return code === 'EROFS' ? 'it is on a read-only filesystem' : code === 'EACCES' || code === 'EPERM' ? 'you may not write it' : (error as Error).message;
  }
}

/**
 * Refuses, before SQLite opens anything, a database file or data dir that kb could read but not write: a read-only
 * filesystem, no write permission for us, or, since root may write anything, no write bit for the owner (someone
 * made it read-only on purpose).
 */
function refuseUnwritable(path: string, target: string, what: 'data dir' | 'database file'): void {
  const reason = unwritableReason(target);
  if (reason === undefined) return;
  throw new StoreOpenError(
    `cannot use ${path}: its ${what}${what === 'data dir' ? ` ${target}` : ''} cannot be written (${reason}). ` +
      'kb serve writes its database: make it writable (chmod u+w), or copy it to a writable data dir.',
  );
}

/** A name beside kb.db for a file this process builds or checks; removeAbandonedBuilds knows it by its pid. */
export function scratchPath(dir: string, kind: 'new' | 'check'): string {
  return join(dir, `.${DATABASE_FILE}.${processIdentity()}.${randomBytes(4).toString('hex')}.${kind}`);
}

/** Removes a scratch database and whatever SQLite made beside it. */
export function removeScratch(file: string): void {
  for (const name of [file, ...SIDECAR_SUFFIXES.map((suffix) => `${file}${suffix}`)]) rmSync(name, { force: true });
}

/**
 * Databases a killed process was building or checking (its pid is in the name, and gone). One may be a second name of
 * kb.db, if the process was killed between linking a new database into place and removing its build file
 * (createDatabase, sqlite-recover.ts): never used under that name, so removing it leaves kb.db whole.
 */
function abandonedBuilds(dir: string): string[] {
  return readdirSync(dir).filter((name) => {
    const owner = /^\.kb\.db\.(\d+(?:@\d+)?)\.[0-9a-f]+\.(?:new|check)(?:-wal|-shm|-journal)?$/.exec(name)?.[1];
    return owner !== undefined && identityRuns(owner)?.runs === false;
  });
}

export function removeAbandonedBuilds(dir: string): void {
  for (const name of abandonedBuilds(dir)) rmSync(join(dir, name), { force: true });
}

/** kb.db's links but those abandoned builds (above): the names it has that something could open. */
function namesOf(dataDir: string, path: string): number {
  const found = lstatSync(path);
  if (found.nlink === 1) return 1;
  const abandoned = abandonedBuilds(dataDir).filter((name) => lstatSync(join(dataDir, name), { throwIfNoEntry: false })?.ino === found.ino);
  return found.nlink - abandoned.length;
}

/**
 * Makes a new database in the data dir, so that the file and its schema appear together or not at all: it is built
 * under a temporary name beside kb.db and then linked into place. link() never replaces a file, so of several
 * processes creating the same data dir at once exactly one database is kept; the others open it.
 */
function createDatabase(dataDir: string, path: string): void {
  removeAbandonedBuilds(dataDir);
  const building = scratchPath(dataDir, 'new');
  try {
    const db = new Database(building);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrate(db);
      db.exec(MARK_CLEAN);
    } finally {
      db.close();
    }
    // The owner's alone, whatever the umask or the data dir's own mode: SQLite gives its -wal and -shm files the
    // database's mode.
    chmodSync(building, DATABASE_MODE);
    try {
      linkSync(building, path);
    } catch (error) {
      if (sqliteCode(error) !== 'EEXIST') throw error;
    }
    syncDirectory(dataDir);
  } catch (error) {
    throw new StoreOpenError(`cannot create the database ${path}: ${(error as Error).message}`);
  } finally {
    removeScratch(building);
  }
}


/**
 * Refuses a -wal with frames that is not kb.db's own (see logMismatch), naming it and the steps that work. The files
 * are read while a server may be writing: a checkpoint that restarts the log between the two reads can make them
 * disagree, so a mismatch is looked at again before it is believed (a log that is not kb.db's stays one).
 */
function verifyLog(dataDir: string, path: string): void {
  let reason: string | undefined;
  let failure: unknown;
  for (let look = 0; look < 3; look++) {
    // None, or gone: the last connection of another process checkpoints the log and deletes it as it closes.
    if (!walFrames(path)) return;
    try {
      reason = logMismatch(path);
    } catch (error) {
      // Deleted between the look and the read (as above): look again.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        failure = error;
        continue;
      }
      throw new StoreOpenError(`cannot check ${path}-wal, the write-ahead log of ${path}: ${describeSystemError(error)}.`);
    }
    if (reason === undefined) return;
  }
  if (reason === undefined) {
    throw new StoreOpenError(`cannot check ${path}-wal, the write-ahead log of ${path}: ${describeSystemError(failure)}.`);
  }
  const log = `${path}-wal`;
  const strays = [log, `${path}-shm`].filter((file) => lstatSync(file, { throwIfNoEntry: false }) !== undefined);
  throw new StoreOpenError(
    `${log} is not the write-ahead log of ${path} (${reason}): SQLite would replay it onto kb.db. Nothing was changed.`,
    `If kb.db was put there by hand (a restored backup), the log is left from the database it replaced: move it aside ` +
      `with its -shm, ${moveAside(dataDir, strays.map(shellQuote).join(' '), '.stale')}, and start again (keep them ` +
      `with that database's kb.db if you still need its last writes). ${freshStartSteps(dataDir)}`,
  );
}

/**
 * Reads the whole file once, read-only, before anything may write to it (its -wal checked first). Even a read-only connection to a WAL-mode file creates its -wal and -shm files; when the file is
 * refused, those it created are removed again.
 */
function inspectReadOnly(file: string, busyTimeout: number, path = file): void {
  const created = [`${file}-wal`, `${file}-shm`].filter((name) => lstatSync(name, { throwIfNoEntry: false }) === undefined);
  let db: Database.Database | undefined;
  let refused = true;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeout });
    const appId = db.pragma('application_id', { simple: true }) as number;
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number };
    if (appId !== APPLICATION_ID && !(appId === 0 && tables.n === 0)) {
      throw new StoreOpenError(`${path} is an SQLite database, but not a kb one. Move it aside or pick another --data-dir.`);
    }
    if (version > SCHEMA_VERSION) {
      throw new StoreOpenError(
        `${path} has schema version ${version}, newer than this kb supports (${SCHEMA_VERSION}). Upgrade kb to open it.`,
      );
    }
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new StoreOpenError(`${path} is corrupt (${String(check)}). ${restore(path)}`);
    refused = false;
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(describeOpenError(path, error));
  } finally {
    db?.close();
    if (refused) for (const name of created) rmSync(name, { force: true });
  }
}

export interface OpenOptions {
  /** Milliseconds to wait for another process's write lock (e.g. `kb serve token create` beside a server). */
  busyTimeoutMs?: number;
  /** Opened by kb serve, which names itself in the database as its holder (sqlite-files.ts); else a command beside it. */
  serving?: boolean;
  /** Opened again by the store that held it, after putting everything into kb.db (sqlite-recover.ts). */
  reopening?: boolean;
}

/** The name of a database kb serve saved because kb.db was replaced while it ran (sqlite-recover.ts). */
export function savedName(stamp: string): string {
  return `kb-saved-${stamp}.db`;
}

/** Refuses to start while a database saved by sqlite-recover.ts waits beside kb.db to be chosen or set aside. */
function refuseSaved(dataDir: string, path: string): void {
  const saved = readdirSync(dataDir).filter((name) => /^kb-saved-.*\.db$/.test(name)).sort();
  const last = saved[saved.length - 1];
  if (last === undefined) return;
  const file = shellQuote(join(resolve(dataDir), last));
  const dir = shellQuote(resolve(dataDir));
  throw new StoreOpenError(
    `${path} was replaced while kb serve ran, and that server saved the database it held as ${join(dataDir, last)}, with every ` +
      `write it acknowledged (${path} may not have them). Nothing was changed.`,
    `To keep the saved one: ${moveAside(dataDir, `${dir}/kb.db*`, '.replaced')} && mv ${file} ${dir}/kb.db. ` +
      `To keep the current kb.db: ${moveAside(dataDir, file, '.saved')}.`,
  );
}

/**
 * Looks at kb.db in the data dir, in this order: its sidecar files first, then the file, so that a sidecar seen with
 * no kb.db after it is one whose database is truly gone (another process creating kb.db links it before SQLite
 * makes any sidecar).
 */
function lookAt(dataDir: string, path: string): 'file' | 'none' {
  const sidecars = sidecarsOf(path);
  // One look: a second (existsSync) could see the file another process has just linked into place, and call it
  // "not a file".
  let found: 'file' | 'other' | 'none' = 'none';
  try {
    found = statSync(path).isFile() ? 'file' : 'other';
  } catch (error) {
    if (sqliteCode(error) !== 'ENOENT') throw new StoreOpenError(describeOpenError(path, error));
  }
  if (found === 'other') throw new StoreOpenError(`${path} is not a file. Move it aside, or pick another --data-dir.`);
  if (found === 'none' && sidecars.length > 0) throw orphanRefusal(dataDir, path, sidecars);
  if (found === 'file' && sidecars.includes(`${path}-journal`)) throw journalRefusal(dataDir, path);
  return found;
}

/**
 * Refuses a kb.db reached through more than one name (SQLite's "How To Corrupt An SQLite Database File": "Multiple links to the same file"): a symlink, or a file with a
 * second hard link. SQLite finds the -wal and -shm by the name it was given, so each name would have its own log and
 * locks, and writes through one name would be lost to the other. A new database's build file is linked for an instant
 * as it is put into place (createDatabase): a second link is looked at again for a moment before it is believed, and
 * one left by a process killed in that instant is not counted (the start removes it once it has refused nothing).
 */
function refuseSecondName(dataDir: string, path: string): void {
  const found = lstatSync(path);
  if (found.isSymbolicLink()) {
    throw new StoreOpenError(
      `${path} is a symbolic link: SQLite would keep its -wal and locks under another name than the file's. Nothing was changed.`,
      `Serve the data dir that holds the file itself (kb serve --data-dir DIR), or replace the link with a copy taken by \`kb serve backup\`.`,
    );
  }
  let names = namesOf(dataDir, path);
  for (let look = 0; names > 1 && look < 20; look++) {
    pause(50);
    names = namesOf(dataDir, path);
  }
  if (names > 1) {
    throw new StoreOpenError(
      `${path} has ${names} hard links: the same database under other names would get a -wal and locks of its own, ` +
        'and writes through one name would be lost to the other. Nothing was changed.',
      `Find the other names (find / -xdev -samefile ${shellQuote(resolve(path))}) and remove them, or serve a copy taken by \`kb serve backup\`. ` +
        freshStartSteps(dataDir),
    );
  }
}

/** An open database and the files it holds (sqlite-files.ts). */
export interface OpenDatabase {
  db: Database.Database;
  held: DatabaseFiles;
}

/**
 * Opens the database in dataDir for kb serve, creating it (and the dir) when absent, or throws StoreOpenError leaving
 * every file untouched. An existing file is never initialised over: one that is empty, foreign, damaged, newer or
 * read-only is refused, and so is a sidecar file that is not its own, a kb.db under a second name, one held by a kb
 * serve through files no longer at its names, and one not closed cleanly whose -wal is gone.
 */
export function openDatabase(dataDir: string, options: OpenOptions = {}): OpenDatabase {
  try {
    makeDirectories(dataDir, 0o700);
  } catch (error) {
    throw new StoreOpenError(`cannot create data dir ${dataDir}: ${(error as Error).message}`);
  }
  const path = join(dataDir, DATABASE_FILE);
  refuseSaved(dataDir, path);
  awaitPutBack(path);
  if (lookAt(dataDir, path) === 'none') {
    refuseLostDatabase(dataDir, path);
    refuseUnwritable(path, dataDir, 'data dir');
    createDatabase(dataDir, path);
  }
  const busyTimeout = options.busyTimeoutMs ?? 5000;
  try {
    inspectFile(path);
    refuseUnwritable(path, dataDir, 'data dir');
    refuseUnwritable(path, path, 'database file');
    refuseSecondName(dataDir, path);
    awaitHolder(dataDir, path, options.serving === true);
    verifyLog(dataDir, path);
    if (options.reopening !== true) {
      refuseLostLog(dataDir, path);
      refuseReplacedInUse(dataDir, path);
    }
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(describeOpenError(path, error));
  }
  inspectReadOnly(path, busyTimeout);
  removeAbandonedBuilds(dataDir);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { timeout: busyTimeout, fileMustExist: true });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    const held = markInUse(db, path, dataDir, options.serving === true, busyTimeout);
    if (held === undefined) throw new StoreOpenError(`${path} is busy: another process kept its -wal from being checkpointed for ${busyTimeout / 1000} s. Try again in a moment.`);
    return { db, held };
  } catch (error) {
    db?.close();
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(describeOpenError(path, error));
  }
}

/** A source database opened for reading, and what to do once it has been read. */
export interface SourceDatabase {
  db: Database.Database;
  close(): void;
  /** Said when what is copied is not every write the database acknowledged: a kb.db whose -wal was lost. */
  warning?: string;
}

/**
 * Opens the database in dataDir read-only, to be copied (docs/contract.md, Backup): nothing is created, a data dir
 * with no database is an error, and the same refusals as kb serve's apply, but a read-only file, data dir or
 * filesystem is read. A copy it needs (see atRest) goes to the directory `scratchDir` makes, never the data dir.
 *
 * A read-only connection to a WAL-mode database makes its -wal and -shm files when they are missing, and cannot
 * remove them; SQLite removes them as it does for every last connection, under its locks: once the copy is taken, a
 * connection that never writes is opened and closed. On a data dir kb may not write, the file is opened as it is.
 */
export function openSourceDatabase(dataDir: string, scratchDir: () => string): SourceDatabase {
  const path = join(dataDir, DATABASE_FILE);
  const dir = statSync(dataDir, { throwIfNoEntry: false });
  if (dir !== undefined && !dir.isDirectory()) throw new StoreOpenError(`${dataDir} is not a directory: pick the server's data dir.`);
  if (dir === undefined || lookAt(dataDir, path) === 'none') {
    throw new StoreOpenError(
      `There is no kb database in ${dataDir} (no ${path}): nothing was backed up, and nothing was created.`,
      'Name the data dir of the server with --data-dir (or KB_DATA_DIR).',
    );
  }
  const busyTimeout = 5000;
  try {
    inspectFile(path);
    refuseSaved(dataDir, path);
    refuseHeldElsewhere(dataDir, path, undefined, true);
    refuseReplacedInUse(dataDir, path, false);
    // A -wal or -shm of a running server deleted or replaced: SQLite would open new ones beside kb.db (and an empty
    // -wal would then hide the lost one from the next start). The server reopens its files within a second.
    awaitHolder(dataDir, path, false);
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(describeOpenError(path, error));
  }
  // The refusal of kb serve's start offers a backup as the way to serve such a kb.db knowingly: copied, and said.
  const warning = copyLacks(path);
  const writable = unwritableReason(dataDir) === undefined;
  const created = writable && sidecarsOf(path).length === 0;
  // Read from a copy, too: SQLite would make an empty -wal beside it, and kb.db would no longer look as it is.
  if (warning !== undefined) return { ...atRest(path, scratchDir(), busyTimeout), warning };
  if (!writable && sidecarsOf(path).length === 0) return atRest(path, scratchDir(), busyTimeout);
  verifyLog(dataDir, path);
  inspectReadOnly(path, busyTimeout);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeout });
  } catch (error) {
    throw new StoreOpenError(describeOpenError(path, error));
  }
  return {
    db,
    warning,
    close: () => {
      db.close();
      if (!created) return;
      try {
        // SQLite opens the log at the first read, and removes it (and the -shm) when its last connection closes.
        const tidy = new Database(path, { fileMustExist: true, timeout: busyTimeout });
        tidy.pragma('user_version');
        tidy.close();
      } catch {
        // Left for the next connection to remove: empty files, which belong to kb.db.
      }
    },
  };
}

/**
 * A database in a data dir kb may not write (a read-only directory or filesystem), with no sidecar file: no process
 * has it open (SQLite makes the -wal of a WAL-mode database with its first connection), and SQLite could not open it
 * read-only, since it would have to make that -wal. It is read from a copy in scratchDir.
 */
function atRest(path: string, scratchDir: string, busyTimeout: number): SourceDatabase {
  const copy = scratchPath(scratchDir, 'check');
  try {
    copyFileSync(path, copy, constants.COPYFILE_FICLONE);
    chmodSync(copy, DATABASE_MODE);
    inspectReadOnly(copy, busyTimeout, path);
    const db = new Database(copy, { readonly: true, fileMustExist: true, timeout: busyTimeout });
    return {
      db,
      close: () => {
        db.close();
        removeScratch(copy);
      },
    };
  } catch (error) {
    removeScratch(copy);
    if (error instanceof StoreOpenError) throw error;
    throw new StoreOpenError(describeOpenError(path, error));
  }
}
