import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { isolatedEnv } from '../helpers/cli.js';
import {
  api,
  apiData,
  closedPortUrl,
  describeRun,
  expectFailure,
  expectNoStack,
  kb,
  leakedPieces,
  lines,
  orgEnv,
  startFixedServer,
  TEST_TIMEOUT_MS,
} from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-api' });
});
afterAll(async () => {
  await server?.close();
});

/** Exit 0, nothing on stderr, and stdout exactly the server's reply as one line of JSON. */
function replyOut(expect: ExpectStatic, result: Awaited<ReturnType<typeof kb>>): unknown {
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stderr, describeRun(result)).toBe('');
  expect(lines(result.stdout), describeRun(result)).toHaveLength(1);
  return JSON.parse(result.stdout);
}

/** A reply other than 2xx: the envelope on stdout (one line), its message and status on stderr, the exit code of the table. */
function failureOut(expect: ExpectStatic, result: Awaited<ReturnType<typeof kb>>, code: number, status: number, help?: RegExp): { message: string; help?: string } {
  expect(result.code, describeRun(result)).toBe(code);
  const body = JSON.parse(result.stdout) as { success: boolean; message: string; help?: string };
  expect(body.success).toBe(false);
  const expected = [`Error: ${body.message} (HTTP ${status})`];
  if (help) expected.push(expect.stringMatching(help) as unknown as string);
  else if (body.help) expected.push(body.help);
  expect(lines(result.stderr), describeRun(result)).toEqual(expected);
  expectNoStack(expect, result);
  return body;
}

describe.concurrent('kb api against a real server', { timeout: TEST_TIMEOUT_MS }, () => {
  it('GET prints the whole reply envelope, compact when piped', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-get');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Docs' });
    const [list, slash, auth] = await Promise.all([
      kb(['api', 'ns_list'], { env }),
      kb(['api', '/ns_list'], { env }),
      kb(['api', 'auth'], { env }),
    ]);
    expect(list.stdout).toBe('{"success":true,"data":[{"key":"docs","description":"Docs"}]}\n');
    expect(replyOut(expect, list)).toEqual({ success: true, data: [{ key: 'docs', description: 'Docs' }] });
    expect(replyOut(expect, slash)).toEqual(replyOut(expect, list));
    expect(replyOut(expect, auth)).toEqual({ success: true, data: 'api-get' });
  });

  it('--jq (-q) picks from the reply as gh api --jq does; one jq cannot compile exits 2 with nothing sent', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-jq');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Docs' });
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'guides' });
    const [keys, short, bad, failing] = await Promise.all([
      kb(['api', 'ns_list', '--jq', '.data[].key'], { env }),
      kb(['api', 'ns_list', '-q', '.data | length'], { env }),
      kb(['api', 'ns_create', '-f', 'key=never', '--jq', '.data['], { env }),
      kb(['api', 'ns_list', '--jq', '.data[] | .key + 1'], { env }),
    ]);
    const object = await kb(['api', 'ns_create', '-f', 'key=handbook', '--jq', '.data | {key}'], { env });
    expect(keys.stdout, describeRun(keys)).toBe('docs\nguides\n');
    expect(short.stdout, describeRun(short)).toBe('2\n');
    expect(object.stdout, describeRun(object)).toBe('{\n  "key": "handbook"\n}\n');
    expectFailure(expect, bad, 2, /^Error: Invalid --jq "\.data\[": syntax error/, 'It is a jq expression (https://jqlang.org/manual), e.g. --jq ".[].key".');
    expectFailure(
      expect,
      failing,
      1,
      'The request was done (HTTP 200), but its reply failed --jq ".data[] | .key + 1": string ("docs") and number (1) cannot be added',
      'It is a jq expression (https://jqlang.org/manual), e.g. --jq ".[].key".',
    );
    expect(((await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[]).map((ns) => ns.key)).toEqual(['docs', 'guides', 'handbook']);
  });

  it('takes PATH as the API document writes it, /v1/ns_list, without sending /v1 twice', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-v1');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Docs' });
    const [list, written, bare] = await Promise.all([kb(['api', 'ns_list'], { env }), kb(['api', '/v1/ns_list'], { env }), kb(['api', 'v1/ns_list'], { env })]);
    expect(replyOut(expect, written)).toEqual(replyOut(expect, list));
    expect(replyOut(expect, bare)).toEqual(replyOut(expect, list));
  });

  it('POST with -f string fields, -F typed and nested fields, and a GET with fields in the query string', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-post');
    // -f sends strings as they are: "2024" and "null" stay text, as in gh api.
    const created = await kb(['api', 'ns_create', '-f', 'key=docs', '-f', 'description=2024'], { env });
    expect(replyOut(expect, created)).toEqual({ success: true, data: { key: 'docs', description: '2024' } });
    const literal = await kb(['api', 'ns_create', '-f', 'key=null', '-f', 'description=null'], { env });
    expect(replyOut(expect, literal)).toEqual({ success: true, data: { key: 'null', description: 'null' } });
    // -F null is typed: a generated key.
    const generated = replyOut(expect, await kb(['api', 'base_create', '-f', 'namespace=docs', '-F', 'key=null'], { env })) as { data: { key: string } };
    expect(generated.data.key).toMatch(/^kb_/);
    const updated = await kb(['api', 'ns_update', '-f', 'namespace=docs', '-F', 'data[description]=null'], { env });
    expect(replyOut(expect, updated)).toEqual({ success: true, data: { key: 'docs', description: null } });
    const listed = await kb(['api', 'base_list', '-X', 'GET', '-f', 'namespace=docs'], { env });
    expect(replyOut(expect, listed)).toEqual({ success: true, data: [{ namespace: 'docs', key: generated.data.key, description: null }] });
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([{ key: 'docs', description: null }, { key: 'null', description: 'null' }]);
  });

  it('-F key=@FILE sends a file\'s text and -F key=@- stdin\'s', async ({ expect }) => {
    const { env } = await orgEnv(server, 'api-field-files');
    const file = join(tempDir('kb-api-'), 'description.txt');
    writeFileSync(file, 'Line one\nLine two');
    const [fromFile, fromStdin] = await Promise.all([
      kb(['api', 'ns_create', '-f', 'key=from-file', '-F', `description=@${file}`], { env }),
      kb(['api', 'ns_create', '-f', 'key=from-stdin', '-F', 'description=@-'], { env, input: 'Piped in' }),
    ]);
    expect(replyOut(expect, fromFile)).toEqual({ success: true, data: { key: 'from-file', description: 'Line one\nLine two' } });
    expect(replyOut(expect, fromStdin)).toEqual({ success: true, data: { key: 'from-stdin', description: 'Piped in' } });
  });

  it('DELETE with a body from -f, from --input FILE and from --input - (stdin)', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-delete');
    for (const key of ['one', 'two', 'three']) await apiData(expect, server.url, token, 'POST', '/base_create', { namespace: 'docs', key });
    const file = join(tempDir('kb-api-'), 'body.json');
    writeFileSync(file, '{"namespace": "docs", "base": "two"}\n');
    const [fields, fromFile, fromStdin] = await Promise.all([
      kb(['api', 'base_delete', '-X', 'DELETE', '-f', 'namespace=docs', '-f', 'base=one'], { env }),
      kb(['api', 'base_delete', '-X', 'delete', '--input', file], { env }),
      kb(['api', 'base_delete', '--method', 'DELETE', '--input', '-'], { env, input: '{"namespace":"docs","base":"three"}' }),
    ]);
    expect(replyOut(expect, fields)).toEqual({ success: true, data: { namespace: 'docs', key: 'one', description: null } });
    expect(replyOut(expect, fromFile)).toEqual({ success: true, data: { namespace: 'docs', key: 'two', description: null } });
    expect(replyOut(expect, fromStdin)).toEqual({ success: true, data: { namespace: 'docs', key: 'three', description: null } });
    expect(await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')).toEqual([]);
  });

  it('exits by the status of a failure, printing the reply on stdout: 404 is 3, 409 is 5, 400 and 405 are 2, 401 is 4', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-errors');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'taken' });
    const [missing, conflict, invalid, wrongMethod, noRoute, badToken, badBody] = await Promise.all([
      kb(['api', 'ns_update', '-f', 'namespace=nowhere', '-f', 'data[description]=x'], { env }),
      kb(['api', 'ns_create', '-f', 'key=taken'], { env }),
      kb(['api', 'ns_create', '-f', 'key=docs', '-F', 'description=2024'], { env }),
      kb(['api', 'ns_list', '-X', 'PUT'], { env }),
      kb(['api', 'no_such_route'], { env }),
      kb(['api', 'auth'], { env: { ...env, KB_TOKEN: 'kbt_not-a-real-token' } }),
      kb(['api', 'ns_create', '--input', '-'], { env, input: '{"key":' }),
    ]);
    expect(failureOut(expect, missing, 3, 404).message).toMatch(/nowhere/);
    failureOut(expect, conflict, 5, 409);
    // -F types "2024": a number is not a description.
    expect(failureOut(expect, invalid, 2, 400).message).toMatch(/description/);
    failureOut(expect, wrongMethod, 2, 405);
    failureOut(expect, noRoute, 3, 404);
    failureOut(expect, badToken, 4, 401);
    failureOut(expect, badBody, 2, 400);
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([{ key: 'taken', description: null }]);
  });

  it('without a token, sends the request anyway and says how to log in on the 401', async ({ expect }) => {
    const env = isolatedEnv({ KB_URL: server.url });
    const [auth, openapi] = await Promise.all([kb(['api', 'auth'], { env }), kb(['api', 'openapi.json'], { env })]);
    expect(failureOut(expect, auth, 4, 401, /^No token is configured for this deployment: run `kb auth login`, or set KB_TOKEN\.$/).message).toMatch(/Authentication required/);
    // The document is served bare, and to anyone.
    expect(replyOut(expect, openapi)).toEqual(buildOpenApiDocument());
  });

  it('traces with --verbose on stderr, never the token', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'api-verbose');
    const result = await kb(['api', 'ns_list', '--verbose'], { env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('{"success":true,"data":[]}\n');
    expect(lines(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^\\* GET ${server.url}/v1/ns_list 200 \\d+ms$`))]);
    expect(leakedPieces(result.stdout + result.stderr, token)).toEqual([]);
  });
});

describe.concurrent('kb api failures before or below HTTP', { timeout: TEST_TIMEOUT_MS }, () => {
  it('exits 6 naming the URL when the deployment cannot be reached', async ({ expect }) => {
    const url = await closedPortUrl();
    const result = await kb(['api', 'ns_list'], { env: isolatedEnv({ KB_URL: url, KB_TOKEN: 'kbt_x' }) });
    expectFailure(
      expect,
      result,
      6,
      `cannot reach ${url}/v1/ns_list: connection refused`,
      'Is the server running (start a local one with `kb serve`)? `kb auth status` shows the URL and profile in use.',
    );
  });

  it('exits 1 on a 5xx, prints what came, and never sends a POST twice', async ({ expect }) => {
    const fake = await startFixedServer(500, { success: false, message: 'Internal server error' });
    try {
      const result = await kb(['api', 'ns_create', '-f', 'key=docs'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' }) });
      failureOut(expect, result, 1, 500);
      expect(fake.count()).toBe(1);
    } finally {
      await fake.close();
    }
  });

  it('exits 2 for a malformed field, a missing input file or a URL as PATH, sending nothing', async ({ expect }) => {
    const fake = await startFixedServer(200, { success: true, data: null });
    try {
      const env = isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' });
      const [field, file, url, noPath, matrix] = await Promise.all([
        kb(['api', 'ns_create', '-f', 'novalue'], { env }),
        kb(['api', 'ns_create', '--input', '/nonexistent/kb-body.json'], { env }),
        kb(['api', 'http://example.com/v1/ns_list'], { env }),
        kb(['api'], { env }),
        kb(['api', '..;/admin'], { env }),
      ]);
      expectFailure(expect, matrix, 2, 'PATH must stay under the deployment\'s /v1: "..;/admin" has a . or .. segment', 'The token is sent with the request, so kb sends it only to the API. For example: kb api ns_list.');
      expectFailure(expect, field, 2, 'Invalid field "novalue": expected key=value', 'For example: -f key=docs -F count=3.');
      expectFailure(expect, file, 2, 'Cannot read --input /nonexistent/kb-body.json: no such file');
      expect(url.code, describeRun(url)).toBe(2);
      expect(lines(url.stderr)[0]).toMatch(/not a URL/);
      expect(noPath.code, describeRun(noPath)).toBe(2);
      expect(fake.count()).toBe(0);
    } finally {
      await fake.close();
    }
  });

  it('prints any JSON reply, even one that is not an envelope (the documents group, say)', async ({ expect }) => {
    const fake = await startFixedServer(200, 'not an envelope');
    try {
      const result = await kb(['api', 'documents/anything'], { env: isolatedEnv({ KB_URL: fake.url, KB_TOKEN: 'kbt_x' }) });
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).toBe('"not an envelope"\n');
    } finally {
      await fake.close();
    }
  });
});

describe('the served document', () => {
  it('is what `kb api openapi.json` fetches, with a valid token too', async ({ expect }) => {
    const reply = await api(server.url, server.token, 'GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(buildOpenApiDocument());
  });
});
