import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { isolatedEnv, KB_BIN, runProcess, type RunResult } from '../helpers/cli.js';
import { apiData, describeRun, expectFailure, jsonOut, kb, lines, seededOrg, TEST_TIMEOUT_MS, UUID_V4 } from '../helpers/cli-e2e.js';
import { runRecordingSources } from '../helpers/imports.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * What a gh, kubectl or k9s user tries in the first hour (docs/contract.md, Commands): nothing made by accident, and
 * their habits, on the built kb against a real kb serve.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const namespaceKeys = async (expect: ExpectStatic, token: string) => ((await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[]).map((ns) => ns.key);

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The built kb on a terminal of its own (util-linux `script`, 120 columns), `input` typed ahead; what it printed (stdout
 * and stderr together, as a terminal shows them, line ends as \n) and its exit code.
 */
function onTerminal(args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string }): Promise<RunResult> {
  const command = `stty cols 120 rows 40; exec ${[process.execPath, KB_BIN, ...args].map(quote).join(' ')}`;
  const env = { ...options.env, CI: undefined, CONTINUOUS_INTEGRATION: undefined, NO_COLOR: '1' };
  return runProcess('script', ['-qec', command, '/dev/null'], { env, input: options.input ?? '', timeoutMs: 60_000 }).then((result) => ({
    ...result,
    stdout: result.stdout.replace(/\r\n/g, '\n'),
  }));
}

describe.concurrent('nothing created by accident', { timeout: TEST_TIMEOUT_MS }, () => {
  it('base create into a namespace that does not exist exits 3 naming the close keys, and creates nothing; --create-namespace creates it', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-base-create', ['intro']);
    const typo = await kb(['base', 'create', 'dcos', 'intro'], { env });
    expectFailure(expect, typo, 3, 'Namespace dcos not found. Did you mean docs?', 'Nothing was created. Pass --create-namespace to create it with the base, or run `kb ns create dcos` first.');
    const far = await kb(['base', 'create', 'handbook/intro'], { env });
    expectFailure(expect, far, 3, 'Namespace handbook not found', 'Nothing was created. Pass --create-namespace to create it with the base, or run `kb ns create handbook` first.');
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
    const made = await kb(['base', 'create', 'handbook', 'intro', '--create-namespace', '--json'], { env });
    expect(jsonOut(expect, made)).toEqual({ namespace: 'handbook', key: 'intro', description: null });
    const into = await kb(['base', 'create', 'docs/howto', '--query', 'key'], { env });
    expect(into.stdout, describeRun(into)).toBe('howto\n');
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides', 'handbook']);
  });

  it('kb apply creates the namespaces its file names, and takes the file as an argument', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-apply', ['intro']);
    const file = join(tempDir('kb-first-apply-'), 'teams.yaml');
    writeFileSync(file, 'version: 1\nnamespaces:\n  - key: teams\n    bases:\n      - key: roster\n');
    const [applied, both, neither] = await Promise.all([
      kb(['apply', file], { env }),
      kb(['apply', file, '-f', file], { env }),
      kb(['apply'], { env }),
    ]);
    expect(applied.code, describeRun(applied)).toBe(0);
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides', 'teams']);
    const help = 'For example: `kb apply kb.yaml`, or `kb apply -f kb.yaml`. See `kb apply --help`.';
    expectFailure(expect, both, 2, 'Give the file once: as FILE or with -f, not both', help);
    expectFailure(expect, neither, 2, 'Missing the file to apply', help);
  });

  it('kb ns create without a key: the server generates one without a terminal; on one, kb asks, Enter taking the key it shows', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-ns-create', ['intro']);
    const piped = await kb(['ns', 'create', '--query', 'key'], { env });
    expect(piped.stdout, describeRun(piped)).toMatch(new RegExp(`^ns_${UUID_V4}\n$`));
    const [accepted, typed] = await Promise.all([onTerminal(['ns', 'create'], { env, input: '\n' }), onTerminal(['ns', 'create'], { env, input: 'handbook\n' })]);
    expect(accepted.code, describeRun(accepted)).toBe(0);
    const shown = new RegExp(`Namespace key \\(Enter takes the generated one\\): \\[(ns_${UUID_V4})\\]`).exec(accepted.stdout);
    expect(shown, describeRun(accepted)).not.toBeNull();
    expect(accepted.stdout).toContain(`✓ Created namespace ${shown?.[1]}`);
    expect(typed.code, describeRun(typed)).toBe(0);
    expect(typed.stdout).toContain('✓ Created namespace handbook');
    const keys = await namespaceKeys(expect, token);
    expect(keys).toContain(shown?.[1]);
    expect(keys).toContain('handbook');
    expect(keys).toHaveLength(5);
  });
});

describe.concurrent('kb ns delete', { timeout: TEST_TIMEOUT_MS }, () => {
  it('deletes an empty namespace; one with bases only with --cascade, and --yes without a terminal', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-ns-delete', ['intro']);
    const empty = await kb(['ns', 'delete', 'guides', '--json'], { env });
    expect(jsonOut(expect, empty)).toEqual({ key: 'guides', description: null });
    const [held, unasked, typo] = await Promise.all([
      kb(['ns', 'delete', 'docs'], { env }),
      kb(['ns', 'delete', 'docs', '--cascade'], { env }),
      kb(['ns', 'delete', 'dosc', '--cascade', '--yes'], { env }),
    ]);
    expectFailure(expect, held, 5, 'Namespace docs holds 2 bases', 'Pass --cascade to delete its bases with it (`kb base list docs` shows them).');
    expectFailure(expect, unasked, 2, 'Cannot prompt: not a terminal (or CI is set). Pass --yes with --cascade to delete a namespace and its bases without confirmation.');
    expectFailure(expect, typo, 3, 'Namespace dosc not found. Did you mean docs?', '`kb ns list` shows the namespaces.');
    expect(await namespaceKeys(expect, token)).toEqual(['docs']);
    const cascaded = await kb(['ns', 'delete', 'docs', '--cascade', '--yes'], { env });
    expect(cascaded.code, describeRun(cascaded)).toBe(0);
    expect(cascaded.stderr).toBe('✓ Deleted namespace docs and its bases\n');
    expect(await namespaceKeys(expect, token)).toEqual([]);
  });

  it('--cascade on a terminal asks with the count of bases; anything but y keeps everything', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-ns-delete-tty', ['intro']);
    const kept = await onTerminal(['ns', 'delete', 'docs', '--cascade'], { env, input: 'n\n' });
    expect(kept.code, describeRun(kept)).toBe(1);
    expect(kept.stdout).toContain('Delete namespace docs and its 2 bases, with all their data? [y/N]');
    expect(kept.stdout).toContain('Cancelled: nothing was deleted.');
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
    const deleted = await onTerminal(['ns', 'delete', 'docs', '--cascade'], { env, input: 'y\n' });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    expect(await namespaceKeys(expect, token)).toEqual(['guides']);
  });

  it('against a deployment without DELETE /v1/ns_delete: one plain sentence, exit 2, as base list without base_list or base_list_all', async ({ expect }) => {
    // A deployment of the API document alone: ns_list answers, an unknown route is 404.
    const paths: string[] = [];
    const plain = createServer((request, response) => {
      paths.push(`${request.method} ${request.url}`);
      request.resume();
      const ok = request.url === '/v1/ns_list';
      response.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
      response.end(JSON.stringify(ok ? { success: true, data: [{ key: 'docs', description: null }] } : { success: false, message: 'Not Found' }));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const env = isolatedEnv({ KB_URL: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`, KB_TOKEN: 'kbt_0123456789abcdefghij' });
      const result = await kb(['ns', 'delete', 'docs'], { env });
      expectFailure(expect, result, 2, 'This deployment cannot delete namespaces: DELETE /v1/ns_delete is an extension of kb serve that it does not offer.');
      expect(paths).toEqual(['DELETE /v1/ns_delete', 'GET /v1/ns_list']);
      // The same exit for the same case (docs/contract.md, Exit codes): a command needing an extension it lacks.
      const all = await kb(['base', 'list', '-A'], { env });
      expectFailure(
        expect,
        all,
        2,
        'This deployment does not offer base_list_all (an extension of kb serve): it cannot list every base at once.',
        'List the bases of one namespace with `kb base list NAMESPACE`.',
      );
      const one = await kb(['base', 'list', 'docs'], { env });
      expect(one.code, one.stderr).toBe(2);
      expect(one.stderr).toContain('does not offer base_list (an extension of kb serve)');
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});

describe.concurrent('habits', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--jq takes jq\'s own language: strings bare, anything else as jq prints it; a bad one exits 2 before anything is sent', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-jq', ['intro']);
    const [keys, objects, none, syntax, runtime] = await Promise.all([
      kb(['ns', 'list', '--jq', '.[].key'], { env }),
      kb(['base', 'list', 'docs', '--jq', '.[] | select(.description != null) | {key}'], { env }),
      kb(['ns', 'list', '--jq', '.[] | select(.key == "nope")'], { env }),
      kb(['ns', 'create', 'never', '--jq', '.['], { env }),
      kb(['ns', 'view', 'docs', '--jq', '.key + 1'], { env }),
    ]);
    expect(keys.stdout, describeRun(keys)).toBe('docs\nguides\n');
    expect(objects.stdout, describeRun(objects)).toBe('{\n  "key": "faq"\n}\n');
    expect(none.code, describeRun(none)).toBe(0);
    expect(none.stdout).toBe('');
    const help = 'It is a jq expression (https://jqlang.org/manual), e.g. --jq ".[].key".';
    expectFailure(expect, syntax, 2, /^Error: Invalid --jq "\.\[": syntax error, unexpected end of file/, help);
    expectFailure(expect, runtime, 2, `Invalid --jq ".key + 1": string ("docs") and number (1) cannot be added (tried, before anything was sent, on a sample of what the command prints: {"key":"docs","description":"Product docs"})`, help);
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
  });

  it('--jq that fails on data of the command\'s shape exits 2 before anything is sent: a write creates nothing, a read asks nothing', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-jq-sample', ['intro']);
    // No server at all: a request would fail with exit 6, so exit 2 says none was tried.
    const nowhere = { ...env, KB_URL: 'http://127.0.0.1:1' };
    const [write, read] = await Promise.all([
      kb(['ns', 'create', 'handbook', '--jq', '.key+1'], { env }),
      kb(['base', 'list', 'docs', '--jq', '.[] | .key + 1'], { env: nowhere }),
    ]);
    const help = 'It is a jq expression (https://jqlang.org/manual), e.g. --jq ".[].key".';
    // The values named are the sample's, and the message says so: "docs" is no namespace the user named here.
    expectFailure(expect, write, 2, `Invalid --jq ".key+1": string ("docs") and number (1) cannot be added (tried, before anything was sent, on a sample of what the command prints: {"key":"docs","description":"Product docs"})`, help);
    expectFailure(expect, read, 2, `Invalid --jq ".[] | .key + 1": string ("faq") and number (1) cannot be added (tried, before anything was sent, on a sample of what the command prints: [{"namespace":"docs","key":"faq","description":"Questions"},{"namespace":"docs","key":"intro","description":"Introduction"}])`, help);
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
  });

  it('--jq loads jq-wasm; kb --version and kb ns list --json do not', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'first-jq-load', ['intro']);
    const jq = (sources: string[]) => sources.filter((source) => /node_modules\/jq-wasm\//.test(source));
    const [version, json, queried] = await Promise.all([
      runRecordingSources(['--version'], env),
      runRecordingSources(['ns', 'list', '--json'], env),
      runRecordingSources(['ns', 'list', '--jq', '.[].key'], env),
    ]);
    for (const run of [version, json, queried]) expect(run.result.code, describeRun(run.result)).toBe(0);
    expect(jq(version.sources)).toEqual([]);
    expect(jq(json.sources)).toEqual([]);
    expect(jq(queried.sources)).not.toEqual([]);
  });

  it('-o json is --json, -o yaml the same data as YAML, -o wide every column uncut', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'first-output', ['intro']);
    const [json, o, yaml, wide, all, allWide, bad] = await Promise.all([
      kb(['base', 'list', 'docs', '--json'], { env }),
      kb(['base', 'list', 'docs', '-o', 'json'], { env }),
      kb(['ns', 'view', 'docs', '-o', 'yaml'], { env }),
      kb(['base', 'list', 'docs', '-o', 'wide'], { env }),
      kb(['base', 'list', '-A', '--json'], { env }),
      kb(['base', 'ls', '--all-namespaces'], { env }),
      kb(['ns', 'list', '-o', 'xml'], { env }),
    ]);
    expect(o.stdout, describeRun(o)).toBe(json.stdout);
    expect(yaml.stdout, describeRun(yaml)).toBe('key: docs\ndescription: Product docs\n');
    expect(wide.stdout, describeRun(wide)).toBe('NAMESPACE  KEY    DESCRIPTION\ndocs       faq    Questions\ndocs       intro\n');
    expect(jsonOut(expect, all)).toEqual([
      { namespace: 'docs', key: 'faq', description: 'Questions' },
      { namespace: 'docs', key: 'intro', description: null },
    ]);
    expect(allWide.stdout, describeRun(allWide)).toBe('NAMESPACE  KEY    DESCRIPTION\ndocs       faq    Questions\ndocs       intro\n');
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(bad.stderr).toMatch(/Expected --output=xml to be one of: json, yaml, wide/);
  });

  it('kb version prints what kb --version prints; with --json, its parts', async ({ expect }) => {
    const env = isolatedEnv();
    const [flag, command, json] = await Promise.all([kb(['--version'], { env }), kb(['version'], { env }), kb(['version', '--json'], { env })]);
    expect(command.code, describeRun(command)).toBe(0);
    expect(command.stdout).toBe(flag.stdout);
    const [name, rest = ''] = flag.stdout.trim().split('/');
    expect(jsonOut(expect, json)).toEqual({ name, version: rest.split(' ')[0], platform: process.platform, arch: process.arch, node: process.version });
  });

  it('NS/BASE names a base wherever a namespace and a base are asked', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-slash', ['intro']);
    const [view, spaced] = await Promise.all([kb(['base', 'view', 'docs/faq', '--json'], { env }), kb(['base', 'view', 'docs', 'faq', '--json'], { env })]);
    expect(view.stdout, describeRun(view)).toBe(spaced.stdout);
    const updated = await kb(['base', 'update', 'docs/faq', '-d', 'Answers', '--query', 'description'], { env });
    expect(updated.stdout, describeRun(updated)).toBe('Answers\n');
    const [twice, missing] = await Promise.all([kb(['base', 'view', 'docs/faq', 'faq'], { env }), kb(['base', 'view', 'docs'], { env })]);
    expectFailure(expect, twice, 2, 'unexpected argument: faq', 'docs/faq names the namespace and the base already. See `kb base view --help`.');
    expectFailure(expect, missing, 2, 'Missing the base: give NAMESPACE BASE, or NAMESPACE/BASE', 'See `kb base view --help`.');
    const deleted = await kb(['base', 'delete', 'docs/intro', '--yes'], { env });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    expect(((await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')) as { key: string }[]).map((base) => base.key)).toEqual(['faq']);
  });

  it('a mistyped flag gets the closest flags of the command', async ({ expect }) => {
    const env = isolatedEnv();
    const [jsn, cascde] = await Promise.all([kb(['ns', 'list', '--jsn'], { env }), kb(['ns', 'delete', 'docs', '--cascde'], { env })]);
    expectFailure(expect, jsn, 2, 'Nonexistent flag: --jsn', 'Did you mean --json? See `kb ns list --help`.');
    expectFailure(expect, cascde, 2, 'Nonexistent flag: --cascde', 'Did you mean --cascade? See `kb ns delete --help`.');
  });

  it('a namespace or base not found names the closest keys, from one list request after the 404', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'first-did-you-mean', ['intro']);
    const [nsView, baseOfTypo, baseTypo, update, del, nsUpdate, far] = await Promise.all([
      kb(['ns', 'view', 'gudies'], { env }),
      kb(['base', 'view', 'dcos', 'faq'], { env }),
      kb(['base', 'view', 'docs/fqa'], { env }),
      kb(['base', 'update', 'docs', 'inrto', '-d', 'x', '--verbose'], { env }),
      kb(['base', 'delete', 'dcos/faq', '--yes', '--verbose'], { env }),
      kb(['ns', 'update', 'Docs', '-d', 'x'], { env }),
      kb(['base', 'list', 'zzzz'], { env }),
    ]);
    expectFailure(expect, nsView, 3, 'Namespace gudies not found. Did you mean guides?', '`kb ns list` shows the namespaces.');
    expect(baseOfTypo.code, describeRun(baseOfTypo)).toBe(3);
    expect(lines(baseOfTypo.stderr)[0]).toBe('Error: Namespace dcos not found. Did you mean docs?');
    expectFailure(expect, baseTypo, 3, 'Base fqa not found in namespace docs. Did you mean faq?', '`kb base list docs` shows its bases.');
    expect(nsUpdate.code, describeRun(nsUpdate)).toBe(3);
    expect(lines(nsUpdate.stderr)[0]).toBe('Error: Namespace Docs not found. Did you mean docs?');
    expect(far.code, describeRun(far)).toBe(3);
    expect(lines(far.stderr)[0]).toBe('Error: Namespace zzzz not found');
    // The write first, its 404, then one list: the base's namespace's bases, or the namespaces.
    for (const [run, list, message] of [
      [update, 'GET .*/v1/base_list\\?namespace=docs 200', 'Base inrto not found in namespace docs. Did you mean intro?'],
      [del, 'GET .*/v1/ns_list 200', 'Namespace dcos not found. Did you mean docs?'],
    ] as const) {
      expect(run.code, describeRun(run)).toBe(3);
      const trace = lines(run.stderr).filter((line) => /^\* (GET|POST|DELETE) /.test(line));
      expect(trace, describeRun(run)).toHaveLength(2);
      expect(trace[0]).toMatch(/ 404 /);
      expect(trace[1]).toMatch(new RegExp(list));
      expect(run.stderr).toContain(`Error: ${message}\n`);
    }
  });

  it('--query prints null where jmespath leaves the result undefined, and a type error it can see comes before anything is sent', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-query', ['intro']);
    const [empty, typed, nulls] = await Promise.all([
      kb(['base', 'list', 'guides', '--query', 'max_by(@, &key)'], { env }),
      kb(['ns', 'create', 'never', '--query', 'abs(@)'], { env }),
      kb(['base', 'list', 'docs', '--query', 'sort_by(@, &description)'], { env }),
    ]);
    expect(empty.code, describeRun(empty)).toBe(0);
    expect(empty.stdout).toBe('null\n');
    const help = 'It is a JMESPath expression (https://jmespath.org), e.g. --query "[].key".';
    expectFailure(expect, typed, 2, 'Invalid --query "abs(@)": abs() expected argument 1 to be type number but received type object instead (tried, before anything was sent, on a sample of what the command prints: {"key":"docs","description":"Product docs"})', help);
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
    expectFailure(expect, nulls, 2, /^Error: Invalid --query "sort_by\(@, &description\)": (expected string but received null|a function was given a value of the wrong type)$/, help);
  });

  it('kb apply on a terminal shows the counts and the first changes; --verbose every one; a pipe gets every one', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'first-apply-tty', ['intro']);
    const file = join(tempDir('kb-first-apply-tty-'), 'many.yaml');
    const keys = Array.from({ length: 30 }, (_, i) => `team-${String(i).padStart(2, '0')}`);
    writeFileSync(file, `version: 1\nnamespaces:\n${keys.map((key) => `  - key: ${key}\n`).join('')}`);
    const [short, verbose, piped] = await Promise.all([
      onTerminal(['apply', file, '--dry-run'], { env }),
      onTerminal(['apply', file, '--dry-run', '--verbose'], { env }),
      kb(['apply', file, '--dry-run'], { env }),
    ]);
    for (const run of [short, verbose, piped]) expect(run.code, describeRun(run)).toBe(0);
    const planned = (text: string) => lines(text).filter((line) => line.startsWith('  + namespace '));
    expect(short.stdout).toContain('Plan: 30 to create, 0 to update, 0 to delete.\n');
    expect(planned(short.stdout)).toEqual(keys.slice(0, 20).map((key) => `  + namespace ${key} (description: none)`));
    expect(short.stdout).toContain('  … and 10 more changes (--verbose shows every one).\n');
    expect(planned(verbose.stdout)).toHaveLength(30);
    expect(planned(piped.stderr)).toHaveLength(30);
  });

  it('kb apply --prune on a terminal shows every delete of a long plan before asking to confirm them', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'first-apply-prune-tty', ['intro']);
    const file = join(tempDir('kb-first-apply-prune-tty-'), 'many.yaml');
    const keys = Array.from({ length: 30 }, (_, i) => `team-${String(i).padStart(2, '0')}`);
    writeFileSync(file, `version: 1\nnamespaces:\n  - key: docs\n    description: Product docs\n${keys.map((key) => `  - key: ${key}\n`).join('')}`);
    const run = await onTerminal(['apply', file, '--prune'], { env, input: 'n\n' });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain('Plan: 30 to create, 0 to update, 2 to delete.\n');
    const asked = run.stdout.indexOf('Delete 2 bases, with all their data? [y/N]');
    expect(asked, describeRun(run)).toBeGreaterThan(-1);
    for (const key of ['faq', 'intro']) {
      const shown = run.stdout.indexOf(`  - base docs/${key}\n`);
      expect(shown, describeRun(run)).toBeGreaterThan(-1);
      expect(shown).toBeLessThan(asked);
    }
    expect(run.stdout).toContain('  … and 10 more changes to create or update (--verbose shows every one).\n');
    expect(run.stdout).toContain('Cancelled: nothing was changed.');
    expect(await namespaceKeys(expect, token)).toEqual(['docs', 'guides']);
  });
});
