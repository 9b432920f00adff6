import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv } from '../helpers/cli.js';
import { describeRun, kb } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { normalizeResources, serializeResources } from '../../src/sync/resources-file.js';

/**
 * Issue 26: export and apply of 100,000 namespaces, on the built bin. What is checked is what they do (the file,
 * the plan, the requests), never how long they take: `npm run bench -- --only export-scale` measures that.
 */
const COUNT = 100_000;
/** One namespace in this many has bases. */
const BASE_EVERY = 10;

const key = (i: number) => `ns-${String(i).padStart(6, '0')}`;
/** Descriptions that the YAML file has quoted: one YAML would read as a boolean, one with `: ` and ` #`, a bidi override. */
const AWKWARD: Record<number, string> = { 7: 'true', 70: 'a: b # c', 7000: '\u202Ebidi' };
const description = (i: number) => AWKWARD[i] ?? `Namespace ${i}`;

let server: TestServer;
let proxy: Server;
let proxyUrl: string;
/** Every request the CLI sent through the proxy, as `METHOD /path`. */
const requests: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ org: 'scale' });
  const principal = await server.store.authenticate(createHash('sha256').update(server.token).digest());
  if (principal === null) throw new Error('the test token does not authenticate');
  const { orgId } = principal;
  // Through the store, all at once: its group commit writes them in a few transactions, where HTTP would take minutes.
  await Promise.all(Array.from({ length: COUNT }, (_, i) => server.store.nsCreate(orgId, { key: key(i), description: description(i) })));
  await Promise.all(
    Array.from({ length: COUNT / BASE_EVERY }, (_, j) => [
      server.store.baseCreate(orgId, { namespace: key(j * BASE_EVERY), key: 'faq', description: j === 3 ? null : `FAQ ${j}` }),
      ...(j % 100 === 0 ? [server.store.baseCreate(orgId, { namespace: key(j * BASE_EVERY), key: 'Alpha', description: 'first in byte order' })] : []),
    ]).flat(),
  );
  // A proxy that notes each request on its way to the server.
  const target = new URL(server.url);
  proxy = createServer((incoming, outgoing) => {
    requests.push(`${incoming.method} ${(incoming.url ?? '').split('?')[0]}`);
    const forward = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(outgoing);
    });
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await server?.close();
});

/** The requests a run sent, in order, and clears the list. */
function taken(): string[] {
  return requests.splice(0);
}

describe('kb export and kb apply at 100,000 namespaces', () => {
  it('export writes every namespace and base; apply of that export finds no change, and sends nothing that writes', { timeout: 300_000 }, async () => {
    const env = isolatedEnv({ KB_URL: proxyUrl, KB_TOKEN: server.token });
    const path = join(tempDir('kb-sync-scale-'), 'kb.yaml');

    const exported = await kb(['export', '-o', path], { env, timeoutMs: 120_000 });
    expect(exported.code, describeRun(exported)).toBe(0);
    expect(exported.stderr).toContain(`Exported 100000 namespaces and ${COUNT / BASE_EVERY + COUNT / BASE_EVERY / 100} bases to ${path}`);
    // Two reads, whatever the count: the namespaces, and every base at once.
    expect(taken()).toEqual(['GET /v1/ns_list', 'GET /v1/base_list_all']);
    const expected = normalizeResources({
      namespaces: Array.from({ length: COUNT }, (_, i) => ({
        key: key(i),
        description: description(i),
        bases:
          i % BASE_EVERY === 0
            ? [{ key: 'faq', description: i === 3 * BASE_EVERY ? null : `FAQ ${i / BASE_EVERY}` }, ...(i % (BASE_EVERY * 100) === 0 ? [{ key: 'Alpha', description: 'first in byte order' }] : [])]
            : [],
      })),
    });
    const text = readFileSync(path, 'utf8');
    expect(text).toBe(await serializeResources(expected, 'yaml'));
    expect(text).toContain('  - key: ns-000070\n    description: "a: b # c"\n');

    const dry = await kb(['apply', '--dry-run', '-f', path, '--json'], { env, timeoutMs: 120_000 });
    expect(dry.code, describeRun(dry)).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, changes: [], counts: { create: 0, update: 0, delete: 0 }, kept: { namespaces: 0, bases: 0 }, applied: 0 });
    // The same two reads, sent together.
    expect(taken().sort()).toEqual(['GET /v1/base_list_all', 'GET /v1/ns_list']);

    const applied = await kb(['apply', '-f', path], { env, timeoutMs: 120_000 });
    expect(applied.code, describeRun(applied)).toBe(0);
    expect(applied.stderr).toBe('No changes: the deployment already matches the file.\n');
    expect(taken().sort()).toEqual(['GET /v1/base_list_all', 'GET /v1/ns_list']);

    // One description changed near the end of the file, one base added near the start: exactly those two writes.
    const edited = text
      .replace('  - key: ns-099998\n    description: Namespace 99998\n', '  - key: ns-099998\n    description: Namespace 99998, edited\n')
      .replace('  - key: ns-000001\n    description: Namespace 1\n    bases: []\n', '  - key: ns-000001\n    description: Namespace 1\n    bases:\n      - key: new-base\n        description: null\n');
    expect(edited).not.toBe(text);
    const editedPath = join(tempDir('kb-sync-scale-'), 'edited.yaml');
    writeFileSync(editedPath, edited);
    const changed = await kb(['apply', '-f', editedPath, '--json'], { env, timeoutMs: 120_000 });
    expect(changed.code, describeRun(changed)).toBe(0);
    expect(JSON.parse(changed.stdout)).toMatchObject({
      dryRun: false,
      changes: [
        { action: 'update', type: 'namespace', key: 'ns-099998', description: 'Namespace 99998, edited', previous: 'Namespace 99998' },
        { action: 'create', type: 'base', namespace: 'ns-000001', key: 'new-base', description: null },
      ],
      applied: 2,
    });
    expect(taken().sort()).toEqual(['GET /v1/base_list_all', 'GET /v1/ns_list', 'POST /v1/base_create', 'POST /v1/ns_update']);
  });
});
