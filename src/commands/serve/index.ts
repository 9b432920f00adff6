import { Flags } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';
import { CliError } from '../../cli/errors.js';
import { dataDir } from '../../config/paths.js';
import { LOG_LEVELS } from '../../server/log.js';

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
  static override summary = 'Run a local kb server on embedded, durable storage';

  static override description = `Serves the whole kb API under /v1 from an SQLite database in the data dir, so you can run
your own instance, develop against it and test scripts without a remote deployment.
Ready when GET /v1/health answers. SIGINT or SIGTERM stops accepting, finishes the requests in flight,
closes the database and exits 0.

On a first start with no tokens, it creates one for organization "local", prints it once, and saves it
as the CLI profile "local" (the default profile when there is none yet), so \`kb ns list\` works at once.

Beyond the API document, it also serves GET /v1/base_list?namespace=NS (an extension of kb serve).`;

  static override examples = [
    { description: 'Serve on the default address, http://127.0.0.1:8080', command: '<%= config.bin %> serve' },
    { description: 'Serve on another port, with the data kept in ./kb-data', command: '<%= config.bin %> serve --port 9000 --data-dir ./kb-data' },
    { description: 'Log only warnings and errors', command: '<%= config.bin %> serve --log-level warn' },
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
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    const dir = flags['data-dir'] ?? dataDir();
    const { startServer } = await import('../../server/serve.js');
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({
        host: flags.host,
        port: flags.port,
        dataDir: dir,
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
    this.io.stderr(`kb serve: listening on ${server.url} (data: ${dir})\n`);
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
  if (error instanceof Error && error.name === 'StoreOpenError') return new CliError(error.message, 1);
  return error;
}
