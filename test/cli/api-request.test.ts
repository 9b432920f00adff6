import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Field, fieldsToBody, prepareApiRequest, rawField, renderReply, replyFailure, typedValue } from '../../src/cli/api-request.js';
import { UsageError } from '../../src/cli/errors.js';
import { memoryIO } from '../helpers/io.js';
import { tempDir } from '../helpers/server.js';

/** An empty stdin that is not a terminal, as `< /dev/null` gives. */
const NO_STDIN = memoryIO();

function usageError(work: () => unknown): UsageError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a UsageError');
}

/** Fields as -F gives them, for values without @. */
function typed(fields: string[]): Field[] {
  return fields.map((field) => {
    const { key, value } = rawField(field);
    return { key, value: typedValue(value as string) };
  });
}

describe('typedValue', () => {
  it('types true, false, null and JSON numbers, and keeps anything else as text', () => {
    expect(typedValue('true')).toBe(true);
    expect(typedValue('false')).toBe(false);
    expect(typedValue('null')).toBe(null);
    expect(typedValue('42')).toBe(42);
    expect(typedValue('-1.5e3')).toBe(-1500);
    expect(typedValue('0')).toBe(0);
    for (const text of ['', 'docs', 'True', 'NULL', '007', '1.', '.5', '+1', '0x10', 'Infinity', 'NaN', ' 1', '1 ']) {
      expect(typedValue(text), text).toBe(text);
    }
  });

  it('keeps an integer beyond 2^53 as text rather than change it', () => {
    expect(typedValue('9007199254740993')).toBe('9007199254740993');
    expect(typedValue('9007199254740991')).toBe(9007199254740991);
  });
});

describe('fieldsToBody', () => {
  it('builds an object of typed fields, splitting at the first =', () => {
    expect(fieldsToBody(typed(['key=docs', 'description=a=b', 'n=3', 'flag=false', 'gone=null', 'empty=']))).toEqual({
      key: 'docs', description: 'a=b', n: 3, flag: false, gone: null, empty: '',
    });
  });

  it('nests with key[sub] and appends with key[]', () => {
    expect(fieldsToBody(typed(['namespace=docs', 'data[description]=New', 'data[meta][level]=2', 'tags[]=a', 'tags[]=1']))).toEqual({
      namespace: 'docs', data: { description: 'New', meta: { level: 2 } }, tags: ['a', 1],
    });
  });

  it('sets __proto__ as an ordinary field, never the prototype', () => {
    const body = fieldsToBody(typed(['__proto__=x', 'constructor[prototype]=y']));
    expect(JSON.stringify(body)).toBe('{"__proto__":"x","constructor":{"prototype":"y"}}');
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).prototype).toBeUndefined();
  });

  it('rejects a field without =, an empty name, a field given twice and fields that conflict', () => {
    expect(usageError(() => fieldsToBody(typed(['docs']))).message).toBe('Invalid field "docs": expected key=value');
    expect(usageError(() => fieldsToBody(typed(['=docs']))).message).toBe('Invalid field "=docs": expected key=value');
    expect(usageError(() => fieldsToBody(typed(['key=a', 'key=b']))).message).toBe('Field "key" is given twice');
    expect(usageError(() => fieldsToBody(typed(['data=1', 'data[description]=x']))).message).toMatch(/conflicts/);
    expect(usageError(() => fieldsToBody(typed(['a[]=1', 'a[x]=2']))).message).toMatch(/conflicts/);
    expect(usageError(() => fieldsToBody(typed(['a[]x=1']))).message).toMatch(/Invalid field key/);
    expect(usageError(() => fieldsToBody(typed(['a[][]=1']))).message).toMatch(/\[\] must come last/);
  });
});

describe('prepareApiRequest', () => {
  it('is a GET without fields or input, and a POST with them', async () => {
    expect(await prepareApiRequest({ path: 'ns_list', typedFields: [] }, NO_STDIN)).toEqual({ method: 'GET', path: '/ns_list' });
    expect(await prepareApiRequest({ path: '/ns_create', typedFields: ['key=docs'] }, NO_STDIN)).toEqual({ method: 'POST', path: '/ns_create', body: '{"key":"docs"}' });
  });

  it('takes another method with -X, in any case, and sends the fields as a body for DELETE', async () => {
    expect(await prepareApiRequest({ path: 'base_delete', method: 'delete', typedFields: ['namespace=docs', 'base=faq'] }, NO_STDIN)).toEqual({
      method: 'DELETE', path: '/base_delete', body: '{"namespace":"docs","base":"faq"}',
    });
  });

  it('puts the fields of a GET in the query string, as text', async () => {
    expect(await prepareApiRequest({ path: 'base_list', method: 'GET', typedFields: ['namespace=docs', 'n=1'] }, NO_STDIN)).toEqual({
      method: 'GET', path: '/base_list?namespace=docs&n=1',
    });
    expect(await prepareApiRequest({ path: 'base_list?a=1', method: 'GET', typedFields: ['namespace=a b&c'] }, NO_STDIN)).toEqual({
      method: 'GET', path: '/base_list?a=1&namespace=a+b%26c',
    });
  });

  it('-f sends strings whatever they look like, -F typed values and files; -f fields come first', async () => {
    const file = join(tempDir('kb-api-'), 'description.txt');
    writeFileSync(file, 'From a file\n');
    expect(await prepareApiRequest({ path: 'x', rawFields: ['n=3', 'gone=null', 'flag=true', 'at=@file'], typedFields: ['m=3', 'text=@' + file] }, NO_STDIN)).toEqual({
      method: 'POST', path: '/x', body: '{"n":"3","gone":"null","flag":"true","at":"@file","m":3,"text":"From a file\\n"}',
    });
    await expect(prepareApiRequest({ path: 'x', typedFields: ['d=@/nonexistent/d.txt'] }, NO_STDIN)).rejects.toMatchObject({
      exitCode: 2, message: 'Cannot read -F d /nonexistent/d.txt: no such file',
    });
  });

  it('sends --input as it is, the fields then going to the query string', async () => {
    const file = join(tempDir('kb-api-'), 'body.json');
    writeFileSync(file, '{"key": "docs"}\n');
    expect(await prepareApiRequest({ path: 'ns_create', typedFields: [], input: file }, NO_STDIN)).toEqual({ method: 'POST', path: '/ns_create', body: '{"key": "docs"}\n' });
    expect(await prepareApiRequest({ path: 'x', typedFields: ['a=1'], input: file, method: 'PUT' }, NO_STDIN)).toEqual({ method: 'PUT', path: '/x?a=1', body: '{"key": "docs"}\n' });
  });

  it('reads --input - and -F key=@- from the stdin of its IO, and refuses a stdin that is a terminal', async () => {
    expect(await prepareApiRequest({ path: 'ns_create', input: '-' }, memoryIO({ stdin: '{"key":"docs"}' }))).toEqual({ method: 'POST', path: '/ns_create', body: '{"key":"docs"}' });
    expect(await prepareApiRequest({ path: 'ns_create', typedFields: ['description=@-'] }, memoryIO({ stdin: 'From stdin\n' }))).toEqual({
      method: 'POST', path: '/ns_create', body: '{"description":"From stdin\\n"}',
    });
    await expect(prepareApiRequest({ path: 'ns_create', input: '-' }, memoryIO({ tty: true }))).rejects.toMatchObject({
      exitCode: 2, message: '--input - reads stdin, but stdin is a terminal',
    });
  });

  it.each([
    '/v1/ns_list', 'v1/ns_list', '/v1/base_list?namespace=docs', 'v1', '/v1',
  ])('takes %j as the API document writes it: its leading /v1 is the base, not part of PATH', async (path) => {
    const { path: sent } = await prepareApiRequest({ path, typedFields: [] }, NO_STDIN);
    expect(sent).toBe(path.replace(/^\/?v1/, '') || '/');
  });

  it('keeps a v1 that is not a whole leading segment', async () => {
    expect((await prepareApiRequest({ path: 'v1x/ns_list', typedFields: [] }, NO_STDIN)).path).toBe('/v1x/ns_list');
    expect((await prepareApiRequest({ path: 'ns_list/v1/', typedFields: [] }, NO_STDIN)).path).toBe('/ns_list/v1/');
  });

  it.each([
    '../../admin', '..', 'ns_list/../../x', './ns_list', '%2e%2e/%2E%2e/x', '.%2e/x', 'a\\..\\x', 'a%2f..%2fx', '../x?y=1',
    // What a server may still read as . or ..: matrix parameters (Tomcat, Jetty), double or %u encoding, full-width dots.
    '..;/admin', 'ns_list/..;x=1/..;/y', '.;/ns_list', '%2e%2e;/x', '%2e%2e%3b/x', '%252e%252e/x', '%u002e%u002e/x', '\uff0e\uff0e/x',
    '%ef%bc%8e%ef%bc%8e/x', '..%00/x', '/v1/../x', 'v1/..;/x', '..%2f', 'a%255c..%255cx',
  ])(
    'refuses %j, which would climb out of /v1 with the token: exit 2, nothing sent',
    async (path) => {
      await expect(prepareApiRequest({ path, typedFields: [] }, NO_STDIN)).rejects.toMatchObject({
        exitCode: 2,
        message: `PATH must stay under the deployment's /v1: ${JSON.stringify(path)} has a . or .. segment`,
      });
    },
  );

  it('takes dots that are not a whole segment, and any dots in the query string', async () => {
    expect(await prepareApiRequest({ path: 'x..y/.hidden/...', typedFields: [] }, NO_STDIN)).toEqual({ method: 'GET', path: '/x..y/.hidden/...' });
    expect(await prepareApiRequest({ path: 'a;b/..x;y/%2e%2ex', typedFields: [] }, NO_STDIN)).toEqual({ method: 'GET', path: '/a;b/..x;y/%2e%2ex' });
    expect(await prepareApiRequest({ path: 'base_list?namespace=../..', typedFields: [] }, NO_STDIN)).toEqual({ method: 'GET', path: '/base_list?namespace=../..' });
  });

  it('rejects a missing input file, a full URL and a method that is not a word, with exit 2', async () => {
    await expect(prepareApiRequest({ path: 'ns_create', typedFields: [], input: '/nonexistent/body.json' }, NO_STDIN)).rejects.toMatchObject({
      exitCode: 2, message: 'Cannot read --input /nonexistent/body.json: no such file',
    });
    await expect(prepareApiRequest({ path: 'https://evil.example/v1/ns_list', typedFields: [] }, NO_STDIN)).rejects.toMatchObject({ exitCode: 2 });
    await expect(prepareApiRequest({ path: 'ns_list', method: 'GET /x', typedFields: [] }, NO_STDIN)).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('renderReply and replyFailure', () => {
  const reply = (status: number, text: string) => ({ status, text, url: 'http://kb.test/v1/x', contentType: 'application/json' });

  it('prints JSON indented on a terminal and on one line when piped; other text as it came', () => {
    const text = '{"success":true,"data":[{"key":"docs"}]}';
    expect(renderReply(reply(200, text), false)).toBe(`${text}\n`);
    expect(renderReply(reply(200, text), true)).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(renderReply(reply(502, '<html>bad gateway</html>'), false)).toBe('<html>bad gateway</html>\n');
    expect(renderReply(reply(200, ''), false)).toBe('');
  });

  it('on a terminal, escapes what would drive or reorder it: in JSON as \\uXXXX (the same value), in other text visibly', () => {
    const data = { key: 'docs', description: 'invoice\u202Etxt.exe \u009B31m \u001B[2J' };
    const text = JSON.stringify({ success: true, data });
    const shown = renderReply(reply(200, text), true);
    // eslint-disable-next-line no-control-regex
    expect(shown).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202E]/);
    expect(shown).toContain('invoice\\u202etxt.exe \\u009b31m \\u001b[2J');
    expect(JSON.parse(shown)).toEqual({ success: true, data });
    // Piped, the bytes are the server's.
    expect(renderReply(reply(200, text), false)).toBe(`${text}\n`);
    expect(renderReply(reply(502, '<b>\u001B]0;pwned\u0007</b>\nline two'), true)).toBe('<b>\\x1b]0;pwned\\x07</b>\nline two\n');
  });

  it('fails with the exit code of the status, the message and help of the envelope', () => {
    expect(replyFailure(reply(200, '{}'), true)).toBeUndefined();
    const cases: [number, number][] = [[400, 2], [401, 4], [403, 4], [404, 3], [409, 5], [413, 2], [415, 2], [422, 2], [429, 1], [500, 1], [503, 1], [302, 1]];
    for (const [status, exitCode] of cases) {
      const failure = replyFailure(reply(status, '{"success":false,"message":"Nope","help":"Try again."}'), true);
      expect(failure, String(status)).toMatchObject({ exitCode, message: `Nope (HTTP ${status})`, help: 'Try again.' });
    }
    expect(replyFailure(reply(404, '<html></html>'), true)).toMatchObject({ exitCode: 3, message: 'http://kb.test/v1/x answered HTTP 404' });
  });

  it('says to log in when a 401 came to a request sent without a token', () => {
    expect(replyFailure(reply(401, '{"success":false,"message":"Authentication required"}'), false)?.help).toMatch(/kb auth login/);
  });
});
