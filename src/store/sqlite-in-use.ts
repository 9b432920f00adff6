import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { shellQuote } from '../os/shell.js';
import { StoreOpenError } from './errors.js';
import { type Holder, liveHolder, moved, openFileHolder, pause, SIDECAR_OPEN } from './sqlite-files.js';
import { fileMeta } from './sqlite-wal.js';

/**
 * A database in use whose files are not where its kb serve left them (docs/contract.md, Files and start-up): what a
 * start or a command beside a running server waits for, and what it refuses by name. SQLite cannot tell a kb.db that
 * lost its log or its place from one at rest; the marks kb keeps (`clean` and `holder` in kb.db, the `-open` file
 * beside it, see sqlite-files.ts) can.
 */

/** `mkdir ASIDE && mv FILES ASIDE/`, the step that moves files aside without replacing anything already there. */
export function moveAside(dir: string, files: string, suffix = '.old'): string {
  const aside = shellQuote(`${resolve(dir)}${suffix}`);
  return `mkdir ${aside} && mv ${files} ${aside}/`;
}

/** The exact steps to start afresh, or to serve a backup: the refusals and the README say the same. */
export function freshStartSteps(dataDir: string): string {
  return (
    `To start afresh, move every kb.db* file aside together: ${moveAside(dataDir, `${shellQuote(resolve(dataDir))}/kb.db*`)}. ` +
    "To restore a backup, serve the backup's directory (kb serve --data-dir BACKUP_DIR), or copy its kb.db alone into an empty data dir."
  );
}

/**
 * Refuses a kb.db that a running kb serve holds through another data dir (the same file under two names): this name's
 * -wal is not that server's, so a server here would lose one side's writes, and a copy through it would miss the
 * server's latest ones.
 */
export function refuseHeldElsewhere(dataDir: string, path: string, holder = liveHolder(fileMeta(path)?.holder), copying = false): void {
  if (holder === undefined || holder.dir === realpathSync(dataDir)) return;
  const why = copying
    ? 'its latest writes are in that data dir\'s -wal, which a copy through this name would miss. Nothing was copied.'
    : 'the same database under two names would have two -wal files, and one server\'s writes would be lost. Nothing was changed.';
  throw new StoreOpenError(
    `${path} is open already by kb serve (pid ${holder.pid}) of the data dir ${holder.dir}: ${why}`,
    copying ? `Back up that data dir: kb serve backup DEST --data-dir ${shellQuote(holder.dir)}` : `Stop that server, or serve ${holder.dir} itself.`,
  );
}

/**
 * Waits for a kb serve that holds this database with files no longer at its names (a -wal or -shm deleted or replaced
 * while it runs) to reopen them, as it does within a second; refuses when it does not, and, for kb serve, refuses a
 * database another kb serve holds through another data dir (the same file under two names).
 */
export function awaitHolder(dataDir: string, path: string, serving: boolean): void {
  let last: { holder: Holder; what: string } | undefined;
  for (let look = 0; look < 40; look++) {
    const holder = liveHolder(fileMeta(path)?.holder);
    if (holder === undefined) return;
    if (serving) refuseHeldElsewhere(dataDir, path, holder);
    const gone = moved(path, holder);
    if (gone === undefined) return;
    last = { holder, what: gone.what };
    pause(100);
  }
  if (last === undefined) return;
  throw new StoreOpenError(
    `kb serve (pid ${last.holder.pid}) holds this database, but ${last.what} while it ran: what this command wrote would not ` +
      'reach the server. Nothing was changed.',
    'The server reopens its files within a second of noticing; try again in a moment, or stop the server first.',
  );
}

/**
 * kb.db moved or deleted while kb serve runs: the server puts a copy back within a second of noticing (sqlite-recover.ts).
 * A command beside it that finds no kb.db, and the `-open` file (sqlite-files.ts) naming a kb serve that runs, waits for
 * that, rather than refuse the -wal left without kb.db or make a database of its own.
 */
export function awaitPutBack(path: string): void {
  for (let look = 0; look < 40 && !existsSync(path) && openFileHolder(path) !== undefined; look++) pause(100);
}

/**
 * A data dir with no kb.db but its `-open` file lost a database in use (kb.db moved or deleted with its -wal while kb
 * serve ran, the server killed before it noticed): refused, not given a new, empty database in place of the one that
 * held the writes.
 */
export function refuseLostDatabase(dataDir: string, path: string): void {
  if (lstatSync(`${path}${SIDECAR_OPEN}`, { throwIfNoEntry: false }) === undefined) return;
  throw new StoreOpenError(
    `${path} is gone, and ${path}${SIDECAR_OPEN} says it was in use and never closed cleanly: it was moved or deleted ` +
      `while kb serve ran, and the writes it acknowledged went with it. Nothing was changed.`,
    `Put kb.db back (with its -wal, if that was moved too) and start again. ${freshStartSteps(dataDir)}`,
  );
}

/** Whether kb.db was not closed cleanly (a crash, kill -9) and its -wal is gone, with no kb serve holding it. */
export function lostLog(path: string): boolean {
  const lost = () =>
    fileMeta(path)?.clean === false && lstatSync(`${path}-wal`, { throwIfNoEntry: false }) === undefined && liveHolder(fileMeta(path)?.holder) === undefined;
  if (!lost()) return false;
  // Another process's last close marks kb.db clean, then removes the -wal: read between the two, kb.db looks crashed for
  // an instant. A crashed kb.db looks the same each time: it is looked at again for a moment before it is believed.
  for (let look = 0; look < 5; look++) {
    pause(50);
    if (!lost()) return false;
  }
  return true;
}

/**
 * Refuses a kb.db that was not closed cleanly (a crash, kill -9) and whose -wal is gone: the writes it acknowledged last
 * were in that log, and serving kb.db alone would forget them (SQLite's "How To Corrupt An SQLite Database File": "Deleting a hot journal").
 */
export function refuseLostLog(dataDir: string, path: string): void {
  if (!lostLog(path)) return;
  throw new StoreOpenError(
    `${path} was not closed cleanly (its server was killed, or it was copied alone from a data dir in use) and its ` +
      `write-ahead log ${path}-wal is not beside it: the last writes it acknowledged are in that log. Nothing was changed.`,
    `Put the -wal back beside kb.db (where it was moved, or the copy it came with) and start again. To serve kb.db without ` +
      `those writes, back it up and serve the copy: kb serve backup ${shellQuote(`${resolve(dataDir)}.recovered`)} --data-dir ` +
      `${shellQuote(resolve(dataDir))}, then kb serve --data-dir ${shellQuote(`${resolve(dataDir)}.recovered`)}.`,
  );
}
