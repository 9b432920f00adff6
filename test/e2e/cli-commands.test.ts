import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { isolatedEnv, ROOT } from '../helpers/cli.js';
import {
  api,
  apiData,
  closedPortUrl,
  describeRun,
  escapeRegExp,
  expectEnvelopeFailure,
  expectFailure,
  expectNoStack,
  jsonOut,
  kb,
  lines,
  orgEnv,
  startFixedServer,
  startSilentServer,
  TEST_TIMEOUT_MS,
  UUID_V4,
} from '../helpers/cli-e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// One real server for the whole file; every test works in an organization of its own, so tests never see each other's data.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-commands' });
});
afterAll(async () => {
  await server?.close();
});

const KEY_RULE = /3 to 63/;

/** A key/value block: one `name: value` line a field, in this order. */
function block(expect: ExpectStatic, fields: [string, string | RegExp][]): ReturnType<ExpectStatic['stringMatching']>[] {
  return fields.map(([name, value]) =>
    expect.stringMatching(new RegExp(`^${name}:\\s+${typeof value === 'string' ? escapeRegExp(value) : value.source}$`)),
  );
}

/** One line on stderr naming what changed. */
function confirmation(expect: ExpectStatic, key: string): ReturnType<ExpectStatic['stringMatching']>[] {
  return [expect.stringMatching(new RegExp(`\\b${escapeRegExp(key)}\\b`))];
}

describe.concurrent('kb ns, human and --json output against a real server', { timeout: TEST_TIMEOUT_MS }, () => {
  it('ns create prints a key/value block and a one-line confirmation; --json prints exactly the namespace; no KEY generates ns_<uuid v4>', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'ns-create');
    const [human, json, generatedJson, generatedHuman] = await Promise.all([
      kb(['ns', 'create', 'docs', '--description', 'Product docs'], { env }),
      kb(['ns', 'create', 'guides', '-d', 'How-to guides', '--json'], { env }),
      kb(['ns', 'create', '--json'], { env }),
      kb(['ns', 'create'], { env }),
    ]);

    expect(human.code, describeRun(human)).toBe(0);
    expect(lines(human.stdout), describeRun(human)).toEqual(block(expect, [['key', 'docs'], ['description', 'Product docs']]));
    expect(lines(human.stderr), describeRun(human)).toEqual(confirmation(expect, 'docs'));

    expect(jsonOut(expect, json)).toEqual({ key: 'guides', description: 'How-to guides' });

    const generated = jsonOut(expect, generatedJson) as { key: string; description: unknown };
    expect(generated).toEqual({ key: expect.stringMatching(new RegExp(`^ns_${UUID_V4}$`)), description: null });

    expect(generatedHuman.code, describeRun(generatedHuman)).toBe(0);
    const humanLines = lines(generatedHuman.stdout);
    expect(humanLines, describeRun(generatedHuman)).toEqual(block(expect, [['key', new RegExp(`ns_${UUID_V4}`)], ['description', /.*/]]));
    const humanKey = /^key:\s+(\S+)$/.exec(humanLines[0] ?? '')?.[1] as string;
    expect(lines(generatedHuman.stderr)).toEqual(confirmation(expect, humanKey));

    const stored = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[];
    expect(stored).toEqual(
      [
        { key: 'docs', description: 'Product docs' },
        { key: 'guides', description: 'How-to guides' },
        { key: generated.key, description: null },
        { key: humanKey, description: null },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
  });

  it('ns list prints a KEY/DESCRIPTION table in key order; --json prints exactly the list', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'ns-list');
    const empty = await kb(['ns', 'list', '--json'], { env });
    expect(jsonOut(expect, empty)).toEqual([]);

    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'b-two' });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'a-one', description: 'First one' });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'Zeta', description: 'Upper case sorts first' });
    const [human, json] = await Promise.all([kb(['ns', 'list'], { env }), kb(['ns', 'list', '--json'], { env })]);

    expect(human.code, describeRun(human)).toBe(0);
    const table = lines(human.stdout);
    expect(table, describeRun(human)).toEqual([
      expect.stringMatching(/^KEY\s+DESCRIPTION$/),
      expect.stringMatching(/^Zeta\s+Upper case sorts first$/),
      expect.stringMatching(/^a-one\s+First one$/),
      expect.stringMatching(/^b-two$/),
    ]);
    const column = table[0]?.indexOf('DESCRIPTION');
    expect(table[1]?.indexOf('Upper case')).toBe(column);
    expect(table[2]?.indexOf('First one')).toBe(column);

    const expected = [
      { key: 'Zeta', description: 'Upper case sorts first' },
      { key: 'a-one', description: 'First one' },
      { key: 'b-two', description: null },
    ];
    expect(jsonOut(expect, json)).toEqual(expected);
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual(expected);
  });

  it('ns update sets a description with --description and clears it with --clear-description, human and --json', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'ns-update');
    for (const key of ['one', 'two', 'three', 'four']) {
      await apiData(expect, server.url, token, 'POST', '/ns_create', { key, description: `Old ${key}` });
    }
    const [setHuman, clearJson, setJson, clearHuman] = await Promise.all([
      kb(['ns', 'update', 'one', '--description', 'New one'], { env }),
      kb(['ns', 'update', 'two', '--clear-description', '--json'], { env }),
      kb(['ns', 'update', 'three', '-d', 'New three', '--json'], { env }),
      kb(['ns', 'update', 'four', '--clear-description'], { env }),
    ]);

    expect(setHuman.code, describeRun(setHuman)).toBe(0);
    expect(lines(setHuman.stdout)).toEqual(block(expect, [['key', 'one'], ['description', 'New one']]));
    expect(lines(setHuman.stderr)).toEqual(confirmation(expect, 'one'));
    expect(jsonOut(expect, clearJson)).toEqual({ key: 'two', description: null });
    expect(jsonOut(expect, setJson)).toEqual({ key: 'three', description: 'New three' });
    expect(clearHuman.code, describeRun(clearHuman)).toBe(0);
    expect(lines(clearHuman.stdout)).toEqual(block(expect, [['key', 'four'], ['description', /.*/]]));
    expect(clearHuman.stdout).not.toContain('Old four');
    expect(lines(clearHuman.stderr)).toEqual(confirmation(expect, 'four'));

    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([
      { key: 'four', description: null },
      { key: 'one', description: 'New one' },
      { key: 'three', description: 'New three' },
      { key: 'two', description: null },
    ]);
  });

  it('ns update with neither or both of --description and --clear-description exits 2 and changes nothing', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'ns-update-usage');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Kept' });
    const [neither, both] = await Promise.all([
      kb(['ns', 'update', 'docs'], { env }),
      kb(['ns', 'update', 'docs', '--description', 'Changed', '--clear-description'], { env }),
    ]);
    for (const result of [neither, both]) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--description');
      expect(result.stderr).toContain('--clear-description');
      expectNoStack(expect, result);
    }
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([{ key: 'docs', description: 'Kept' }]);
  });
});

describe.concurrent('kb base, human and --json output against a real server', { timeout: TEST_TIMEOUT_MS }, () => {
  it('base create prints a key/value block and a confirmation; --json prints exactly the base; no KEY generates kb_<uuid v4>', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'base-create');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs' });
    const [human, json, generatedJson] = await Promise.all([
      kb(['base', 'create', 'docs', 'faq', '--description', 'Questions people ask'], { env }),
      kb(['base', 'create', 'docs', 'howto', '--json'], { env }),
      kb(['base', 'create', 'docs', '--json'], { env }),
    ]);

    expect(human.code, describeRun(human)).toBe(0);
    expect(lines(human.stdout)).toEqual(block(expect, [['namespace', 'docs'], ['key', 'faq'], ['description', 'Questions people ask']]));
    expect(lines(human.stderr)).toEqual(confirmation(expect, 'faq'));
    expect(jsonOut(expect, json)).toEqual({ namespace: 'docs', key: 'howto', description: null });
    const generated = jsonOut(expect, generatedJson) as { key: string };
    expect(generated).toEqual({ namespace: 'docs', key: expect.stringMatching(new RegExp(`^kb_${UUID_V4}$`)), description: null });

    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([
      { namespace: 'docs', key: 'faq', description: 'Questions people ask' },
      { namespace: 'docs', key: 'howto', description: null },
      { namespace: 'docs', key: generated.key, description: null },
    ]);
  });

  it('base list prints a KEY/DESCRIPTION table in key order; --json prints exactly the list', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'base-list');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'zz-last' });
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'Alpha', description: 'Capital first' });
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq', description: 'Questions' });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'empty' });
    const [human, json, emptyJson] = await Promise.all([
      kb(['base', 'list', 'docs'], { env }),
      kb(['base', 'list', 'docs', '--json'], { env }),
      kb(['base', 'list', 'empty', '--json'], { env }),
    ]);

    expect(human.code, describeRun(human)).toBe(0);
    const table = lines(human.stdout);
    expect(table, describeRun(human)).toEqual([
      expect.stringMatching(/^KEY\s+DESCRIPTION$/),
      expect.stringMatching(/^Alpha\s+Capital first$/),
      expect.stringMatching(/^faq\s+Questions$/),
      expect.stringMatching(/^zz-last$/),
    ]);
    expect(table[1]?.indexOf('Capital')).toBe(table[0]?.indexOf('DESCRIPTION'));
    const expected = [
      { namespace: 'docs', key: 'Alpha', description: 'Capital first' },
      { namespace: 'docs', key: 'faq', description: 'Questions' },
      { namespace: 'docs', key: 'zz-last', description: null },
    ];
    expect(jsonOut(expect, json)).toEqual(expected);
    expect(jsonOut(expect, emptyJson)).toEqual([]);
  });

  it('base update sets and clears the description, human and --json; neither or both flags exit 2', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'base-update');
    for (const key of ['one', 'two', 'three', 'kept']) {
      await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key, description: `Old ${key}` });
    }
    const [setHuman, clearJson, setJson, neither, both] = await Promise.all([
      kb(['base', 'update', 'docs', 'one', '--description', 'New one'], { env }),
      kb(['base', 'update', 'docs', 'two', '--clear-description', '--json'], { env }),
      kb(['base', 'update', 'docs', 'three', '-d', 'New three', '--json'], { env }),
      kb(['base', 'update', 'docs', 'kept'], { env }),
      kb(['base', 'update', 'docs', 'kept', '-d', 'Changed', '--clear-description'], { env }),
    ]);

    expect(setHuman.code, describeRun(setHuman)).toBe(0);
    expect(lines(setHuman.stdout)).toEqual(block(expect, [['namespace', 'docs'], ['key', 'one'], ['description', 'New one']]));
    expect(lines(setHuman.stderr)).toEqual(confirmation(expect, 'one'));
    expect(jsonOut(expect, clearJson)).toEqual({ namespace: 'docs', key: 'two', description: null });
    expect(jsonOut(expect, setJson)).toEqual({ namespace: 'docs', key: 'three', description: 'New three' });
    for (const result of [neither, both]) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--clear-description');
      expectNoStack(expect, result);
    }
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([
      { namespace: 'docs', key: 'kept', description: 'Old kept' },
      { namespace: 'docs', key: 'one', description: 'New one' },
      { namespace: 'docs', key: 'three', description: 'New three' },
      { namespace: 'docs', key: 'two', description: null },
    ]);
  });

  it('base delete --yes prints the deleted base and a confirmation; with --json exactly the base', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'base-delete');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq', description: 'Questions' });
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'old' });
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'stays' });
    const [human, json] = await Promise.all([
      kb(['base', 'delete', 'docs', 'faq', '--yes'], { env }),
      kb(['base', 'delete', 'docs', 'old', '--yes', '--json'], { env }),
    ]);
    expect(human.code, describeRun(human)).toBe(0);
    expect(lines(human.stdout)).toEqual(block(expect, [['namespace', 'docs'], ['key', 'faq'], ['description', 'Questions']]));
    expect(lines(human.stderr)).toEqual(confirmation(expect, 'faq'));
    expect(jsonOut(expect, json)).toEqual({ namespace: 'docs', key: 'old', description: null });
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'stays', description: null }]);
  });

  it('base delete without --yes and without a TTY exits 2 naming --yes and deletes nothing; with --yes it deletes', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'base-delete-tty');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq' });
    const refused = await kb(['base', 'delete', 'docs', 'faq'], { env });
    expect(refused.code, describeRun(refused)).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('--yes');
    expectNoStack(expect, refused);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'faq', description: null }]);

    const deleted = await kb(['base', 'delete', 'docs', 'faq', '--yes'], { env });
    expect(deleted.code, describeRun(deleted)).toBe(0);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([]);
  });
});

describe.concurrent('kb health', { timeout: TEST_TIMEOUT_MS }, () => {
  it('works with no token and no profile at all, only KB_URL set, human and --json', async ({ expect }) => {
    const env = isolatedEnv({ KB_URL: server.url });
    const expected = await api(server.url, undefined, 'GET', '/health');
    expect(expected.status).toBe(200);
    const [human, json] = await Promise.all([kb(['health'], { env }), kb(['health', '--json'], { env })]);
    expect(human.code, describeRun(human)).toBe(0);
    expect(human.stdout).toContain(String(expected.body.data));
    expect(jsonOut(expect, json)).toEqual(expected.body.data);
  });

  it('with nothing configured, says how to name a deployment: KB_URL, no token', async ({ expect }) => {
    const result = await kb(['health'], { env: isolatedEnv() });
    expectFailure(
      expect,
      result,
      4,
      'no kb deployment to check: none is configured',
      'Name one by its URL (no token needed): `KB_URL=https://kb.example.com kb health`.',
    );
  });
});

describe.concurrent('exit codes (docs/contract.md)', { timeout: TEST_TIMEOUT_MS }, () => {
  it('2: unknown flag, missing argument and invalid input are refused before any request reaches the server', async ({ expect }) => {
    // Every request that reached this server would be answered 500, so a leak would show as exit 1 and in the count.
    const trap = await startFixedServer(500, { success: false, message: 'this request should never have been sent' });
    try {
      const env = isolatedEnv({ KB_URL: trap.url, KB_TOKEN: `kbt_${'A'.repeat(43)}` });
      const cases: { args: string[]; stderr: RegExp }[] = [
        { args: ['ns', 'list', '--bogus'], stderr: /--bogus/ },
        { args: ['base', 'create'], stderr: /namespace/i },
        { args: ['base', 'update', 'docs', 'faq'], stderr: /--description/ },
        { args: ['ns', 'create', 'bad key'], stderr: KEY_RULE },
        { args: ['ns', 'create', 'ab'], stderr: KEY_RULE },
        { args: ['ns', 'create', 'okay', '--description', 'x'.repeat(1025)], stderr: /1024/ },
        { args: ['ns', 'update', 'no!', '--description', 'x'], stderr: KEY_RULE },
        { args: ['base', 'create', 'docs', 'a/b'], stderr: KEY_RULE },
        { args: ['base', 'update', 'docs', 'b@d', '--clear-description'], stderr: KEY_RULE },
        { args: ['base', 'delete', 'docs', 'b@d', '--yes'], stderr: KEY_RULE },
        { args: ['base', 'list', 'n s'], stderr: KEY_RULE },
        { args: ['ns', 'list', '--timeout', 'soon'], stderr: /--timeout/ },
      ];
      const results = await Promise.all(cases.map(({ args }) => kb(args, { env })));
      results.forEach((result, i) => {
        const { args, stderr } = cases[i] as (typeof cases)[number];
        expect(result.code, `kb ${args.join(' ')}\n${describeRun(result)}`).toBe(2);
        expect(result.stdout, `kb ${args.join(' ')}`).toBe('');
        expect(result.stderr, `kb ${args.join(' ')}`).toMatch(stderr);
        expectNoStack(expect, result);
      });
      expect(trap.count()).toBe(0);
    } finally {
      await trap.close();
    }
  });

  it('2: an unknown command, or a typo of one, is a usage error that names what was typed', async ({ expect }) => {
    const env = isolatedEnv();
    const [unknown, typo] = await Promise.all([kb(['frobnicate'], { env }), kb(['ns', 'lst'], { env })]);
    expect(unknown.code, describeRun(unknown)).toBe(2);
    expect(unknown.stderr).toContain('frobnicate');
    expect(typo.code, describeRun(typo)).toBe(2);
    expect(typo.stderr).toContain('ns lst');
    for (const result of [unknown, typo]) {
      expect(result.stdout).toBe('');
      expectNoStack(expect, result);
    }
  });

  it('2, not 6: invalid input against a closed port is caught locally, while valid input reaches for the network', async ({ expect }) => {
    const url = await closedPortUrl();
    const env = isolatedEnv({ KB_URL: url, KB_TOKEN: `kbt_${'A'.repeat(43)}` });
    const [invalid, valid] = await Promise.all([
      kb(['ns', 'create', 'bad key'], { env }),
      kb(['ns', 'create', 'good-key'], { env }),
    ]);
    expectFailure(expect, invalid, 2, /3 to 63/);
    expect(valid.code, describeRun(valid)).toBe(6);
  });

  it('3: an unknown namespace or base, with the server\'s message and help', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'exit-3');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq' });
    const target = { url: server.url, token };
    const cases = [
      { args: ['ns', 'update', 'nope', '-d', 'x'], request: { method: 'POST', path: '/ns_update', body: { namespace: 'nope', data: { description: 'x' } } } },
      { args: ['base', 'update', 'docs', 'nope', '-d', 'x'], request: { method: 'POST', path: '/base_update', body: { namespace: 'docs', base: 'nope', data: { description: 'x' } } } },
      { args: ['base', 'update', 'nope', 'faq', '--clear-description'], request: { method: 'POST', path: '/base_update', body: { namespace: 'nope', base: 'faq', data: { description: null } } } },
      { args: ['base', 'delete', 'docs', 'nope', '--yes'], request: { method: 'DELETE', path: '/base_delete', body: { namespace: 'docs', base: 'nope' } } },
      { args: ['base', 'list', 'nope'], request: { method: 'GET', path: '/base_list?namespace=nope' } },
    ];
    const results = await Promise.all(cases.map(({ args }) => kb(args, { env })));
    for (const [i, result] of results.entries()) {
      await expectEnvelopeFailure(expect, result, 3, target, (cases[i] as (typeof cases)[number]).request, 404);
    }
  });

  it('4: no token configured, and a token the server rejects (401)', async ({ expect }) => {
    const wrong = `kbt_${'W'.repeat(43)}`;
    const [none, rejected] = await Promise.all([
      kb(['ns', 'list'], { env: isolatedEnv({ KB_URL: server.url }) }),
      kb(['ns', 'list'], { env: isolatedEnv({ KB_URL: server.url, KB_TOKEN: wrong }) }),
    ]);
    expect(none.code, describeRun(none)).toBe(4);
    expect(none.stdout).toBe('');
    expect(lines(none.stderr)[0]).toMatch(/token/i);
    expect(none.stderr).toMatch(/kb auth login|KB_TOKEN/);
    expectNoStack(expect, none);
    await expectEnvelopeFailure(expect, rejected, 4, { url: server.url, token: wrong }, { method: 'GET', path: '/ns_list' }, 401, [
      'The token came from KB_TOKEN: set KB_TOKEN to a valid token, or unset it.',
    ]);
  });

  it('5: a namespace key or base key already taken, with the server\'s message', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'exit-5');
    await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key: 'faq' });
    const [ns, base, baseJson] = await Promise.all([
      kb(['ns', 'create', 'docs'], { env }),
      kb(['base', 'create', 'docs', 'faq', '-d', 'Again'], { env }),
      kb(['base', 'create', 'docs', 'faq', '--json'], { env }),
    ]);
    const target = { url: server.url, token };
    await expectEnvelopeFailure(expect, ns, 5, target, { method: 'POST', path: '/ns_create', body: { key: 'docs' } }, 409);
    await expectEnvelopeFailure(expect, base, 5, target, { method: 'POST', path: '/base_create', body: { namespace: 'docs', key: 'faq' } }, 409);
    await expectEnvelopeFailure(expect, baseJson, 5, target, { method: 'POST', path: '/base_create', body: { namespace: 'docs', key: 'faq' } }, 409);
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([{ namespace: 'docs', key: 'faq', description: null }]);
  });

  it('6: a closed port names the URL and says the connection was refused', async ({ expect }) => {
    const url = await closedPortUrl();
    const [list, health] = await Promise.all([
      kb(['ns', 'list'], { env: isolatedEnv({ KB_URL: url, KB_TOKEN: `kbt_${'A'.repeat(43)}` }) }),
      kb(['health'], { env: isolatedEnv({ KB_URL: url }) }),
    ]);
    const suggestion = 'Is the server running (start a local one with `kb serve`)? `kb auth status` shows the URL and profile in use.';
    expectFailure(expect, list, 6, new RegExp(`^(?:Error: )?.*${escapeRegExp(url)}.*refused`, 'i'), suggestion);
    expectFailure(expect, health, 6, new RegExp(`^(?:Error: )?.*${escapeRegExp(url)}.*refused`, 'i'), suggestion);
  });

  it('6: a server that never answers times out after --timeout (or KB_TIMEOUT), naming the URL', async ({ expect }) => {
    const silent = await startSilentServer();
    try {
      const token = `kbt_${'A'.repeat(43)}`;
      const [flag, env] = await Promise.all([
        kb(['ns', 'list', '--timeout', '300ms'], { env: isolatedEnv({ KB_URL: silent.url, KB_TOKEN: token }), timeoutMs: 40_000 }),
        kb(['health'], { env: isolatedEnv({ KB_URL: silent.url, KB_TIMEOUT: '300ms' }), timeoutMs: 40_000 }),
      ]);
      // The default timeout is 30 s; both are done long before, start-up included.
      expect(flag.ms).toBeLessThan(15_000);
      expect(env.ms).toBeLessThan(15_000);
      expectFailure(expect, flag, 6, new RegExp(`^(?:Error: )?.*${escapeRegExp(silent.url)}.*tim(ed|e) ?out`, 'i'));
      expectFailure(expect, env, 6, new RegExp(`^(?:Error: )?.*${escapeRegExp(silent.url)}.*tim(ed|e) ?out`, 'i'));
      expect(silent.count()).toBeGreaterThan(0);
    } finally {
      await silent.close();
    }
  });

  it('1: a server error (500) prints the envelope\'s message and help, and no stack trace', async ({ expect }) => {
    const broken = await startFixedServer(500, { success: false, message: 'The database is on fire', help: 'Try again in a minute.' });
    try {
      const env = isolatedEnv({ KB_URL: broken.url, KB_TOKEN: `kbt_${'A'.repeat(43)}` });
      const [list, create, json] = await Promise.all([
        kb(['ns', 'list'], { env }),
        kb(['ns', 'create', 'docs'], { env }),
        kb(['base', 'list', 'docs', '--json'], { env }),
      ]);
      for (const result of [list, create, json]) expectFailure(expect, result, 1, 'The database is on fire', 'Try again in a minute.');
    } finally {
      await broken.close();
    }
  });
});

/** `METHOD URL STATUS TIME` for one request, as --verbose and KB_DEBUG=1 print it to stderr. */
function traceLine(method: string, url: string, status: number): RegExp {
  return new RegExp(`\\b${method} ${escapeRegExp(url)} ${status}\\b.*\\b\\d+(\\.\\d+)? ?ms\\b`, 'm');
}

describe.concurrent('--verbose and KB_DEBUG=1', { timeout: TEST_TIMEOUT_MS }, () => {
  it('trace each request of the API commands to stderr (method, URL, status, time) and leave stdout to the data', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'trace');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs' });
    // The list runs before the create, so it sees only docs.
    const list = await kb(['ns', 'list', '--json', '--verbose'], { env });
    const [create, missing] = await Promise.all([
      kb(['ns', 'create', 'traced', '--json'], { env: { ...env, KB_DEBUG: '1' } }),
      kb(['base', 'update', 'docs', 'nope', '-d', 'x', '--verbose'], { env }),
    ]);
    expect(jsonOut(expect, list)).toEqual([{ key: 'docs', description: null }]);
    expect(list.stderr).toMatch(traceLine('GET', `${server.url}/v1/ns_list`, 200));
    expect(jsonOut(expect, create)).toEqual({ key: 'traced', description: null });
    expect(create.stderr).toMatch(traceLine('POST', `${server.url}/v1/ns_create`, 200));
    expect(missing.code, describeRun(missing)).toBe(3);
    expect(missing.stderr).toMatch(traceLine('POST', `${server.url}/v1/base_update`, 404));
    for (const result of [list, create, missing]) expect(result.stderr).not.toContain(token);
  });

  it('trace the GET /auth of auth login --verbose', async ({ expect }) => {
    const env = isolatedEnv();
    const login = await kb(['auth', 'login', '--url', server.url, '--with-token', '--verbose'], { env, input: `${server.token}\n` });
    expect(login.code, describeRun(login)).toBe(0);
    expect(login.stderr).toMatch(traceLine('GET', `${server.url}/v1/auth`, 200));
    expect(login.stderr).not.toContain(server.token);
  });

  it('trace the GET /auth of auth status with KB_DEBUG=1', async ({ expect }) => {
    const env = isolatedEnv();
    const login = await kb(['auth', 'login', '--url', server.url, '--with-token'], { env, input: `${server.token}\n` });
    expect(login.code, describeRun(login)).toBe(0);
    const status = await kb(['auth', 'status'], { env: { ...env, KB_DEBUG: '1' } });
    expect(status.code, describeRun(status)).toBe(0);
    expect(status.stderr).toMatch(traceLine('GET', `${server.url}/v1/auth`, 200));
    expect(status.stderr).not.toContain(server.token);
  });
});

describe.concurrent('help and version', { timeout: TEST_TIMEOUT_MS }, () => {
  it('kb --help lists the exit codes and the environment variables; ns create --help shows examples; --version exits 0', async ({ expect }) => {
    const env = isolatedEnv();
    const [help, nsCreateHelp, version] = await Promise.all([
      kb(['--help'], { env }),
      kb(['ns', 'create', '--help'], { env }),
      kb(['--version'], { env }),
    ]);

    expect(help.code, describeRun(help)).toBe(0);
    const meanings: [number, RegExp][] = [
      [0, /success/i],
      [1, /other|5xx|unexpected/i],
      [2, /usage/i],
      [3, /not found/i],
      [4, /auth/i],
      [5, /conflict/i],
      [6, /network/i],
      [130, /interrupted/i],
    ];
    for (const [code, meaning] of meanings) {
      const line = help.stdout.split('\n').find((text) => new RegExp(`^\\s*${code}\\s+\\S`).test(text));
      expect(line, `exit code ${code} in kb --help:\n${help.stdout}`).toMatch(meaning);
    }
    for (const variable of ['KB_URL', 'KB_TOKEN', 'KB_PROFILE', 'KB_CONFIG_DIR', 'KB_TIMEOUT', 'KB_DEBUG']) {
      expect(help.stdout, `${variable} in kb --help`).toContain(variable);
    }

    expect(nsCreateHelp.code, describeRun(nsCreateHelp)).toBe(0);
    expect(nsCreateHelp.stdout).toMatch(/EXAMPLES/);
    expect(nsCreateHelp.stdout).toMatch(/\$ kb ns create \S/);

    const { version: packageVersion } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string };
    expect(version.code, describeRun(version)).toBe(0);
    expect(version.stdout).toContain(packageVersion);
  });
});
