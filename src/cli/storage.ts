import { Flags } from '@oclif/core';
import type { StorageOptions } from '../store/open.js';
import { StoreOpenError, StoreUnreachableError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import type { Context } from './context.js';
import { parseTimeout } from './duration.js';
import { CliError, UsageError } from './errors.js';
import { EXIT } from '../client/exit-codes.js';

const DATABASE_URL_FORM = 'postgres://USER:PASSWORD@HOST:PORT/DATABASE';

/**
 * The flags that name the storage of a local server, shared by `kb serve`, `kb serve token` and `kb serve backup`:
 * PostgreSQL when --database (or KB_DATABASE_URL) is given, else SQLite in the data dir.
 */
export const storageFlags = {
  'data-dir': Flags.string({
    summary: "The server's data dir. Default: $KB_DATA_DIR, else the user data dir (e.g. ~/.local/share/kb).",
  }),
  database: Flags.string({
    summary: `PostgreSQL database shared by replicas, as ${DATABASE_URL_FORM}. Prefer KB_DATABASE_URL: argv is visible to other users. Without either, SQLite in the data dir.`,
    env: 'KB_DATABASE_URL',
    // Checked here without echoing the value: it holds a password.
    parse: async (input) => {
      if (!/^postgres(ql)?:\/\/[^\s]+$/i.test(input) || !URL.canParse(input)) {
        throw new UsageError(`--database (or KB_DATABASE_URL) must be a URL of the form ${DATABASE_URL_FORM}`);
      }
      return input;
    },
  }),
  'database-wait': Flags.string({
    summary: 'How long to wait at start-up for a database that does not answer yet, e.g. 30s or 500ms.',
    default: '10s',
  }),
};

export type StorageFlags = { 'data-dir'?: string | undefined; database?: string | undefined; 'database-wait': string };

/**
 * The storage the flags name; --data-dir and --database together are a usage error, since only one would be used.
 * A password given in --database is warned of: any user of the machine can read a command line (`ps`).
 */
export function storageOptions(
  flags: StorageFlags,
  context: Pick<Context, 'dataDir' | 'env' | 'io'>,
  postgres: { poolSize?: number; onWaiting?: (message: string) => void } = {},
): StorageOptions {
  if (flags.database === undefined) return { engine: 'sqlite', dataDir: flags['data-dir'] ?? context.dataDir() };
  if (flags['data-dir'] !== undefined) {
    throw new UsageError('--data-dir and --database (or KB_DATABASE_URL) name two storages: pass one of them');
  }
  if (flags.database !== context.env.databaseUrl && new URL(flags.database).password !== '') {
    context.io.stderr(
      'Warning: the --database URL holds a password, which other users of this machine can read in the command line ' +
        '(ps). Set KB_DATABASE_URL instead.\n',
    );
  }
  return { engine: 'postgres', url: flags.database, waitMs: parseTimeout(flags['database-wait'], '--database-wait'), ...postgres };
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
