import { Flags } from '@oclif/core';
import type { StorageOptions } from '../store/open.js';
import { StoreOpenError, StoreUnreachableError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import type { Context } from './context.js';
import { parseTimeout } from './duration.js';
import { CliError, UsageError } from './errors.js';
import { EXIT } from '../client/exit-codes.js';
import { shellQuote } from '../os/shell.js';

const DATABASE_URL_FORM = 'postgres://USER:PASSWORD@HOST:PORT/DATABASE';

/** Whether a text is a PostgreSQL URL kb can use; checked without echoing it back, since it holds a password. */
function checkDatabaseUrl(input: string, source: string): string {
  if (!/^postgres(ql)?:\/\/[^\s]+$/i.test(input) || !URL.canParse(input)) {
    throw new UsageError(`${source} must be a URL of the form ${DATABASE_URL_FORM}`);
  }
  return input;
}

/**
 * The flags that name the storage of a local server, shared by `kb serve`, `kb serve token` and `kb serve backup`:
 * PostgreSQL when --database (or KB_DATABASE_URL) is given, else SQLite in the data dir. KB_DATABASE_URL is read by
 * storageOptions, not by oclif, so that an explicit --data-dir beats it.
 */
export const storageFlags = {
  'data-dir': Flags.string({
    summary: "The server's data dir. Default: $KB_DATA_DIR, else the user data dir (e.g. ~/.local/share/kb). Beats KB_DATABASE_URL.",
  }),
  database: Flags.string({
    summary: `PostgreSQL database shared by replicas, as ${DATABASE_URL_FORM}. Prefer KB_DATABASE_URL: argv is visible to other users. Without either, SQLite in the data dir.`,
    parse: async (input) => checkDatabaseUrl(input, '--database'),
  }),
  'database-wait': Flags.string({
    summary: 'How long to wait at start-up for a database that does not answer yet, e.g. 30s or 500ms.',
    default: '10s',
  }),
};

export type StorageFlags = { 'data-dir'?: string | undefined; database?: string | undefined; 'database-wait': string };

/**
 * The storage the flags name. An explicit flag beats an environment variable (docs/contract.md, Backup): --data-dir
 * beats KB_DATABASE_URL, --database beats KB_DATA_DIR; --data-dir and --database together are a usage error, since
 * only one would be used. A password given in --database is warned of: any user of the machine can read a command
 * line (`ps`).
 */
export function storageOptions(
  flags: StorageFlags,
  context: Pick<Context, 'dataDir' | 'env' | 'io'>,
  postgres: { poolSize?: number; onWaiting?: (message: string) => void } = {},
): StorageOptions {
  if (flags.database !== undefined && flags['data-dir'] !== undefined) {
    throw new UsageError('--data-dir and --database name two storages: pass one of them');
  }
  if (flags['data-dir'] !== undefined) return { engine: 'sqlite', dataDir: flags['data-dir'] };
  const fromEnv = flags.database === undefined && context.env.databaseUrl !== undefined;
  const url = fromEnv ? checkDatabaseUrl(context.env.databaseUrl as string, 'KB_DATABASE_URL') : flags.database;
  if (url === undefined) return { engine: 'sqlite', dataDir: context.dataDir() };
  if (!fromEnv && new URL(url).password !== '') {
    context.io.stderr(
      'Warning: the --database URL holds a password, which other users of this machine can read in the command line ' +
        '(ps). Set KB_DATABASE_URL instead.\n',
    );
  }
  return { engine: 'postgres', url, waitMs: parseTimeout(flags['database-wait'], '--database-wait'), ...postgres };
}

/** A storage that cannot be opened, as the CLI reports it: exit 6 for a database that did not answer, else 1. */
export function storageFailure(error: unknown): unknown {
  if (error instanceof StoreUnreachableError) {
    return new CliError(error.message, EXIT.network, `${error.help ? `${error.help} ` : ''}Or wait longer with --database-wait.`);
  }
  if (error instanceof StoreOpenError) return new CliError(error.message, EXIT.failure, error.help);
  return error;
}

/** Opens the storage (its engine loaded lazily: only these commands pay for SQLite or pg), or throws a CliError. */
export async function openStorage(storage: StorageOptions): Promise<Store> {
  const { openStore } = await import('../store/open.js');
  try {
    return await openStore(storage);
  } catch (error) {
    throw storageFailure(error);
  }
}

/**
 * Opens the storage the flags name with one connection, runs fn, and closes it: for the commands beside a server
 * (`kb serve token`, `kb serve backup`). Safe while `kb serve` runs: SQLite serialises the writes of both processes.
 * `command` names the command in the line said on stderr while waiting for a database.
 */
export async function withStorage<T>(
  flags: StorageFlags,
  context: Pick<Context, 'dataDir' | 'env' | 'io'>,
  command: string,
  fn: (store: Store, storage: StorageOptions) => Promise<T>,
): Promise<T> {
  const storage = storageOptions(flags, context, { poolSize: 1, onWaiting: (message) => context.io.stderr(`${command}: ${message}\n`) });
  const store = await openStorage(storage);
  try {
    return await fn(store, storage);
  } finally {
    await store.close();
  }
}

/**
 * Backs up the SQLite database of a data dir into dest, reading it read-only (`kb serve backup`); the engine is loaded
 * only here. Throws a CliError.
 */
export async function backupDataDir(dataDir: string, dest: string): Promise<{ path: string; bytes: number; warning?: string }> {
  const { backupDataDir: backup } = await import('../store/sqlite-backup.js');
  try {
    return await backup(dataDir, dest);
  } catch (error) {
    throw storageFailure(error);
  }
}

/** The command that serves a data dir, to be pasted into a shell: the path quoted when it needs quoting. */
export function serveCommand(dataDir: string): string {
  return `kb serve --data-dir ${shellQuote(dataDir)}`;
}
