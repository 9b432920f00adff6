import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isolatedEnv, ROOT } from '../helpers/cli.js';
import { apiData, describeRun, expectFailure, jsonOut, kb, seededOrg, startFixedServer, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The everyday habits of gh and aws/az users (docs/contract.md, Commands), on the built kb against a real kb serve. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe.concurrent('ls and view', { timeout: TEST_TIMEOUT_MS }, () => {
  it('ls is every list', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'habits-ls');
    const pairs = [
      [['ns', 'list'], ['ns', 'ls']],
      [['base', 'list', 'docs'], ['base', 'ls', 'docs']],
      [['ns', 'list', '--json'], ['ns', 'ls', '--json']],
    ];
    for (const [list, ls] of pairs) {
      const [a, b] = await Promise.all([kb(list as string[], { env }), kb(ls as string[], { env })]);
      expect(b.code, describeRun(b)).toBe(0);
      expect(b.stdout).toBe(a.stdout);
    }
    const help = await kb(['ns', 'list', '--help'], { env });
    expect(help.stdout).toMatch(/ALIASES\n {2}\$ kb ns ls\n/);
  });

  it('kb ns view KEY and kb base view NS KEY: a key/value block, or the data with --json', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'habits-view');
    const [ns, nsJson, base, baseJson] = await Promise.all([
      kb(['ns', 'view', 'docs'], { env }),
      kb(['ns', 'view', 'guides', '--json'], { env }),
      kb(['base', 'view', 'docs', 'faq'], { env }),
      kb(['base', 'view', 'docs', 'faq', '--json'], { env }),
    ]);
    expect(ns.code, describeRun(ns)).toBe(0);
    expect(ns.stdout).toBe('key:         docs\ndescription: Product docs\n');
    expect(jsonOut(expect, nsJson)).toEqual({ key: 'guides', description: null });
    expect(base.code, describeRun(base)).toBe(0);
    expect(base.stdout).toBe('namespace:   docs\nkey:         faq\ndescription: Questions\n');
    expect(jsonOut(expect, baseJson)).toEqual({ namespace: 'docs', key: 'faq', description: 'Questions' });
  });

  it('view of what does not exist exits 3 with the server\'s wording; a malformed key exits 2', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'habits-view-missing');
    const [ns, base, baseOfMissing, malformed] = await Promise.all([
      kb(['ns', 'view', 'nope'], { env }),
      kb(['base', 'view', 'docs', 'nope'], { env }),
      kb(['base', 'view', 'nope', 'faq'], { env }),
      kb(['ns', 'view', 'a!'], { env }),
    ]);
    // The server's own message for a namespace it does not have.
    const reply = await fetch(`${server.url}/v1/base_list?namespace=nope`, { headers: { authorization: `Bearer ${token}` } });
    const { message } = (await reply.json()) as { message: string };
    expect(message).toBe('Namespace nope not found');
    expectFailure(expect, ns, 3, message, '`kb ns list` shows the namespaces.');
    expectFailure(expect, base, 3, 'Base nope not found in namespace docs', '`kb base list docs` shows its bases.');
    expect(baseOfMissing.code, describeRun(baseOfMissing)).toBe(3);
    expect(baseOfMissing.stderr).toContain(message);
    expect(malformed.code, describeRun(malformed)).toBe(2);
    expect(malformed.stderr).toMatch(/nothing was sent/);
  });
});

describe.concurrent('--query', { timeout: TEST_TIMEOUT_MS }, () => {
  it('prints a string bare, a list of strings one a line, anything else as JSON', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'habits-query');
    const [keys, description, first, count, none] = await Promise.all([
      kb(['ns', 'list', '--query', '[].key'], { env }),
      kb(['ns', 'view', 'docs', '--query=description'], { env }),
      kb(['ns', 'list', '--query', '[0]'], { env }),
      kb(['base', 'list', 'docs', '--query', 'length(@)'], { env }),
      kb(['ns', 'list', '--query', "[?key=='nope'].key"], { env }),
    ]);
    for (const result of [keys, description, first, count, none]) expect(result.code, describeRun(result)).toBe(0);
    expect(keys.stdout).toBe('docs\nguides\n');
    expect(description.stdout).toBe('Product docs\n');
    expect(JSON.parse(first.stdout)).toEqual({ key: 'docs', description: 'Product docs' });
    expect(count.stdout).toBe('1\n');
    expect(none.stdout).toBe('');
    // What --json would have printed around it, a table or a notice, is not printed.
    for (const result of [keys, description, first, count, none]) expect(result.stderr).toBe('');
  });

  it('a write with --query prints the query of its data, and the change is made once', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'habits-query-write');
    const created = await kb(['ns', 'create', 'extra', '-d', 'More', '--query', 'key'], { env });
    expect(created.code, describeRun(created)).toBe(0);
    expect(created.stdout).toBe('extra\n');
    const namespaces = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[];
    expect(namespaces.map((ns) => ns.key)).toEqual(['docs', 'extra', 'guides']);
  });

  it('a bad expression exits 2 with a clear message, and nothing is sent or changed', async ({ expect }) => {
    const { env, token } = await seededOrg(expect, server, 'habits-query-bad');
    const [syntax, create, types] = await Promise.all([
      kb(['ns', 'list', '--query', '[0'], { env }),
      kb(['ns', 'create', 'never', '--query', 'key[', '--verbose'], { env }),
      kb(['ns', 'list', '--query', 'abs(@)'], { env }),
    ]);
    const help = 'It is a JMESPath expression (https://jmespath.org), e.g. --query "[].key".';
    expectFailure(expect, syntax, 2, /^Error: Invalid --query "\[0": .*Rbracket/, help);
    expectFailure(expect, create, 2, /^Error: Invalid --query "key\[": /, help);
    expect(types.code, describeRun(types)).toBe(2);
    expect(types.stderr).toMatch(/^Error: Invalid --query "abs\(@\)": .*number/);
    expect(types.stderr).toContain('(tried, before anything was sent, on a sample of what the command prints: [{"key":"docs","description":"Product docs"},{"key":"guides","description":"Guides"}])');
    const namespaces = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[];
    expect(namespaces.map((ns) => ns.key)).toEqual(['docs', 'guides']);
  });

  it('is taken by every command that takes --json, and by no other', async ({ expect }) => {
    const { env } = await seededOrg(expect, server, 'habits-query-flags');
    const [health, status, logout] = await Promise.all([
      kb(['health', '--query', '@'], { env }),
      kb(['auth', 'status', '--query', 'organization'], { env }),
      kb(['auth', 'logout', '--query', '@'], { env }),
    ]);
    expect(health.stdout, describeRun(health)).toBe('alive\n');
    expect(status.stdout, describeRun(status)).toBe('habits-query-flags\n');
    expectFailure(expect, logout, 2, 'Nonexistent flag: --query', 'See `kb auth logout --help`.');
    const manifest = JSON.parse(readFileSync(`${ROOT}oclif.manifest.json`, 'utf8')) as { commands: Record<string, { flags: Record<string, unknown> }> };
    for (const [id, command] of Object.entries(manifest.commands)) {
      // kb watch's --json is a stream of events, one a line, not one result to pick from.
      if (id === 'watch') continue;
      // kb api always prints the reply's JSON, and takes --jq over it as gh api does.
      if (id === 'api') {
        expect('jq' in command.flags, 'api --jq').toBe(true);
        continue;
      }
      for (const flag of ['query', 'jq']) expect(flag in command.flags, `${id} --${flag}`).toBe('json' in command.flags);
      // kb export's own --output names its file.
      if ('json' in command.flags) expect('output' in command.flags, `${id} --output`).toBe(true);
    }
  });
});

describe.concurrent('kb auth status with two profiles', { timeout: TEST_TIMEOUT_MS }, () => {
  it('lists every profile, the one in use marked, with its URL and whether it has a token, never the token', async ({ expect }) => {
    const env = isolatedEnv();
    const [main, staging] = await Promise.all([server.newToken('habits-status-main'), server.newToken('habits-status-staging')]);
    const login = (token: string, args: string[]) => kb(['auth', 'login', '--url', server.url, '--with-token', ...args], { env, input: token });
    for (const result of [await login(main, []), await login(staging, ['--profile', 'staging'])]) expect(result.code, describeRun(result)).toBe(0);
    expect((await kb(['auth', 'logout', '--profile', 'staging'], { env })).code).toBe(0);

    const [human, json, other, otherJson] = await Promise.all([
      kb(['auth', 'status'], { env }),
      kb(['auth', 'status', '--json'], { env }),
      kb(['auth', 'status', '--profile', 'staging'], { env }),
      kb(['auth', 'status', '--json'], { env: { ...env, KB_PROFILE: 'staging' } }),
    ]);
    expect(human.code, describeRun(human)).toBe(0);
    expect(human.stdout).toContain(
      'Profiles (* in use):\n' +
        `   NAME               URL${' '.repeat(server.url.length - 1)}TOKEN  ORGANIZATION        SCOPE  EXPIRES\n` +
        `*  default (default)  ${server.url}  yes    habits-status-main  full   never\n` +
        `   staging            ${server.url}  none\n`,
    );
    const status = jsonOut(expect, json) as { profile: string; organization: string; profiles: unknown[] };
    // What scripts read today is where it was.
    expect(status).toMatchObject({ profile: 'default', url: server.url, organization: 'habits-status-main', tokenSource: 'profile' });
    expect(status.profiles).toEqual([
      { name: 'default', url: server.url, active: true, default: true, token: true, organization: 'habits-status-main', scope: 'full', expiresAt: null, problem: null },
      { name: 'staging', url: server.url, active: false, default: false, token: false, organization: null, scope: null, expiresAt: null, problem: null },
    ]);

    // The profile in use has no token: exit 4 as before, the list still shown.
    expect(other.code, describeRun(other)).toBe(4);
    expect(other.stdout).toContain(`   default (default)  ${server.url}  yes    habits-status-main  full   never\n*  staging            ${server.url}  none\n`);
    expect(otherJson.code, describeRun(otherJson)).toBe(4);
    expect((JSON.parse(otherJson.stdout) as { profiles: { active: boolean }[] }).profiles.map((entry) => entry.active)).toEqual([false, true]);

    for (const result of [human, json, other, otherJson]) {
      expect(result.stdout + result.stderr).not.toContain(main);
      expect(result.stdout + result.stderr).not.toContain(main.slice(-12));
    }
  });
});

describe.concurrent('kb api -i and -H', { timeout: TEST_TIMEOUT_MS }, () => {
  it('-i prints the status line and the headers, then the body; -H sends headers of your own', async ({ expect }) => {
    // A server that answers with the headers it was sent, and a header of its own.
    const echo = createServer((request, response) => {
      response.writeHead(201, { 'content-type': 'application/json', 'x-served-by': 'echo' });
      response.end(JSON.stringify({ success: true, data: request.headers }));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      const env = isolatedEnv({ KB_URL: url, KB_TOKEN: 'kbt_0123456789abcdefghij' });
      const [included, plain] = await Promise.all([
        kb(['api', '-i', 'ns_list', '-H', 'X-Trace: one', '-H', 'accept-language: en'], { env }),
        kb(['api', 'ns_list', '-H', 'X-Trace: two'], { env }),
      ]);
      expect(included.code, describeRun(included)).toBe(0);
      const [head = '', body = ''] = included.stdout.split('\n\n');
      const headLines = head.split('\n');
      expect(headLines[0]).toBe('HTTP/1.1 201 Created');
      expect(headLines).toContain('Content-Type: application/json');
      expect(headLines).toContain('X-Served-By: echo');
      const names = headLines.slice(1).map((line) => line.split(':')[0]?.toLowerCase() ?? '');
      expect(names).toEqual([...names].sort());
      const sent = (JSON.parse(body) as { data: Record<string, string> }).data;
      expect(sent).toMatchObject({ 'x-trace': 'one', 'accept-language': 'en', authorization: 'Bearer kbt_0123456789abcdefghij' });

      expect(plain.code, describeRun(plain)).toBe(0);
      expect(plain.stdout.startsWith('{')).toBe(true);
      expect((JSON.parse(plain.stdout) as { data: Record<string, string> }).data['x-trace']).toBe('two');
    } finally {
      echo.closeAllConnections();
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  it('-H Authorization and -H Host are refused with exit 2, and nothing is sent', async ({ expect }) => {
    const fake = await startFixedServer(200, { success: true, data: [] });
    try {
      const env = isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_0123456789abcdefghij' });
      const [authorization, host, malformed] = await Promise.all([
        kb(['api', 'ns_list', '-H', 'Authorization: Bearer kbt_other'], { env }),
        kb(['api', 'ns_list', '-H', 'host: example.com'], { env }),
        kb(['api', 'ns_list', '-H', 'no colon'], { env }),
      ]);
      expectFailure(expect, authorization, 2, '-H Authorization is refused: kb sends the token of the profile in use (--profile, KB_TOKEN) itself', 'Nothing was sent.');
      expectFailure(expect, host, 2, '-H host is refused: kb sends the host of the deployment in use (--profile, KB_URL) itself', 'Nothing was sent.');
      expectFailure(expect, malformed, 2, 'Invalid header "no colon": expected Name: value', 'For example: -H "Accept-Language: en".');
      expect(fake.count()).toBe(0);
    } finally {
      await fake.close();
    }
  });
});

describe.concurrent('a mistyped command', { timeout: TEST_TIMEOUT_MS }, () => {
  it('suggests the closest commands, its arguments aside, or lists the commands of its topic; exit 2', async ({ expect }) => {
    const env = isolatedEnv();
    const [veiw, bse, tokn, lst, show, nothing] = await Promise.all([
      kb(['ns', 'veiw', 'docs'], { env }),
      kb(['bse', 'list', 'docs'], { env }),
      kb(['serve', 'tokn', 'list'], { env }),
      kb(['ns', 'lst'], { env }),
      kb(['ns', 'frob', 'docs'], { env }),
      kb(['frobnicate'], { env }),
    ]);
    const help = 'Run `kb --help` for the list of commands.';
    expectFailure(expect, veiw, 2, '"ns veiw docs" is not a kb command. Did you mean "ns view"?', help);
    expectFailure(expect, bse, 2, '"bse list docs" is not a kb command. Did you mean "base list"?', help);
    expectFailure(expect, tokn, 2, '"serve tokn list" is not a kb command. Did you mean "serve token list"?', help);
    expectFailure(expect, lst, 2, '"ns lst" is not a kb command. Did you mean "ns list" or "ns ls"?', help);
    expectFailure(expect, show, 2, '"ns frob docs" is not a kb command.', 'The commands of `kb ns`: create, delete, list, ls, update, view. Run `kb ns --help` for more.');
    expectFailure(expect, nothing, 2, '"frobnicate" is not a kb command.', help);
  });

  it('a flag oclif refuses is said in kb\'s words, with the command\'s own help; -o where a command prints no data is refused', async ({ expect }) => {
    const env = isolatedEnv();
    const [neither, output, long] = await Promise.all([
      kb(['ns', 'update', 'docs'], { env }),
      kb(['auth', 'logout', '-o', 'json'], { env }),
      kb(['auth', 'logout', '--output', 'json'], { env }),
    ]);
    expectFailure(expect, neither, 2, 'Exactly one of the following must be provided: --clear-description, --description', 'See `kb ns update --help`.');
    expectFailure(expect, output, 2, 'Nonexistent flag: -o', 'See `kb auth logout --help`.');
    expectFailure(expect, long, 2, 'Nonexistent flag: --output', 'See `kb auth logout --help`.');
  });

  it('what a gh, kubectl or aws user types names the kb command they mean; exit 2', async ({ expect }) => {
    const env = isolatedEnv();
    const typed = [['login'], ['namespace', 'list'], ['ns', 'get', 'docs'], ['ns', 'show', 'docs'], ['base', 'rm', 'docs', 'faq'], ['ns', 'rm', 'docs'], ['serve', 'token', 'rm', 'tok_1a2b3c4d5e6f'], ['auth', 'use', 'staging']];
    const meant = ['auth login', 'ns list', 'ns view', 'ns view', 'base delete', 'ns delete', 'serve token revoke', 'auth switch'];
    const results = await Promise.all(typed.map((words) => kb(words, { env })));
    results.forEach((result, i) => {
      const command = meant[i] as string;
      expectFailure(expect, result, 2, `"${typed[i]?.join(' ')}" is not a kb command. Did you mean "${command}"?`, `Run \`kb ${command} --help\` for more.`);
    });
  });

  it('kb help of what is neither a command nor a topic: exit 2, with the closest', async ({ expect }) => {
    const env = isolatedEnv();
    const [topic, command] = await Promise.all([kb(['help', 'exit-code'], { env }), kb(['help', 'ns', 'veiw'], { env })]);
    const help = 'Run `kb --help` for the commands; `kb help exit-codes` and `kb help environment` for the tables.';
    expectFailure(expect, topic, 2, 'No help for "exit-code": it is neither a kb command nor a help topic. Did you mean "exit-codes"?', help);
    expectFailure(expect, command, 2, 'No help for "ns veiw": it is neither a kb command nor a help topic. Did you mean "ns view"?', help);
  });
});
