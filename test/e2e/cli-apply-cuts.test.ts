import { writeFileSync } from 'node:fs';
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv } from '../helpers/cli.js';
import { apiData, describeRun, kb, lines } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * kb apply's promise (README, kb apply) over connections cut while its changes are pipelined: a TCP proxy between the
 * built CLI and a real kb serve cuts connections at points fast-check picks (after N bytes of requests, after N bytes
 * of replies, in the middle of a reply). Whatever is cut, no namespace is made twice or half, kb exits 0 with every
 * change applied or exits 6 (network) with a report that is true of the server, and a second apply settles the rest.
 * A create whose connection closed after it was sent may have run: the report lists it as "Maybe applied", never as
 * applied or not (it once listed it as not applied, though the server had run it).
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-apply-cuts' });
});
afterAll(() => server?.close());

/** Where one connection through the proxy is cut: both its sockets destroyed at that point. */
type Cut =
  | { kind: 'request'; bytes: number } // after forwarding this many bytes of requests to kb serve
  | { kind: 'reply'; bytes: number } // after forwarding this many bytes of replies to kb
  | { kind: 'mid-reply'; chunk: number }; // half-way through the reply chunk of this number (0 first)

const cut: fc.Arbitrary<Cut> = fc.oneof(
  fc.record({ kind: fc.constant('request' as const), bytes: fc.integer({ min: 1, max: 20_000 }) }),
  fc.record({ kind: fc.constant('reply' as const), bytes: fc.integer({ min: 1, max: 16_000 }) }),
  fc.record({ kind: fc.constant('mid-reply' as const), chunk: fc.integer({ min: 0, max: 6 }) }),
);

interface CutProxy {
  url: string;
  /** How many connections kb opened through it. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A proxy to `target` whose i-th connection is cut as `cuts[i]` says. Past the list, connections pass untouched, or
 * with `repeat`, are cut as the list says again from its start (a deployment that keeps failing: retries run out).
 */
async function startCutProxy(target: string, cuts: readonly Cut[], repeat: boolean): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let opened = 0;
  const proxy: Server = createServer((client) => {
    const plan = repeat ? cuts[opened++ % cuts.length] : cuts[opened++];
    const upstream = createConnection({ host: hostname, port: Number(port) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let sent = 0;
    let received = 0;
    let chunks = 0;
    client.on('data', (data: Buffer) => {
      if (plan?.kind === 'request' && sent + data.length >= plan.bytes) {
        upstream.write(data.subarray(0, plan.bytes - sent), kill);
        return;
      }
      sent += data.length;
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (plan?.kind === 'reply' && received + data.length >= plan.bytes) {
        client.write(data.subarray(0, plan.bytes - received), kill);
        return;
      }
      if (plan?.kind === 'mid-reply' && chunks++ === plan.chunk) {
        client.write(data.subarray(0, Math.max(1, data.length >> 1)), kill);
        return;
      }
      received += data.length;
      client.write(data);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    connections: () => opened,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

const COUNT = 100;
const keys = Array.from({ length: COUNT }, (_, i) => `ns-${String(i).padStart(3, '0')}`);
const descriptionOf = (key: string) => `Namespace ${key}`;

function planFile(): string {
  const path = join(tempDir('kb-apply-cuts-'), 'plan.json');
  writeFileSync(path, JSON.stringify({ version: 1, namespaces: keys.map((key) => ({ key, description: descriptionOf(key) })) }));
  return path;
}

/** The namespaces of the organization, read straight from kb serve: key to description. */
async function namespacesOn(token: string): Promise<Map<string, unknown>> {
  const listed = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as Array<{ key: string; description: unknown }>;
  const found = new Map<string, unknown>();
  for (const ns of listed) {
    expect(found.has(ns.key), `namespace ${ns.key} listed twice`).toBe(false);
    found.set(ns.key, ns.description);
  }
  return found;
}

/** The namespaces a report of ApplyError lists under a heading ("Applied:" or "Not applied:"). */
function listed(stderr: string, heading: string): string[] {
  const report = lines(stderr);
  const at = report.indexOf(heading);
  if (at < 0) return [];
  const found: string[] = [];
  for (const line of report.slice(at + 1)) {
    const match = /^ {2}\+ namespace (\S+) /.exec(line);
    if (match === null) break;
    found.push(match[1] as string);
  }
  return found;
}

const RUNS = 15;
let run = 0;
/** Runs whose kb opened more connections than its 2: a connection was cut and its requests went again. */
let resent = 0;

describe('kb apply through connections cut while pipelined', { timeout: 300_000 }, () => {
  it('keeps its promise wherever the connections are cut', async () => {
    const file = planFile();
    await fc.assert(
      fc.asyncProperty(fc.array(cut, { minLength: 1, maxLength: 6 }), fc.boolean(), async (cuts, repeat) => {
        const org = `cuts-${run++}`;
        const token = await server.newToken(org);
        const proxy = await startCutProxy(server.url, cuts, repeat);
        let through;
        try {
          through = await kb(['apply', '-f', file], { env: isolatedEnv({ KB_URL: proxy.url, KB_TOKEN: token }), timeoutMs: 60_000 });
        } finally {
          await proxy.close();
        }
        if (proxy.connections() > 2) resent++;
        const seen = `cuts ${JSON.stringify(cuts)}${repeat ? ' repeated' : ''}, ${proxy.connections()} connections\n${describeRun(through)}`;
        expect(through.signal, `hung: ${seen}`).toBeNull();
        const after = await namespacesOn(token);
        // (a) Nothing made twice (namespacesOn) or half: every namespace there is the file's, with its description.
        for (const [key, description] of after) {
          expect(keys, seen).toContain(key);
          expect(description, seen).toBe(descriptionOf(key));
        }
        if (through.code === 0) {
          // (b) Success: every change applied, and the summary says so.
          expect(after.size, seen).toBe(COUNT);
          expect(through.stderr, seen).toContain(`Applied ${COUNT} changes: ${COUNT} created, 0 updated, 0 deleted.`);
        } else {
          // (c) A network failure exits 6 (docs/contract.md, Exit codes), and the report is true of the server.
          expect(through.code, seen).toBe(6);
          const stopped = lines(through.stderr).find((line) => line.startsWith('Stopped after '));
          if (stopped === undefined) {
            // The plan's read failed: nothing was sent.
            expect(after.size, seen).toBe(0);
          } else {
            const applied = listed(through.stderr, 'Applied:');
            // Sent with no reply: the server may or may not have run them, and the report says just that.
            const maybe = listed(through.stderr, 'Maybe applied (sent, but the outcome is unknown; applying again settles them):');
            const notApplied = listed(through.stderr, 'Not applied:');
            expect(stopped, seen).toBe(`Stopped after ${applied.length} of ${COUNT} changes.`);
            expect(applied.length + maybe.length + notApplied.length, seen).toBe(COUNT);
            expect(new Set([...applied, ...maybe, ...notApplied]).size, seen).toBe(COUNT);
            for (const key of applied) expect(after.has(key), `${key} reported applied, absent: ${seen}`).toBe(true);
            for (const key of notApplied) expect(after.has(key), `${key} reported not applied, present: ${seen}`).toBe(false);
          }
        }
        // (d) A second apply, straight to kb serve, succeeds and leaves exactly the file's namespaces.
        const again = await kb(['apply', '-f', file], { env: isolatedEnv({ KB_URL: server.url, KB_TOKEN: token }), timeoutMs: 60_000 });
        expect(again.code, `${describeRun(again)}\nafter ${seen}`).toBe(0);
        const settled = await namespacesOn(token);
        expect([...settled.keys()].sort(), seen).toEqual(keys);
        for (const [key, description] of settled) expect(description, seen).toBe(descriptionOf(key));
      }),
      { numRuns: RUNS },
    );
    // Most runs cut a connection under kb's feet, so that its requests went again (undici's re-sends, kb's retries).
    expect(resent).toBeGreaterThanOrEqual(RUNS / 2);
  });
});
