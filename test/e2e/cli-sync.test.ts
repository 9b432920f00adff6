import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { isolatedEnv, KB_BIN } from '../helpers/cli.js';
import { apiData, describeRun, expectFailure, jsonOut, kb, lines, orgEnv, runShell, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { fullDevice } from '../helpers/temp.js';

// Two real servers: content moves between organizations of one, and between the two deployments.
let server: TestServer;
let remote: TestServer;
beforeAll(async () => {
  [server, remote] = await Promise.all([startTestServer({ org: 'cli-sync' }), startTestServer({ org: 'cli-sync-remote' })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), remote?.close()]);
});

/** An organization's content, made through the API in an order unlike the sorted one, with awkward descriptions. */
async function seed(expect: ExpectStatic, url: string, token: string): Promise<void> {
  const post = (route: string, body: unknown) => apiData(expect, url, token, 'POST', route, body);
  await post('/ns_create', { key: 'zeta', description: 'Last: "quoted", # not a comment' });
  await post('/ns_create', { key: 'Alpha', description: null });
  await post('/base_create', { namespace: 'zeta', key: 'null', description: 'Line one\nline two' });
  await post('/base_create', { namespace: 'zeta', key: '123', description: ' leading space \u{1F600}' });
  await post('/base_create', { namespace: 'docs', key: 'faq', description: 'true' });
  await post('/base_create', { namespace: 'docs', key: 'A_first' });
}

function file(name: string, text?: string): string {
  const path = join(tempDir('kb-sync-'), name);
  if (text !== undefined) writeFileSync(path, text);
  return path;
}

/** Exit 0; returns stdout. */
function ok(expect: ExpectStatic, result: Awaited<ReturnType<typeof kb>>): string {
  expect(result.code, describeRun(result)).toBe(0);
  return result.stdout;
}

describe.concurrent('kb export, apply and import against real servers', { timeout: TEST_TIMEOUT_MS }, () => {
  it('export -> apply into another organization -> export gives byte-identical files, in YAML and JSON', async ({ expect }) => {
    const source = await orgEnv(server, 'sync-source');
    const target = await orgEnv(server, 'sync-target');
    await seed(expect, server.url, source.token);
    const exported = file('kb.yaml');
    const written = await kb(['export', '-o', exported], { env: source.env });
    expect(written.code, describeRun(written)).toBe(0);
    expect(written.stdout).toBe('');
    expect(lines(written.stderr)).toEqual([`✓ Exported 3 namespaces and 4 bases to ${exported}`]);
    const yaml = readFileSync(exported, 'utf8');
    expect(yaml.startsWith('version: 1\nnamespaces:\n  - key: Alpha\n    description: null\n    bases: []\n  - key: docs\n')).toBe(true);
    expect(yaml).not.toMatch(/sync-source|127\.0\.0\.1|\d{4}-\d\d-\d\dT/);

    ok(expect, await kb(['apply', '-f', exported], { env: target.env }));
    const [again, sourceJson, targetJson] = await Promise.all([
      kb(['export'], { env: target.env }),
      kb(['export', '--format', 'json'], { env: source.env }),
      kb(['export', '--format', 'json'], { env: target.env }),
    ]);
    expect(ok(expect, again)).toBe(yaml);
    expect(ok(expect, targetJson)).toBe(ok(expect, sourceJson));
    expect(JSON.parse(sourceJson.stdout)).toMatchObject({ version: 1, namespaces: [{ key: 'Alpha' }, { key: 'docs' }, { key: 'zeta' }] });
    expect(await apiData(expect, server.url, target.token, 'GET', '/base_list?namespace=zeta')).toEqual([
      { namespace: 'zeta', key: '123', description: ' leading space \u{1F600}' },
      { namespace: 'zeta', key: 'null', description: 'Line one\nline two' },
    ]);
  });

  it('import moves content to another deployment and back through stdin, and exports stay identical', async ({ expect }) => {
    const local = await orgEnv(server, 'sync-local');
    const prod = await orgEnv(remote, 'sync-prod');
    await seed(expect, server.url, local.token);
    const yaml = ok(expect, await kb(['export'], { env: local.env }));
    const imported = await kb(['import', '-'], { env: prod.env, input: yaml });
    expect(imported.code, describeRun(imported)).toBe(0);
    expect(lines(imported.stderr).at(-1)).toBe('Applied 7 changes: 7 created, 0 updated, 0 deleted.');
    expect(ok(expect, await kb(['export'], { env: prod.env }))).toBe(yaml);
    // And back into a fresh organization of the first deployment.
    const back = await orgEnv(server, 'sync-back');
    ok(expect, await kb(['import', '-'], { env: back.env, input: ok(expect, await kb(['export', '--format', 'json'], { env: prod.env })) }));
    expect(ok(expect, await kb(['export'], { env: back.env }))).toBe(yaml);
  });

  it('apply twice: the second does nothing and says so', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-twice');
    const path = file('kb.yaml', 'version: 1\nnamespaces:\n  - key: docs\n    description: Docs\n    bases:\n      - key: faq\n');
    const first = await kb(['apply', '-f', path], { env });
    expect(first.code, describeRun(first)).toBe(0);
    expect(lines(first.stderr)).toEqual([
      'Plan:',
      '  + namespace docs (description: "Docs")',
      '  + base docs/faq (description: none)',
      '2 to create, 0 to update, 0 to delete.',
      '✓ + namespace docs (description: "Docs")',
      '✓ + base docs/faq (description: none)',
      'Applied 2 changes: 2 created, 0 updated, 0 deleted.',
    ]);
    const [second, secondJson] = [await kb(['apply', '-f', path], { env }), await kb(['apply', '-f', path, '--json'], { env })];
    expect(second.code, describeRun(second)).toBe(0);
    expect(second.stdout).toBe('');
    expect(lines(second.stderr)).toEqual(['No changes: the deployment already matches the file.']);
    expect(jsonOut(expect, secondJson)).toEqual({ dryRun: false, changes: [], counts: { create: 0, update: 0, delete: 0 }, kept: { namespaces: 0, bases: 0 }, applied: 0 });
    expect(secondJson.stderr).toBe('');
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'faq', description: null }]);
  });

  it('--dry-run prints the plan and writes nothing', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-dry');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'old', description: 'Old' });
    const path = file('kb.json', JSON.stringify({ version: 1, namespaces: [{ key: 'docs', description: 'New', bases: [{ key: 'new' }] }, { key: 'more' }] }));
    const [human, json] = await Promise.all([
      kb(['apply', '-f', path, '--dry-run', '--prune'], { env }),
      kb(['apply', '-f', path, '--dry-run', '--prune', '--json'], { env }),
    ]);
    expect(human.code, describeRun(human)).toBe(0);
    expect(human.stdout).toBe('');
    expect(lines(human.stderr)).toEqual([
      'Plan:',
      '  ~ namespace docs: description none -> "New"',
      '  + namespace more (description: none)',
      '  + base docs/new (description: none)',
      '  - base docs/old',
      '2 to create, 1 to update, 1 to delete.',
      'Dry run: nothing was changed.',
    ]);
    expect(jsonOut(expect, json)).toEqual({
      dryRun: true,
      changes: [
        { action: 'update', type: 'namespace', key: 'docs', description: 'New', previous: null },
        { action: 'create', type: 'namespace', key: 'more', description: null },
        { action: 'create', type: 'base', namespace: 'docs', key: 'new', description: null },
        { action: 'delete', type: 'base', namespace: 'docs', key: 'old', previous: 'Old' },
      ],
      counts: { create: 2, update: 1, delete: 1 },
      kept: { namespaces: 0, bases: 0 },
      applied: 0,
    });
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([{ key: 'docs', description: null }]);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'old', description: 'Old' }]);
  });

  it('--prune deletes the bases the file does not list, only with --yes without a terminal; without --prune they stay', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-prune');
    for (const key of ['keep', 'drop']) await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key });
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'elsewhere', key: 'untouched' });
    const path = file('kb.yaml', 'version: 1\nnamespaces:\n  - key: docs\n    bases:\n      - key: keep\n      - key: add\n');
    const bases = async (ns: string) => ((await apiData(expect, server.url, token, 'GET', `/base_list?namespace=${ns}`)) as { key: string }[]).map((base) => base.key);

    const refused = await kb(['apply', '-f', path, '--prune'], { env });
    expect(refused.code, describeRun(refused)).toBe(2);
    expect(lines(refused.stderr).at(-1)).toBe('Error: Cannot prompt: not a terminal (or CI is set). Pass --yes to delete the 1 base of the plan without confirmation.');
    expect(lines(refused.stderr)).toContain('  - base docs/drop');
    expect(await bases('docs')).toEqual(['drop', 'keep']);

    const kept = await kb(['apply', '-f', path], { env });
    expect(kept.code, describeRun(kept)).toBe(0);
    expect(kept.stderr, describeRun(kept)).toContain(
      '\nLeft as they are, on the deployment but not in the file:\n  1 namespace (never deleted from a file; `kb ns delete` deletes it)\n  1 base (--prune deletes it)\n',
    );
    expect(await bases('docs')).toEqual(['add', 'drop', 'keep']);

    const pruned = await kb(['apply', '-f', path, '--prune', '--yes', '--json'], { env });
    expect(jsonOut(expect, pruned)).toMatchObject({ changes: [{ action: 'delete', type: 'base', namespace: 'docs', key: 'drop' }], applied: 1 });
    expect(await bases('docs')).toEqual(['add', 'keep']);
    expect(await bases('elsewhere')).toEqual(['untouched']);
  });

  it('import never deletes, and takes no --prune', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-import');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'extra' });
    const path = file('kb.yaml', 'version: 1\nnamespaces:\n  - key: docs\n    bases: []\n');
    const [imported, prune] = await Promise.all([kb(['import', path, '--json'], { env }), kb(['import', path, '--prune'], { env })]);
    expect(jsonOut(expect, imported)).toMatchObject({ changes: [], kept: { bases: 1 } });
    expect(prune.code, describeRun(prune)).toBe(2);
    // What it leaves, it says so in import's words: import has no --prune.
    const plain = await kb(['import', path], { env });
    expect(plain.code, describeRun(plain)).toBe(0);
    expect(lines(plain.stderr), describeRun(plain)).toEqual([
      'No changes: the deployment already matches the file.',
      'Left as they are, on the deployment but not in the file:',
      '  1 base (import never deletes; apply --prune deletes it)',
    ]);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'extra', description: null }]);
  });

  it('a bad file names its line and path, exits 2, and changes nothing', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-bad');
    const path = file('kb.yaml', 'version: 1\nnamespaces:\n  - key: docs\n    bases:\n      - key: ok-key\n      - key: x\n');
    const [bad, missing] = await Promise.all([kb(['apply', '-f', path], { env }), kb(['import', join(tempDir(), 'none.yaml')], { env })]);
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(bad.stdout).toBe('');
    expect(lines(bad.stderr)[0]).toMatch(new RegExp(`^Error: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:14: namespaces\\[0\\]\\.bases\\[1\\]\\.key: `));
    expect(missing.code, describeRun(missing)).toBe(2);
    expect(lines(missing.stderr)[0]).toMatch(/^Error: Cannot read FILE .*none\.yaml: no such file$/);
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([]);
  });

  it('export -o a device (a full one, as /dev/full) writes to it, never replacing it with a file', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-device');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs' });
    const device = fullDevice();
    const beside = readdirSync(dirname(device));
    const result = await kb(['export', '-o', device], { env });
    expectFailure(expect, result, 1, `Cannot write ${device}: no space left on the device (ENOSPC)`);
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
    expect(readdirSync(dirname(device))).toEqual(beside);
  });

  it('endless input (stdin from `yes`, -f /dev/zero) stops at 64 MiB with exit 2; a Latin-1 file is refused, not altered', async ({ expect }) => {
    const { env } = await orgEnv(server, 'sync-endless');
    const latin1 = join(tempDir('kb-sync-'), 'latin1.yaml');
    writeFileSync(latin1, Buffer.from('version: 1\nnamespaces:\n  - key: docs\n    description: caf\xe9\n', 'latin1'));
    const [piped, zero, accented] = await Promise.all([
      runShell('yes "a: b" | "$@"', [process.execPath, KB_BIN, 'apply', '-f', '-'], { env, timeoutMs: 60_000 }),
      kb(['apply', '-f', '/dev/zero'], { env }),
      kb(['apply', '-f', latin1], { env }),
    ]);
    expectFailure(expect, piped, 2, 'stdin is larger than 64 MiB: kb reads at most that much input');
    expectFailure(expect, zero, 2, '-f /dev/zero is larger than 64 MiB: kb reads at most that much input');
    expectFailure(expect, accented, 2, `-f ${latin1} is not UTF-8 text`, 'Convert it first, e.g. with `iconv -f LATIN1 -t UTF-8`.');
    expect(jsonOut(expect, await kb(['ns', 'list', '--json'], { env }))).toEqual([]);
  });

  it('export picks JSON for -o *.json, exports only the namespaces asked for, and exits 3 for one that does not exist', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'sync-filter');
    await seed(expect, server.url, token);
    const path = file('out.json');
    const [toJson, filtered, missing] = await Promise.all([
      kb(['export', '-o', path], { env }),
      kb(['export', '--namespace', 'zeta', '-n', 'Alpha', '--format', 'json'], { env }),
      kb(['export', '--namespace', 'docs', '--namespace', 'nope'], { env }),
    ]);
    ok(expect, toJson);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ version: 1 });
    expect((JSON.parse(ok(expect, filtered)) as { namespaces: { key: string }[] }).namespaces.map((ns) => ns.key)).toEqual(['Alpha', 'zeta']);
    expectFailure(expect, missing, 3, 'Namespace nope not found', 'Nothing was written. `kb ns list` shows the namespaces.');
  });
});

describe('against a deployment without base_list', { timeout: TEST_TIMEOUT_MS }, () => {
  let plain: Server;
  let url: string;
  beforeAll(async () => {
    // The API document's operations only: ns_list knows a namespace, anything else is "no such route".
    plain = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const known = request.url === '/v1/ns_list';
        response.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
        response.end(JSON.stringify(known ? { success: true, data: [{ key: 'docs', description: null }] } : { success: false, message: 'Not found' }));
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  it('export says plainly that it cannot list bases, writes nothing, and exits 2 (an extension the deployment lacks)', async ({ expect }) => {
    const env = isolatedEnv({ KB_URL: url, KB_TOKEN: 'kbt_x' });
    const path = join(tempDir('kb-sync-'), 'kb.yaml');
    const [toStdout, toFile] = await Promise.all([kb(['export'], { env }), kb(['export', '-o', path], { env })]);
    const message = 'Cannot export: this deployment does not offer base_list (an extension of kb serve), so the bases of a namespace cannot be listed';
    expectFailure(expect, toStdout, 2, message, 'Nothing was written.');
    expectFailure(expect, toFile, 2, message, 'Nothing was written.');
    expect(existsSync(path)).toBe(false);
  });
});
