import { Flags } from '@oclif/core';
import type { Store } from '../store/store.js';
import { dataDir } from '../config/paths.js';
import { CliError } from './errors.js';

export const dataDirFlag = Flags.string({
  summary: 'The server\'s data dir. Default: $KB_DATA_DIR, else the user data dir (e.g. ~/.local/share/kb).',
});

/**
 * Opens the local server's store (loaded lazily: only `kb serve` commands pay for SQLite), runs fn, closes it.
 * Safe beside a running `kb serve`: SQLite serialises the writes of both processes.
 */
export async function withLocalStore<T>(dir: string | undefined, fn: (store: Store) => Promise<T>): Promise<T> {
  const { SqliteStore } = await import('../store/sqlite.js');
  let store: Store;
  try {
    store = SqliteStore.open(dir ?? dataDir());
  } catch (error) {
    if (error instanceof Error && error.name === 'StoreOpenError') throw new CliError(error.message, 1);
    throw error;
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
