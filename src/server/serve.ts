import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AdminOptions, AdminServer } from './admin.js';
import { buildApp } from './app.js';
import type { ServerLogger } from './logger.js';
import { tolerateStalls } from './stalls.js';
import type { TlsPair } from './tls.js';
import { generateToken } from './tokens.js';
import { WARM_UP_LIMIT_MS, WARM_UP_REQUESTS } from './warm-up.js';
import { describeStorage, openStore, type StorageOptions } from '../store/open.js';
import type { Store } from '../store/store.js';

export const FIRST_ORG = 'local';

export interface ServeOptions {
  host: string;
  port: number;
  storage: StorageOptions;
  /** The log, made by the caller: it writes its own lines there too, and closes it after the server (the last line). */
  logger: ServerLogger;
  /** Where to serve /live, /ready and /metrics (admin.ts); none by default, and then nothing of it is loaded. */
  admin?: AdminOptions | undefined;
  /** Serve HTTPS with this pair (tls.ts's loadTlsPair checked it); plain HTTP by default. The admin port stays plain. */
  tls?: TlsPair | undefined;
  /** Whether it warms its request path up before it says it listens (warm-up.ts): yes unless false. */
  warmUp?: boolean | undefined;
}

export interface RunningServer {
  url: string;
  store: Store;
  /** Where the data is, for people: the data dir, or the database URL with its password masked. */
  location: string;
  /** The token made for organization `local` when the storage had none (a first start); shown once, never kept. */
  firstToken: { org: string; token: string } | undefined;
  /** Where the admin server answers, when there is one. */
  adminUrl: string | undefined;
  /**
   * Serves this pair from the next handshake on (SIGHUP's reload): connections already open keep theirs, none is
   * dropped. Only for a server started with TLS.
   */
  setTls(pair: TlsPair): void;
  /** A signal began the drain: /ready answers 503 from now on, while the API goes on serving until close(). */
  drain(): void;
  /**
   * Stops accepting, lets the requests in flight finish, and closes the store. Connections still busy after
   * deadlineMs (slow clients) are cut, so that it always ends; resolves whether any had to be.
   */
  close(deadlineMs?: number): Promise<{ forced: boolean }>;
}

/** The URL a client should use: a wildcard bind is reached through loopback. */
function publicUrl(host: string, address: AddressInfo, tls: boolean): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const bracketed = shown.includes(':') ? `[${shown}]` : shown;
  return `${tls ? 'https' : 'http'}://${bracketed}:${address.port}`;
}

/**
 * Opens the store, listens, and mints the first token when there is none. Throws StoreOpenError (StoreUnreachableError
 * for a database that did not answer in time) or a listen error.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const admin: AdminServer | undefined = options.admin && new (await import('./admin.js')).AdminServer();
  // The admin port opens first: /live answers while the store opens and the server warms up, however long a PostgreSQL
  // lock holds them, and /ready says 503 until they are done (admin.ts). SQLite opens its file in this one thread: a
  // probe is answered once that is done (its lock waited for 5 s at most), not refused meanwhile.
  const adminUrl = admin && (await admin.start(options.admin as AdminOptions));
  const { logger } = options;
  const storage: StorageOptions =
    options.storage.engine === 'sqlite' ? { ...options.storage, serving: true, log: (message) => logger.pino.warn(message) } : options.storage;
  let store: Store;
  try {
    store = await openStore(admin ? { ...storage, onCommit: admin.onCommit } : storage);
  } catch (error) {
    await admin?.close();
    throw error;
  }
  const { tls } = options;
  const app = buildApp({ store, logger, observer: admin?.observer, tls });
  try {
    // Fastify logs nothing itself (app.ts): kb serve says it listens once, itself, after the first token is out.
    await app.listen({ host: options.host, port: options.port });
    // Before anything says the server listens: its request path is compiled before it may sit idle (warm-up.ts).
    if (options.warmUp !== false) {
      const began = performance.now();
      const answered = await app.warmUp.run(app.server.address() as AddressInfo, WARM_UP_REQUESTS, WARM_UP_LIMIT_MS, tls !== undefined);
      logger.pino.debug(`warm-up: ${answered} of ${WARM_UP_REQUESTS} requests answered in ${Math.round(performance.now() - began)} ms`);
    }
    admin?.serving(store);
    const stopTolerating = tolerateStalls(app.server);
    const url = publicUrl(options.host, app.server.address() as AddressInfo, tls !== undefined);
    const first = generateToken();
    // Of several servers starting together on empty storage, only one creates it.
    const firstToken = (await store.createFirstToken(FIRST_ORG, first.id, first.hash)) ? { org: FIRST_ORG, token: first.token } : undefined;
    // Idempotency keys are kept 24 h, and changes 24 h and 10,000 by organization: forget older ones now and every hour.
    const purge = () => {
      store.idempotencyPurge().catch((error: Error) => logger.pino.warn({ err: error }, 'idempotency purge failed'));
      store.changeLog?.purge().catch((error: Error) => logger.pino.warn({ err: error }, 'change log purge failed'));
    };
    purge();
    const purging = setInterval(purge, 60 * 60 * 1000).unref();
    let closing: Promise<{ forced: boolean }> | undefined;
    return {
      url,
      store,
      location: describeStorage(options.storage),
      firstToken,
      adminUrl,
      setTls: (pair) => (app.server as unknown as HttpsServer).setSecureContext({ cert: pair.cert, key: pair.key }),
      drain: () => admin?.drain(),
      close(deadlineMs = 10_000) {
        closing ??= (async () => {
          clearInterval(purging);
          admin?.drain();
          stopTolerating();
          let forced = false;
          const deadline = setTimeout(() => {
            forced = true;
            app.server.closeAllConnections();
          }, deadlineMs);
          try {
            await app.close();
          } finally {
            clearTimeout(deadline);
          }
          await store.close();
          await admin?.close();
          return { forced };
        })();
        return closing;
      },
    };
  } catch (error) {
    await admin?.close();
    await app.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}
