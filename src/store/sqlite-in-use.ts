import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { shellQuote } from '../os/shell.js';
import { StoreOpenError } from './errors.js';
import { identityRuns } from '../os/processes.js';
import { type Holder, liveHolder, moved, openFileHolder, parseHolder, pause, readOpenFile, SIDECAR_OPEN } from './sqlite-files.js';
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
      `those writes, ${serveKnowingly(dataDir)}`,
  );
}

/**
 * The kb serve whose `-open` file lies beside kb.db, which had marked its kb.db in use, when kb.db names another holder
 * or none: kb.db was replaced while that server ran or after it was killed (a backup or another database moved into
 * place), and the writes it acknowledged were in the file replaced. Found by the accident model (seed 1587608240, path
 * 7): kb.db replaced by its own backup while kb serve ran, its -wal deleted, the server killed before it noticed, and
 * the backup, marked closed cleanly, served without the write acknowledged after it.
 */
export function replacedInUse(path: string): { pid: number; runs: boolean } | undefined {
  const open = readOpenFile(path);
  const server = open?.marked === true ? identityRuns(open.identity) : undefined;
  if (server === undefined || server.pid === process.pid) return undefined;
  const holder = parseHolder(fileMeta(path)?.holder);
  const same = holder !== undefined && holder.pid === server.pid && (holder.process === undefined || holder.process === open?.identity);
  return same ? undefined : server;
}

/** Why what a copy of kb.db holds is not every write it acknowledged, or undefined: its -wal lost, or kb.db replaced. */
export function copyLacks(path: string): string | undefined {
  if (lostLog(path)) {
    return `${path} was not closed cleanly and its write-ahead log ${path}-wal is not beside it: the copy holds ${path} alone, without the last writes that log held.`;
  }
  const server = replacedInUse(path);
  if (server === undefined || server.runs) return undefined;
  return `${path} is not the database kb serve (pid ${server.pid}) had in use here, which was not closed cleanly: the copy holds this ${path}, without the writes that server acknowledged.`;
}

/** The steps that serve a kb.db knowingly without writes it lacks: a backup of it, then the backup served. */
function serveKnowingly(dataDir: string): string {
  const recovered = shellQuote(`${resolve(dataDir)}.recovered`);
  return `back it up and serve the copy: kb serve backup ${recovered} --data-dir ${shellQuote(resolve(dataDir))}, then kb serve --data-dir ${recovered}.`;
}

/**
 * Refuses a kb.db that is not the database the kb serve named by its `-open` file had in use (replacedInUse). A copy
 * (`atRest`) is refused only while that server runs: of a kb.db replaced after its server was killed, a backup is the
 * way the refusal offers to serve it knowingly, and copyLacks says what it lacks.
 */
export function refuseReplacedInUse(dataDir: string, path: string, atRest = true): void {
  const server = replacedInUse(path);
  if (server === undefined || (!server.runs && !atRest)) return;
  if (server.runs) {
    throw new StoreOpenError(
      `${path} is not the database kb serve (pid ${server.pid}) holds: it was replaced while the server ran, and what this ` +
        'command would read or write is not what the server has. Nothing was changed.',
      'The server saves the database it holds beside kb.db once it notices; stop it, and its next start asks which to keep.',
    );
  }
  throw new StoreOpenError(
    `${path} is not the database kb serve (pid ${server.pid}) had in use here: ${path}${SIDECAR_OPEN} says that server never ` +
      `closed it cleanly, and ${path} is another one (a backup or another database moved into place while the server ran, ` +
      'or after it was killed). The writes that server acknowledged were in the file replaced. Nothing was changed.',
    `If that file still exists (moved, not deleted), put it back as kb.db with its -wal and start again. To serve this kb.db ` +
      `without those writes, ${serveKnowingly(dataDir)}`,
  );
}
