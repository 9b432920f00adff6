import { KbApiError } from '../api/errors.js';

/**
 * The API errors every engine of the Store raises, worded once: the server's status table and its tests expect the
 * same message from SQLite and PostgreSQL alike.
 */
export const failures = {
  namespaceExists: (key: string) => new KbApiError('conflict', `Namespace ${key} already exists`),
  baseExists: (namespace: string, key: string) => new KbApiError('conflict', `Base ${key} already exists in namespace ${namespace}`),
  namespaceNotEmpty: (key: string, bases: number) =>
    new KbApiError(
      'conflict',
      `Namespace ${key} holds ${bases} ${bases === 1 ? 'base' : 'bases'}`,
      'Delete its bases first, or send "cascade": true to delete them with it.',
    ),
  namespaceNotFound: (key: string) => new KbApiError('not_found', `Namespace ${key} not found`),
  baseNotFound: (namespace: string, key: string) => new KbApiError('not_found', `Base ${key} not found in namespace ${namespace}`),
  // As the server's own 401 words it (src/server/auth.ts): a token revoked before the write's transaction began.
  tokenRevoked: () =>
    new KbApiError(
      'unauthorized',
      'Authentication required: send a valid token as "Authorization: Bearer <token>"',
      'Check the token, or create one on the server with `kb serve token create --org ORG`.',
    ),
  tokenNameTaken: (name: string) =>
    new KbApiError('conflict', `A token named ${name} exists already`, 'Choose another --name, or revoke that token first (`kb serve token revoke NAME`).'),
  shuttingDown: () => new KbApiError('unavailable', 'The server is shutting down'),
  // SQLite's I/O errors and damaged files: a storage fault, 503 with Retry-After (docs/contract.md, Storage faults).
  storageFault: () =>
    new KbApiError('unavailable', 'The database could not be read or written; nothing was written', "Retry in a moment: the server's log says what failed."),
  busy: () => new KbApiError('unavailable', 'The database is busy; nothing was written', 'Retry in a moment.'),
  // The file's path is the server's business, not its clients': the message does not name it.
  databaseGone: () =>
    new KbApiError(
      'unavailable',
      'The database file was removed or replaced while the server ran; nothing was written',
      'The server must be restarted (it opens its data dir again).',
    ),
};
