import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KB_BIN, runProcess } from '../helpers/cli.js';
import { apiData, describeRun, kb, lines, orgEnv, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * `kb apply` of a big plan through the built CLI against a real server: changes go several at a time (the server's
 * group commit takes them together), the report of a plan that stops part-way is exact, and a long plan shows its
 * progress on a terminal, a line per change when piped.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-apply' });
  // A base named `poison` makes its write fail on the server (500): a change that fails in the middle of a plan.
  await server.database.sql("CREATE TRIGGER poison AFTER INSERT ON bases WHEN NEW.key = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END");
});
afterAll(() => server?.close());

/** A file of `count` namespaces, each with two bases; `poisonAt` puts a failing base in that namespace. */
function planFile(count: number, poisonAt?: number): string {
  const namespaces = Array.from({ length: count }, (_, i) => {
    const key = `ns-${String(i).padStart(3, '0')}`;
    const bases = [{ key: 'first', description: `first of ${key}` }, { key: i === poisonAt ? 'poison' : 'second', description: null }];
    return { key, description: `Namespace ${i}`, bases };
  });
  const path = join(tempDir('kb-apply-'), 'plan.json');
  writeFileSync(path, JSON.stringify({ version: 1, namespaces }));
  return path;
}

describe('kb apply of many changes', { timeout: TEST_TIMEOUT_MS }, () => {
  it('applies 180 changes, a line for each when piped, and a second apply finds nothing to do', async () => {
    const { env, token } = await orgEnv(server, 'apply-many');
    const file = planFile(60);
    const applied = await kb(['apply', '-f', file], { env });
    expect(applied.code, describeRun(applied)).toBe(0);
    const done = lines(applied.stderr).filter((line) => line.startsWith('✓ '));
    expect(done).toHaveLength(180);
    expect(applied.stderr).toContain('Applied 180 changes: 180 created, 0 updated, 0 deleted.');
    const namespaces = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as Array<{ key: string }>;
    expect(namespaces).toHaveLength(60);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=ns-059')).toEqual([
      { namespace: 'ns-059', key: 'first', description: 'first of ns-059' },
      { namespace: 'ns-059', key: 'second', description: null },
    ]);
    const again = await kb(['apply', '-f', file], { env });
    expect(again.code, describeRun(again)).toBe(0);
    expect(again.stderr).toContain('No changes: the deployment already matches the file.');
  });

  it('sends its changes on 2 connections at most, several on each before their replies (pipelined)', async () => {
    const { env } = await orgEnv(server, 'apply-connections');
    const connections = new Set<unknown>();
    const unanswered = new Map<unknown, number>();
    let mostUnanswered = 0;
    const arrived = (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      connections.add(socket);
      const now = (unanswered.get(socket) ?? 0) + 1;
      unanswered.set(socket, now);
      mostUnanswered = Math.max(mostUnanswered, now);
      response.once('finish', () => unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1));
    };
    server.app.server.on('request', arrived);
    try {
      const applied = await kb(['apply', '-f', planFile(60)], { env });
      expect(applied.code, describeRun(applied)).toBe(0);
    } finally {
      server.app.server.off('request', arrived);
    }
    expect(connections.size).toBeGreaterThanOrEqual(1);
    expect(connections.size).toBeLessThanOrEqual(2);
    expect(mostUnanswered).toBeGreaterThan(1);
  });

  it('reports exactly what was applied and what was not when a change fails part-way', async () => {
    const { env, token } = await orgEnv(server, 'apply-fails');
    const failed = await kb(['apply', '-f', planFile(40, 25)], { env });
    expect(failed.code, describeRun(failed)).toBe(1);
    expect(failed.stderr).toMatch(/Could not create base ns-025\/poison: /);
    const report = lines(failed.stderr);
    const at = report.findIndex((line) => /^Stopped after \d+ of 120 changes\.$/.test(line));
    expect(at, failed.stderr).toBeGreaterThanOrEqual(0);
    const applied = report.slice(report.indexOf('Applied:', at) + 1, report.indexOf('Not applied:', at));
    const notApplied = report.slice(report.indexOf('Not applied:', at) + 1).filter((line) => line.startsWith('  '));
    expect(notApplied[0]).toBe('  + base ns-025/poison (description: none)');
    expect(applied.length + notApplied.length).toBe(120);
    expect(report[at]).toBe(`Stopped after ${applied.length} of 120 changes.`);
    // Every namespace went before any base; what the report says was applied is on the server, and nothing else.
    expect(applied.slice(0, 40).every((line) => line.startsWith('  + namespace '))).toBe(true);
    const onServer = new Set<string>();
    for (const ns of (await apiData(expect, server.url, token, 'GET', '/ns_list')) as Array<{ key: string }>) {
      onServer.add(`namespace ${ns.key}`);
      for (const base of (await apiData(expect, server.url, token, 'GET', `/base_list?namespace=${ns.key}`)) as Array<{ key: string }>) {
        onServer.add(`base ${ns.key}/${base.key}`);
      }
    }
    const named = (line: string) => (/^ {2}\+ (namespace \S+|base \S+)/.exec(line) as RegExpExecArray)[1] as string;
    expect(new Set(applied.map(named))).toEqual(onServer);
    for (const line of notApplied) expect(onServer.has(named(line)), line).toBe(false);
  });

  it('shows its progress on a terminal, in one line rewritten, instead of a line per change', async () => {
    const { env } = await orgEnv(server, 'apply-terminal');
    // Python's pty gives the built kb a terminal; CI would turn every animation off.
    const onTerminal = await runProcess('python3', ['-c', 'import pty, sys; pty.spawn(sys.argv[1:])', process.execPath, KB_BIN, 'apply', '-f', planFile(30)], {
      env: { ...env, CI: '' },
    });
    expect(onTerminal.code, describeRun(onTerminal)).toBe(0);
    expect(onTerminal.stdout).toContain('\r\u001B[KApplying: ');
    expect(onTerminal.stdout).toContain('Applying: 90/90 changes');
    expect(onTerminal.stdout).not.toContain('✓ + namespace');
    expect(onTerminal.stdout).toContain('Applied 90 changes: 90 created, 0 updated, 0 deleted.');
  });
});
