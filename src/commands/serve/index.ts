import { constants } from 'node:os';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Flags } from '@oclif/core';
import type { BaseLogger } from 'pino';
import { KbCommand } from '../../cli/base-command.js';
import { parseTimeout } from '../../cli/duration.js';
import { CliError } from '../../cli/errors.js';
import { outliveClosedOutput } from '../../cli/io.js';
import { uninterrupted } from '../../cli/interrupt.js';
import { kbCommand } from '../../cli/invocation.js';
import { findTokenHolder, saveLocalProfile } from '../../cli/serve-profile.js';
import { storageFailure, storageFlags, storageOptions } from '../../cli/storage.js';
import { LOG_FORMATS, LOG_LEVELS } from '../../server/log.js';
import type { RunningServer } from '../../server/serve.js';
import { DEFAULT_POOL_SIZE } from '../../store/database-url.js';
import { EXIT } from '../../client/exit-codes.js';
import { ProfileStore } from '../../config/profiles.js';

/** How long a second signal lets the log write out its last lines before the process exits. */
const EXIT_LOG_WAIT_MS = 500;

/**
 * Resolves on the first SIGINT or SIGTERM; a second one exits at once (130 or 143), once its line is written (or
 * EXIT_LOG_WAIT_MS has passed, for a reader that stopped reading). One listener stays for the whole run: removing it
 * while a signal is emitted would let signal-exit (used by the config writer) find no other listener and re-raise the
 * signal, killing the process in the middle of its shutdown.
 */
function signals(onSecond: (signal: NodeJS.Signals) => Promise<void>): { stopped: Promise<NodeJS.Signals>; ownSignals(): void } {
  let handle: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    let received = 0;
    handle = (signal) => {
      if (++received === 1) return resolve(signal);
      if (received > 2) return;
      // As a shell reports a process that the signal ended: 128 + its number.
      void onSecond(signal).finally(() => process.exit(128 + constants.signals[signal]));
    };
    process.on('SIGINT', handle);
    process.on('SIGTERM', handle);
  });
  return {
    stopped,
    /**
     * Takes back the signals from the listeners code loaded since added: conf's atomic writer (when-exit) answers a
     * signal by raising it again, which would end the server at once instead of letting it finish its requests.
     */
    ownSignals() {
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
        for (const listener of process.listeners(signal)) if (listener !== handle) process.off(signal, listener);
      }
    },
  };
}

/** Whether an address to listen on is reachable from this machine only. */
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare) || bare === '::ffff:127.0.0.1';
}

export default class Serve extends KbCommand {
  static override summary = 'Run a local kb server on embedded, durable storage, or replicas over PostgreSQL';

  static override description = `Serves the whole kb API under /v1 from an SQLite database in the data dir, so you can run
your own instance, develop against it and test scripts without a remote deployment.
Ready when GET /v1/health answers.

With --database (or KB_DATABASE_URL) it serves from a PostgreSQL database instead, and any number of
replicas over that one database behave as one server: uniqueness, tokens, Idempotency-Key replies and the
failed-authentication limit all live in the database. On an empty database kb creates its tables; a database
of another application, or of a newer kb, is refused. A database that does not answer is waited for
(--database-wait), then kb serve exits 6 naming the URL with its password masked.

On a first start with no tokens, it creates one for organization "local", prints it once, and saves it
as a CLI profile (the default profile when there is none yet), so \`kb ns list\` works at once: "local", or
"local-<port>" when "local" holds another server's token, or the name --profile gives (also a profile with no
token). A profile that holds another server's token is never replaced. Later starts say which profile holds a
token of this server, or how to get one (\`kb serve token create --org local --save\`). Served again on another
port, the server moves the profile holding its token to its new URL (the token stays), and says so; unless that
URL is not a local one, or something listens there: then it names the command that points the profile here.

With --tls-cert and --tls-key it serves HTTPS on the API port (the admin port stays plain HTTP), and every URL it
prints says https; a first start saves the certificate's path as the profile's CA. SIGHUP reads both files again
and serves them to new connections without dropping any; a pair that does not pass keeps the old one, and the log
says why. A plain HTTP request to that port is answered 400, saying to use https. Without them, or while the server
starts, SIGHUP (a \`systemctl reload\`) is logged and changes nothing.

SIGINT or SIGTERM stops accepting and lets the requests in flight finish for up to --shutdown-timeout, then
closes the database and exits 0; a second signal exits at once. Back up a running server with
\`kb serve backup DEST\`.

Behind a load balancer: --admin-port serves GET /live, GET /ready (503 while starting, while draining, or
while the database or, on PostgreSQL, its LISTEN connection is down) and GET /metrics (Prometheus) on a port of their
own, never on the API's. With --drain-delay, a SIGTERM first makes /ready fail and keeps serving for the
delay, so the balancer stops sending before the listener closes.

Beyond the API document, it also serves GET /v1/base_list?namespace=NS (a namespace's bases),
GET /v1/base_list_all (every base of the organization), DELETE /v1/ns_delete (a namespace: an empty one, or
with its bases when "cascade" is true), and its OpenAPI document at GET /v1/openapi.json.`;

  static override examples = [
    { description: 'Serve on the default address, http://127.0.0.1:8080', command: '<%= config.bin %> serve' },
    { description: 'Serve on another port, with the data kept in ./kb-data', command: '<%= config.bin %> serve --port 9000 --data-dir ./kb-data' },
    { description: 'Log only warnings and errors', command: '<%= config.bin %> serve --log-level warn' },
    {
      description: 'One of several replicas over PostgreSQL (the URL in the environment keeps the password out of argv)',
      command: 'KB_DATABASE_URL=postgres://kb:PASSWORD@db.internal:5432/kb <%= config.bin %> serve --host 0.0.0.0 --port 8080',
    },
    {
      description: 'HTTPS on port 8443; after replacing the files, `kill -HUP PID` serves the new certificate without dropping a connection',
      command: '<%= config.bin %> serve --port 8443 --tls-cert /etc/kb/cert.pem --tls-key /etc/kb/key.pem',
    },
    {
      description: 'Behind a load balancer: probes and Prometheus on port 9090, and 5 s for the balancer to stop sending after SIGTERM',
      command: '<%= config.bin %> serve --host 0.0.0.0 --admin-port 9090 --admin-host 0.0.0.0 --drain-delay 5s',
    },
  ];

  static override flags = {
    port: Flags.integer({ char: 'p', summary: 'Port to listen on (0 picks a free one).', default: 8080, min: 0, max: 65535 }),
    host: Flags.string({
      summary: 'Address to listen on. Without --tls-cert kb serve speaks plain HTTP: beyond this machine, serve TLS or put a TLS-terminating proxy in front (it warns).',
      default: '127.0.0.1',
    }),
    'tls-cert': Flags.string({
      summary: 'Serve HTTPS on the API port with this PEM certificate (its chain after it), with --tls-key. SIGHUP reloads both files. The admin port stays plain HTTP.',
      dependsOn: ['tls-key'],
    }),
    'tls-key': Flags.string({ summary: 'The PEM private key of --tls-cert (unencrypted).', dependsOn: ['tls-cert'] }),
    'log-level': Flags.option({ options: LOG_LEVELS, default: 'info' as const })({
      summary:
        'One line per request to stderr at info (time, level, request id, method, path, status, duration); warn and error log less; silent logs no request. kb serve\'s own lines (listening, profile, signals, stopped) are written at every level.',
    }),
    'log-format': Flags.option({ options: LOG_FORMATS })({
      summary: 'pretty: short lines for a person; json: one JSON object per line, kb serve\'s own lines included. Default: pretty when stderr is a terminal, else json.',
    }),
    profile: Flags.string({
      summary: 'The CLI profile a first start saves its token in. Default: local, or local-<port> when local holds another server\'s token.',
    }),
    'shutdown-timeout': Flags.string({
      summary: 'On SIGINT or SIGTERM, how long requests in flight may take before their connections are cut, e.g. 10s.',
      default: '10s',
    }),
    'admin-port': Flags.integer({
      summary: 'Serve GET /live, /ready and /metrics (Prometheus) on this port, apart from the API. Off by default.',
      min: 0,
      max: 65535,
    }),
    'admin-host': Flags.string({
      summary: 'Address of the admin port. Default: loopback; a probe or a scraper on another machine needs another.',
      default: '127.0.0.1',
    }),
    'drain-delay': Flags.string({
      summary: 'On SIGTERM, how long /ready answers 503 while the API goes on serving, before the shutdown begins, e.g. 5s (SIGINT does not wait).',
      default: '0',
    }),
    'warm-up': Flags.boolean({
      summary:
        'Before it says it listens, send itself up to 1,000 health requests (1 s at most), so that a burst of load from its first second costs no more CPU a request than later (kb serve\'s performance notes). --no-warm-up starts sooner, for development and scripts.',
      default: true,
      allowNo: true,
    }),
    ...storageFlags,
    'pool-size': Flags.integer({
      summary: `PostgreSQL connections at most, per replica (--database-pool is the same). Requests beyond them wait, up to 8 per connection; more are answered 503 at once.`,
      default: DEFAULT_POOL_SIZE,
      min: 1,
      max: 1000,
      aliases: ['database-pool'],
    }),
  };

  async run(): Promise<void> {
    // SIGHUP's default action ends the process: one sent while the server starts (a `systemctl reload` then, which a
    // start waiting for its database makes likely) is told to the log once there is one, and otherwise ignored.
    let sayHup = (): void => undefined;
    process.on('SIGHUP', () => sayHup());
    const { flags } = await this.parse(Serve);
    // A pair that cannot serve is refused before anything is created (docs/contract.md, TLS).
    const tlsFiles = flags['tls-cert'] === undefined || flags['tls-key'] === undefined ? undefined : { cert: resolve(flags['tls-cert']), key: resolve(flags['tls-key']) };
    const { loadTlsPair, TlsFilesError } = await import('../../server/tls.js');
    const tls = tlsFiles && (await loadTlsPair(tlsFiles).catch((error: unknown) => {
      throw error instanceof TlsFilesError ? new CliError(error.message, EXIT.usage, 'Nothing was started. Give a readable PEM certificate and its own key.') : error;
    }));
    // V8's memory reducer collects garbage once a process sits idle, and a server that sat idle for a minute or so
    // then builds Node's process.nextTick objects through V8's slow paths for as long as it runs: 2 to 4 µs of CPU a
    // request (docs/performance.md). The reducer collects only by incremental marking; without it, it never starts.
    // What that costs: a major collection marks the heap in one pause, some milliseconds for kb serve's heap (its kept
    // answers are buffers, outside it).
    setFlagsFromString('--no-incremental-marking');
    // Put back before a code cache is written at exit, which V8 stamps with its flags (scripts/vendor-load.mjs).
    Reflect.set(globalThis, Symbol.for('kb.gc.noIncrementalMarking'), true);
    outliveClosedOutput();
    const shutdownMs = parseTimeout(flags['shutdown-timeout'], '--shutdown-timeout');
    // The one writer of stderr from here on (docs/contract.md, Logging): kb serve's own lines are log lines too.
    const { createLogger } = await import('../../server/logger.js');
    const logger = createLogger(flags['log-level'], flags['log-format'] === undefined ? {} : { format: flags['log-format'] });
    const log = logger.events;
    sayHup = () => log.info('SIGHUP while starting: nothing to reload yet (the files named are read as the server starts)');
    const drainMs = /^0+(?:\.0+)?(?:ms|s|m)?$/.test(flags['drain-delay'].trim()) ? 0 : parseTimeout(flags['drain-delay'], '--drain-delay');
    const admin = flags['admin-port'] === undefined ? undefined : { host: flags['admin-host'], port: flags['admin-port'] };
    // Listened for from here on: a signal during start-up or while the first token is saved stops the server as
    // soon as it is up, instead of killing the process with the profile half-saved.
    const { stopped, ownSignals } = signals((signal) => {
      log.warn(`${signal} again, exiting now`);
      return logger.close({ waitMs: EXIT_LOG_WAIT_MS });
    });
    // What choosing the storage warns of (a password in argv) is a log line too.
    const io = { ...this.context.io, stderr: (text: string) => log.warn(text.trim().replace(/^Warning: /, '')) };
    const storage = storageOptions(flags, { env: this.context.env, dataDir: () => this.context.dataDir(), io }, {
      poolSize: flags['pool-size'],
      onWaiting: (message) => log.warn(message),
    });
    let server: RunningServer;
    try {
      const { startServer } = await import('../../server/serve.js');
      server = await startServer({ host: flags.host, port: flags.port, storage, logger, admin, tls, warmUp: flags['warm-up'] });
    } catch (error) {
      // Written out before the error is, which goes to stderr apart from the log.
      await logger.close();
      throw serveFailure(error, flags.host, flags.port);
    }
    // Warnings about the config file go to the log, as every line of kb serve does.
    const profiles = new ProfileStore({ dir: this.context.configDir(), onWarning: (message) => log.warn(message), hold: uninterrupted });
    // The first token is out (and saved) before the server says it listens, so whoever waits for that line has it.
    if (server.firstToken) await this.deliverFirstToken(server, server.firstToken.token, { name: flags.profile, ca: tlsFiles?.cert }, profiles, log);
    else await this.sayWhoHoldsAToken(server, flags['data-dir'], profiles, log);
    // Before the line that says it listens, which whoever stops it may wait for: a signal from then on stops it cleanly,
    // never the re-raise of a listener the config code added.
    ownSignals();
    if (tlsFiles !== undefined) {
      const running = server;
      // Read again and checked whole before it replaces anything: a bad pair keeps the one in use.
      process.on('SIGHUP', () => {
        loadTlsPair(tlsFiles).then(
          (pair) => {
            running.setTls(pair);
            log.info(`SIGHUP: serving the TLS certificate ${pair.subject} (valid to ${pair.validTo}) from now on`);
          },
          (error: Error) => log.warn(`SIGHUP: kept the TLS certificate in use: ${error.message}`),
        );
      });
      if (tls !== undefined) log.info(`TLS: certificate ${tls.subject} (valid to ${tls.validTo}); SIGHUP reloads ${tlsFiles.cert} and ${tlsFiles.key}`);
    } else {
      // SIGHUP's default action ends the process: a `systemctl reload` (ExecReload=kill -HUP) must never stop a server.
      process.on('SIGHUP', () => log.info('SIGHUP: nothing to reload without --tls-cert'));
    }
    if (server.adminUrl) log.info(`admin port: ${server.adminUrl}/live, /ready and /metrics`);
    log.info(`listening on ${server.url} (${server.location})`);
    if (!isLoopback(flags.host) && tls === undefined) {
      log.warn(
        `${flags.host} can be reached from other machines, and kb serve speaks plain HTTP: tokens and data would cross the ` +
          'network unencrypted. Serve TLS with --tls-cert and --tls-key, or put a TLS-terminating proxy in front of it.',
      );
    }

    const signal = await stopped;
    server.drain();
    // SIGTERM is how an orchestrator stops a replica; Ctrl-C (SIGINT) is a person's, who wants it stopped now.
    if (drainMs > 0 && signal === 'SIGTERM') {
      log.info(`${signal}, draining: /ready answers 503 and requests are still served for ${flags['drain-delay']} (${signal} again exits at once)`);
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    log.info(`${signal}, finishing requests in flight (for at most ${flags['shutdown-timeout']}; ${signal} again exits at once)`);
    const { forced } = await server.close(shutdownMs);
    if (forced) log.warn(`cut the connections still busy after ${flags['shutdown-timeout']}`);
    logger.sayDropped();
    log.info('stopped');
    // The log last: every line of a request answered before the close is written out.
    await logger.close();
  }

  /**
   * Shows the first token, then saves it as a CLI profile. Shown first, so that a config that cannot be saved (or a
   * kill in between) never leaves a token that no one holds; a failed save says how to save it by hand. The token
   * goes to stdout, to the person who started the server, never into the log.
   */
  private async deliverFirstToken(
    server: RunningServer,
    token: string,
    profile: { name: string | undefined; ca: string | undefined },
    profiles: ProfileStore,
    log: BaseLogger,
  ): Promise<void> {
    this.io.stdout(
      `Created the first token, for organization "local" at ${server.url}.\nIt is shown only this once:\n\n  ${token}\n\n`,
    );
    try {
      // With TLS, the certificate is the profile's CA (the client takes it as a trust anchor, chain or no chain).
      const saved = await saveLocalProfile(server.store, profiles, { url: server.url, token, ...profile });
      const kb = kbCommand(this.context.env.searchPath);
      const tryIt = saved.isDefault ? `${kb} ns list` : `${kb} ns list --profile ${saved.name}`;
      this.io.stdout(`Saved as CLI profile "${saved.name}"${saved.isDefault ? ' (the default)' : ''}.\nTry \`${tryIt}\` in another terminal.\n`);
    } catch (error) {
      log.warn(
        `could not save the token as a CLI profile: ${(error as Error).message}. The token printed on stdout works: save it with ` +
          `\`kb auth login --url ${server.url}${profile.ca === undefined ? '' : ` --cacert ${profile.ca}`} --profile NAME --with-token\` (the token on stdin).`,
      );
    }
  }

  /**
   * On a later start: which profile holds a token of this server (following it here from the server's old URL when
   * that is safe), or exactly how to get one when none does.
   */
  private async sayWhoHoldsAToken(server: RunningServer, dataDirFlag: string | undefined, profiles: ProfileStore, log: BaseLogger): Promise<void> {
    const holder = await findTokenHolder(server.store, { env: this.context.env, profiles: () => profiles }, server.url);
    switch (holder.kind) {
      case 'env':
        return log.info('KB_TOKEN holds a token of this server');
      case 'here':
        return log.info(`CLI profile "${holder.name}" holds a token of this server`);
      case 'moved':
        return log.info(`CLI profile "${holder.name}" holds a token of this server: its URL was ${holder.from}, it is now ${server.url}`);
      case 'elsewhere':
        return log.warn(
          `CLI profile "${holder.name}" holds a token of this server but points at ${holder.url} (${holder.why}). Point it here with ` +
            `\`kb auth token --profile ${holder.name} | kb auth login --profile ${holder.name} --url ${server.url} --with-token\``,
        );
      case 'none': {
        const where = dataDirFlag === undefined ? '' : ` --data-dir ${dataDirFlag}`;
        return log.info(`no CLI profile holds a token of this server. Get one saved with \`kb serve token create --org local --save --url ${server.url}${where}\``);
      }
    }
  }
}

function serveFailure(error: unknown, host: string, port: number): unknown {
  if (error instanceof Error && error.name === 'AdminListenError') return new CliError(error.message, EXIT.failure);
  const code = (error as { code?: unknown }).code;
  if (code === 'EADDRINUSE') {
    return new CliError(`cannot listen on ${host}:${port}: the port is in use`, EXIT.failure, 'Pass --port with a free port, or stop the other server.');
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') {
    return new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`, EXIT.failure);
  }
  return storageFailure(error);
}
