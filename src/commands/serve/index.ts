import { Flags } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';
import { parseTimeout } from '../../cli/duration.js';
import { CliError, UsageError } from '../../cli/errors.js';
import type { IO } from '../../cli/io.js';
import { withLocalStore } from '../../cli/local-store.js';
import { dataDir } from '../../config/paths.js';
import { LOG_LEVELS } from '../../server/log.js';
import { DEFAULT_POOL_SIZE } from '../../store/database-url.js';
import type { StorageOptions } from '../../store/open.js';
import type { Store } from '../../store/store.js';

const DATABASE_URL_FORM = 'postgres://USER:PASSWORD@HOST:PORT/DATABASE';

/**
 * The flags that select the storage of `kb serve` and `kb serve token`: PostgreSQL when --database (or KB_DATABASE_URL)
 * is given, else SQLite in the data dir. Shared by the token commands, which work against the same storage.
 */
export const databaseFlags = {
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

type StorageFlags = { 'data-dir'?: string | undefined; database?: string | undefined; 'database-wait': string };

/** The storage the flags name; --data-dir and --database together are a usage error, since only one would be used. */
function storageOptions(
  flags: StorageFlags,
  postgres: { poolSize?: number; onWaiting?: (message: string) => void } = {},
): StorageOptions {
  if (flags.database === undefined) return { engine: 'sqlite', dataDir: flags['data-dir'] ?? dataDir() };
  if (flags['data-dir'] !== undefined) {
    throw new UsageError('--data-dir and --database (or KB_DATABASE_URL) name two storages: pass one of them');
  }
  return { engine: 'postgres', url: flags.database, waitMs: parseTimeout(flags['database-wait'], '--database-wait'), ...postgres };
}

/** A storage that cannot be opened, as the CLI reports it: exit 6 for a database that did not answer, else 1. */
function storageFailure(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const help = (error as { help?: unknown }).help;
  if (error.name === 'StoreUnreachableError') {
    return new CliError(error.message, 6, `${typeof help === 'string' ? `${help} ` : ''}Or wait longer with --database-wait.`);
  }
  if (error.name === 'StoreOpenError') return new CliError(error.message, 1, typeof help === 'string' ? help : undefined);
  return error;
}

/**
 * Opens the storage the flags name (the engine loaded lazily), runs fn, and closes it; for `kb serve token`, so one
 * connection is enough, and waiting for the database is said on stderr.
 */
export async function withServeStore<T>(flags: StorageFlags, io: IO, fn: (store: Store) => Promise<T>): Promise<T> {
  const storage = storageOptions(flags, { poolSize: 1, onWaiting: (message) => io.stderr(`kb serve token: ${message}\n`) });
  if (storage.engine === 'sqlite') return withLocalStore(flags['data-dir'], fn);
  const { openStore } = await import('../../store/open.js');
  let store: Store;
  try {
    store = await openStore(storage);
  } catch (error) {
    throw storageFailure(error);
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export default class Serve extends KbCommand {
  static override summary = 'Run a local kb server on embedded, durable storage, or replicas over PostgreSQL';

  static override description = `Serves the whole kb API under /v1 from an SQLite database in the data dir, so you can run
your own instance, develop against it and test scripts without a remote deployment.
Ready when GET /v1/health answers. SIGINT or SIGTERM stops accepting, finishes the requests in flight,
closes the database and exits 0.

With --database (or KB_DATABASE_URL) it serves from a PostgreSQL database instead, and any number of
replicas over that one database behave as one server: uniqueness, tokens, Idempotency-Key replies and the
failed-authentication limit all live in the database. On an empty database kb creates its tables; a database
of another application, or of a newer kb, is refused. A database that does not answer is waited for
(--database-wait), then kb serve exits 6 naming the URL with its password masked.

On a first start with no tokens, it creates one for organization "local", prints it once, and saves it
as the CLI profile "local" (the default profile when there is none yet), so \`kb ns list\` works at once.

Beyond the API document, it also serves GET /v1/base_list?namespace=NS (an extension of kb serve).`;

  static override examples = [
    { description: 'Serve on the default address, http://127.0.0.1:8080', command: '<%= config.bin %> serve' },
    { description: 'Serve on another port, with the data kept in ./kb-data', command: '<%= config.bin %> serve --port 9000 --data-dir ./kb-data' },
    { description: 'Log only warnings and errors', command: '<%= config.bin %> serve --log-level warn' },
    {
      description: 'One of several replicas over PostgreSQL (the URL in the environment keeps the password out of argv)',
      command: 'KB_DATABASE_URL=postgres://kb:PASSWORD@db.internal:5432/kb <%= config.bin %> serve --host 0.0.0.0 --port 8080',
    },
  ];

  static override flags = {
    port: Flags.integer({ char: 'p', summary: 'Port to listen on (0 picks a free one).', default: 8080, min: 0, max: 65535 }),
    host: Flags.string({ summary: 'Address to listen on.', default: '127.0.0.1' }),
    'data-dir': Flags.string({
      summary: 'Where the database lives. Default: $KB_DATA_DIR, else the user data dir (e.g. ~/.local/share/kb).',
    }),
    'log-level': Flags.option({ options: LOG_LEVELS, default: 'info' as const })({
      summary: 'One line per request to stderr at info; warn and error log less; silent logs nothing.',
    }),
    ...databaseFlags,
    'pool-size': Flags.integer({
      summary: `PostgreSQL connections at most, per replica (--database-pool is the same). Requests beyond them wait, up to 8 per connection; more are answered 503 at once.`,
      default: DEFAULT_POOL_SIZE,
      min: 1,
      max: 1000,
      aliases: ['database-pool'],
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    const storage = storageOptions(flags, {
      poolSize: flags['pool-size'],
      onWaiting: (message) => this.io.stderr(`kb serve: ${message}\n`),
    });
    const { startServer } = await import('../../server/serve.js');
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({
        host: flags.host,
        port: flags.port,
        storage,
        logLevel: flags['log-level'],
        onFirstToken: async ({ url, org, token }) => {
          const { saveServeProfile } = await import('../../config/profiles.js');
          const saved = await saveServeProfile({ url, token });
          this.io.stdout(
            `Created the first token, for organization "${org}" at ${url}. It is shown only this once:\n\n  ${token}\n\n` +
              `Saved as CLI profile "local"${saved.isDefault ? ' (the default)' : ''}: try \`kb ns list\` in another terminal.\n`,
          );
        },
      });
    } catch (error) {
      throw serveFailure(error, flags.host, flags.port);
    }
    this.io.stderr(`kb serve: listening on ${server.url} (${server.location})\n`);
    const signal = await waitForSignal();
    this.io.stderr(`kb serve: ${signal}, finishing requests in flight and closing\n`);
    await server.close();
  }
}

function serveFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'EADDRINUSE') {
    return new CliError(`cannot listen on ${host}:${port}: the port is in use`, 1, 'Pass --port with a free port, or stop the other server.');
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') {
    return new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`, 1);
  }
  return storageFailure(error);
}
