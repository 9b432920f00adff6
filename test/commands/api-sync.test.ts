import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { freshEnv, kb } from './run.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'api-cmd' });
});
afterAll(() => server.close());

async function orgEnv(org: string): Promise<Record<string, string>> {
  return freshEnv({ KB_URL: server.url, KB_TOKEN: await server.newToken(org) });
}

describe('kb api', () => {
  it('-f sends strings and -F typed values as a POST body, and prints the reply in one line when piped', async () => {
    const env = await orgEnv('api-fields');
    const result = await kb(['api', 'ns_create', '-f', 'key=docs', '-F', 'description=null'], { env });
    expect(result).toEqual({ code: 0, stdout: '{"success":true,"data":{"key":"docs","description":null}}\n', stderr: '', asked: [] });
    const typed = await kb(['api', 'ns_update', '-f', 'namespace=docs', '-f', 'data[description]=true'], { env });
    expect(JSON.parse(typed.stdout)).toEqual({ success: true, data: { key: 'docs', description: 'true' } });
  });

  it('-F key=@- reads the value from stdin, and on a terminal the reply is indented', async () => {
    const env = await orgEnv('api-stdin');
    await kb(['api', 'ns_create', '-f', 'key=docs'], { env });
    const result = await kb(['api', 'ns_update', '-f', 'namespace=docs', '-F', 'data[description]=@-'], { env, stdin: 'From stdin' });
    expect(JSON.parse(result.stdout)).toEqual({ success: true, data: { key: 'docs', description: 'From stdin' } });
    const pretty = await kb(['api', 'ns_list'], { env, tty: true });
    expect(pretty.stdout).toBe('{\n  "success": true,\n  "data": [\n    {\n      "key": "docs",\n      "description": "From stdin"\n    }\n  ]\n}\n');
  });

  it('a reply other than 2xx is printed, its message goes to stderr, and the exit code is its status\'s', async () => {
    const env = await orgEnv('api-fail');
    const missing = await kb(['api', 'ns_update', '-f', 'namespace=nope', '-F', 'data[description]=null'], { env });
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ success: false });
    expect(missing.stderr).toBe(`Error: ${(JSON.parse(missing.stdout) as { message: string }).message} (HTTP 404)\n`);
    const invalid = await kb(['api', 'ns_create', '-F', 'key=3'], { env });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/\(HTTP 400\)\n/);
  });

  it('exits 2 on a field without =, before sending anything', async () => {
    expect(await kb(['api', 'ns_create', '-f', 'key'], { env: await orgEnv('api-usage') })).toEqual({
      code: 2, stdout: '', stderr: 'Error: Invalid field "key": expected key=value\nFor example: -f key=docs -F count=3.\n', asked: [],
    });
  });
});

const FILE = `version: 1
namespaces:
  - key: docs
    description: Product docs
    bases:
      - key: faq
        description: Questions
      - key: guide
`;

describe('kb apply, export and import', () => {
  it('apply --dry-run prints the plan and changes nothing; apply makes it so; a second apply has nothing to do', async () => {
    const env = await orgEnv('sync-apply');
    const file = join(tempDir('kb-cmd-sync-'), 'kb.yaml');
    writeFileSync(file, FILE);
    const plan =
      'Plan:\n  + namespace docs (description: "Product docs")\n  + base docs/faq (description: "Questions")\n  + base docs/guide (description: none)\n' +
      '3 to create, 0 to update, 0 to delete.\n';
    const dry = await kb(['apply', '-f', file, '--dry-run'], { env });
    expect(dry).toMatchObject({ code: 0, stdout: '' });
    expect(dry.stderr).toBe(`${plan}Dry run: nothing was changed.\n`);
    expect((await kb(['ns', 'list', '--json'], { env })).stdout).toBe('[]\n');
    const applied = await kb(['apply', '-f', file], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr.startsWith(plan)).toBe(true);
    expect((await kb(['base', 'list', 'docs'], { env })).stdout).toBe('KEY    DESCRIPTION\nfaq    Questions\nguide\n');
    const again = await kb(['apply', '-f', file], { env });
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr.startsWith('No changes: the deployment already matches the file.\n')).toBe(true);
  });

  it('apply --prune without a terminal needs --yes (exit 2), and deletes with it', async () => {
    const env = await orgEnv('sync-prune');
    await kb(['base', 'create', 'docs', 'old', '--create-namespace'], { env });
    const file = join(tempDir('kb-cmd-sync-'), 'kb.yaml');
    writeFileSync(file, FILE);
    const refused = await kb(['apply', '-f', file, '--prune'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Error: Cannot prompt: not a terminal (or CI is set). Pass --yes to delete the 1 base of the plan without confirmation.\n');
    expect((await kb(['base', 'list', 'docs', '--json'], { env })).stdout).toContain('"old"');
    expect((await kb(['apply', '-f', file, '--prune', '--yes'], { env })).code).toBe(0);
    expect(JSON.parse((await kb(['base', 'list', 'docs', '--json'], { env })).stdout).map((base: { key: string }) => base.key)).toEqual(['faq', 'guide']);
  });

  it('export writes what apply or import reads, byte for byte; import - reads stdin', async () => {
    const source = await orgEnv('sync-export');
    const file = join(tempDir('kb-cmd-sync-'), 'kb.yaml');
    writeFileSync(file, FILE);
    await kb(['apply', '-f', file], { env: source });
    const exported = await kb(['export'], { env: source });
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    expect(exported.stdout).toBe(`version: 1\nnamespaces:\n  - key: docs\n    description: Product docs\n    bases:\n      - key: faq\n        description: Questions\n      - key: guide\n        description: null\n`);

    const target = await orgEnv('sync-import');
    const imported = await kb(['import', '-', '--json'], { env: target, stdin: exported.stdout });
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ dryRun: false, counts: { create: 3, update: 0, delete: 0 } });
    expect((await kb(['export'], { env: target })).stdout).toBe(exported.stdout);

    const out = join(tempDir('kb-cmd-sync-'), 'kb.json');
    const written = await kb(['export', '-o', out], { env: target });
    expect(written).toEqual({ code: 0, stdout: '', stderr: `✓ Exported 1 namespace and 2 bases to ${out}\n`, asked: [] });
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ namespaces: [{ key: 'docs' }] });
  });
});
