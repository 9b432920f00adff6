import { maskDatabaseUrl } from './database-url.js';
import type { CommitObserver, Store } from './store.js';

/** Where a kb server keeps its data: SQLite in a data dir (the default), or a PostgreSQL database shared by replicas. */
export type StorageOptions =
  | {
      engine: 'sqlite';
      dataDir: string;
      onCommit?: CommitObserver;
      /** Opened by kb serve itself (not a command beside it): it names itself in the database (sqlite-files.ts). */
      serving?: boolean;
      /** Told what became of a file deleted or replaced while kb serve ran, and what was done. */
      log?: (message: string) => void;
    }
  | {
      engine: 'postgres';
      /** Told after each group commit (metrics). */
      onCommit?: CommitObserver;
      url: string;
      /** Connections at most. */
      poolSize?: number;
      /** Milliseconds to wait for a database that does not answer yet. */
      waitMs?: number;
      /** Told once, with a sentence to show, when the database does not answer at first. */
      onWaiting?: (message: string) => void;
    };

/**
 * Opens the store the options name. Each engine's module (and its driver, better-sqlite3 or pg) is loaded only when
 * it is the one asked for. Throws StoreOpenError, or StoreUnreachableError for a database that did not answer in time.
 */
export async function openStore(options: StorageOptions): Promise<Store> {
  if (options.engine === 'sqlite') {
    const { SqliteStore } = await import('./sqlite.js');
    return SqliteStore.open(options.dataDir, { onCommit: options.onCommit, serving: options.serving, log: options.log });
  }
  const { PostgresStore } = await import('./postgres.js');
  return PostgresStore.open(options);
}

/** Where the data is, for people: the data dir, or the database URL with its password masked. */
export function describeStorage(options: StorageOptions): string {
  return options.engine === 'sqlite' ? `data: ${options.dataDir}` : `database: ${maskDatabaseUrl(options.url)}`;
}
