/**
 * `kb export -o TARGET` through the built CLI, with TARGET as shells and scripts hand it over: /dev/stdout under `>>`,
 * in a subshell group or a pipe, /dev/fd/N, a FIFO, a dangling symbolic link, a regular file. Only a regular file is
 * replaced (whole, its mode kept); anything else is written to as it is (docs/contract.md, Files written with -o).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KB_BIN } from '../helpers/cli.js';
import { apiData, describeRun, expectFailure, kb, orgEnv, runShell, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer;
let env: NodeJS.ProcessEnv;
/** What `kb export` prints to stdout: what every target below must receive, byte for byte. */
let exported: string;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-export-targets' });
  const org = await orgEnv(server, 'targets');
  env = org.env;
  await apiData(expect, server.url, org.token, 'POST', '/ns_create', { key: 'docs', description: 'Product docs' });
  await apiData(expect, server.url, org.token, 'POST', '/base_create', { namespace: 'docs', key: 'faq', description: 'Questions' });
  const result = await kb(['export'], { env });
  expect(result.code, describeRun(result)).toBe(0);
  exported = result.stdout;
  expect(exported).toContain('key: faq');
});
afterAll(async () => {
  await server?.close();
});

const KB = [process.execPath, KB_BIN];

describe.concurrent('kb export -o: what is not a regular file is written to as it is', { timeout: TEST_TIMEOUT_MS }, () => {
  it('-o /dev/stdout under >> appends to the file, whose earlier content stays', async ({ expect }) => {
    const log = join(tempDir('kb-targets-'), 'log.txt');
    writeFileSync(log, 'earlier\n');
    const result = await runShell('log=$1; shift; "$@" export -o /dev/stdout >> "$log"', [log, ...KB], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe(`earlier\n${exported}`);
    expect(lstatSync(log).isFile()).toBe(true);
  });

  it('-o /dev/stdout in a subshell group keeps what came before and after it', async ({ expect }) => {
    const out = join(tempDir('kb-targets-'), 'r.txt');
    const result = await runShell('out=$1; shift; (echo header; "$@" export -o /dev/stdout; echo footer) > "$out"', [out, ...KB], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`header\n${exported}footer\n`);
  });

  it('-o /dev/stdout into a pipe, and -o /dev/fd/3 onto a descriptor opened for appending', async ({ expect }) => {
    const out = join(tempDir('kb-targets-'), 'fd3.txt');
    writeFileSync(out, 'before\n');
    const [piped, fd3] = await Promise.all([
      runShell('"$@" export -o /dev/stdout | cat', KB, { env }),
      runShell('out=$1; shift; "$@" export -o /dev/fd/3 3>> "$out"', [out, ...KB], { env }),
    ]);
    expect(piped.code, describeRun(piped)).toBe(0);
    expect(piped.stdout).toBe(exported);
    expect(fd3.code, describeRun(fd3)).toBe(0);
    expect(fd3.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toBe(`before\n${exported}`);
  });

  it('a FIFO is written to, and stays a FIFO', async ({ expect }) => {
    const dir = tempDir('kb-targets-');
    const fifo = join(dir, 'fifo');
    const out = join(dir, 'read.txt');
    execFileSync('mkfifo', [fifo]);
    const result = await runShell('fifo=$1; out=$2; shift 2; cat "$fifo" > "$out" & "$@" export -o "$fifo"; status=$?; wait; exit $status', [fifo, out, ...KB], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(exported);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['fifo', 'read.txt']);
  });

  it('-o /dev/stdout | head -1: a reader that went away is no failure, as for stdout itself', async ({ expect }) => {
    const org = await orgEnv(server, 'targets-large');
    // Far more than a pipe holds, so that kb is still writing when head has gone.
    const description = 'x'.repeat(1000);
    for (let index = 0; index < 200; index++) {
      await apiData(expect, server.url, org.token, 'POST', '/ns_create', { key: `ns-${String(index).padStart(3, '0')}`, description });
    }
    const result = await runShell('{ "$@" export -o /dev/stdout; echo "kb exited $?" >&2; } | head -1', KB, { env: org.env });
    expect(result.stdout).toBe('version: 1\n');
    expect(result.stderr, describeRun(result)).toMatch(/kb exited 0\n$/);
    expect(result.stderr).not.toMatch(/Error|EPIPE/);
  });
});

describe.concurrent('kb export -o: a regular file is replaced whole; a dangling link is written through', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a regular file is replaced, its mode kept, nothing left beside it', async ({ expect }) => {
    const dir = tempDir('kb-targets-');
    const path = join(dir, 'kb.yaml');
    writeFileSync(path, 'old content that is longer than nothing\n', { mode: 0o640 });
    execFileSync('chmod', ['0640', path]);
    const result = await kb(['export', '-o', path], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(exported);
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir)).toEqual(['kb.yaml']);
  });

  it('a dangling symbolic link stays a link: its target is made, as `>` would make it', async ({ expect }) => {
    const dir = tempDir('kb-targets-');
    const link = join(dir, 'current.yaml');
    symlinkSync('exports/kb.yaml', link);
    execFileSync('mkdir', [join(dir, 'exports')]);
    const result = await kb(['export', '-o', link], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('exports/kb.yaml');
    expect(readFileSync(join(dir, 'exports', 'kb.yaml'), 'utf8')).toBe(exported);
    expect(readdirSync(join(dir, 'exports'))).toEqual(['kb.yaml']);
  });

  it('into a directory that does not exist: one line naming it, exit 1, nothing made', async ({ expect }) => {
    const dir = tempDir('kb-targets-');
    const [relative, nested] = await Promise.all([
      runShell('"$@" export -o missing-dir/kb.yaml', KB, { env, cwd: dir }),
      kb(['export', '-o', join(dir, 'a', 'b', 'kb.json')], { env }),
    ]);
    expectFailure(expect, relative, 1, 'Cannot write missing-dir/kb.yaml: the directory missing-dir does not exist');
    expectFailure(expect, nested, 1, `Cannot write ${join(dir, 'a', 'b', 'kb.json')}: the directory ${join(dir, 'a')} does not exist`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('to a path that ends in a slash: a directory, as a shell\'s > takes it, never a file of that name', async ({ expect }) => {
    const dir = tempDir('kb-targets-');
    const result = await runShell('"$@" export -o missing-dir/', KB, { env, cwd: dir });
    expectFailure(expect, result, 1, 'Cannot write missing-dir/: it is a directory (EISDIR)');
    expect(readdirSync(dir)).toEqual([]);
  });
});
