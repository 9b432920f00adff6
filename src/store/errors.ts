/**
 * The errors of opening a store, in a module of their own (no imports) so that the CLI can recognise them by class
 * without loading an engine.
 */

/** Raised when a data dir or database cannot be opened safely; the message says why and what to do. */
export class StoreOpenError extends Error {
  override readonly name: string = 'StoreOpenError';
  constructor(message: string, readonly help?: string) {
    super(message);
  }
}

/** Raised when the database server could not be reached within the time allowed: a network failure, worth retrying. */
export class StoreUnreachableError extends StoreOpenError {
  override readonly name = 'StoreUnreachableError';
}
