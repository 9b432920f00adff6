import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freshEnv, kb } from './run.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'ns-cmd' });
});
afterAll(() => server.close());

/** The environment of a fresh organization of its own, through KB_URL and KB_TOKEN. */
async function orgEnv(org: string): Promise<Record<string, string>> {
  return freshEnv({ KB_URL: server.url, KB_TOKEN: await server.newToken(org) });
}

describe('kb ns', () => {
  it('create prints the namespace as a block on stdout and a confirmation on stderr; list prints a table', async () => {
    const env = await orgEnv('ns-create');
    expect(await kb(['ns', 'create', 'docs', '--description', 'Product docs'], { env })).toEqual({
      code: 0, stdout: 'key:         docs\ndescription: Product docs\n', stderr: '✓ Created namespace docs\n', asked: [],
    });
    await kb(['ns', 'create', 'api'], { env });
    expect(await kb(['ns', 'list'], { env })).toEqual({
      code: 0, stdout: 'KEY   DESCRIPTION\napi\ndocs  Product docs\n', stderr: '', asked: [],
    });
  });

  it('--json prints exactly the data', async () => {
    const env = await orgEnv('ns-json');
    const created = await kb(['ns', 'create', 'docs', '--json'], { env });
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(created.stdout)).toEqual({ key: 'docs', description: null });
    const listed = await kb(['ns', 'list', '--json'], { env });
    expect(listed.stdout).toBe('[\n  {\n    "key": "docs",\n    "description": null\n  }\n]\n');
  });

  it('list says on stderr that there are none yet, stdout empty', async () => {
    expect(await kb(['ns', 'list'], { env: await orgEnv('ns-empty') })).toEqual({
      code: 0, stdout: '', stderr: 'No namespaces yet: create one with `kb ns create KEY`.\n', asked: [],
    });
  });

  it('on a terminal, the table fits its width, cutting with …', async () => {
    const env = await orgEnv('ns-narrow');
    await kb(['ns', 'create', 'docs', '-d', 'A description far wider than the terminal'], { env });
    const result = await kb(['ns', 'list'], { env, tty: true, columns: 24 });
    expect(result.stdout).toBe('KEY   DESCRIPTION\ndocs  A description far…\n');
  });

  it('update sets and clears a description', async () => {
    const env = await orgEnv('ns-update');
    await kb(['ns', 'create', 'docs'], { env });
    expect(await kb(['ns', 'update', 'docs', '-d', 'New'], { env })).toEqual({
      code: 0, stdout: 'key:         docs\ndescription: New\n', stderr: '✓ Updated namespace docs\n', asked: [],
    });
    const cleared = await kb(['ns', 'update', 'docs', '--clear-description', '--json'], { env });
    expect(JSON.parse(cleared.stdout)).toEqual({ key: 'docs', description: null });
  });

  it('exits 5 on a key that is taken, 3 on a namespace that does not exist, 2 on a key that is malformed', async () => {
    const env = await orgEnv('ns-fail');
    await kb(['ns', 'create', 'docs'], { env });
    expect(await kb(['ns', 'create', 'docs'], { env })).toEqual({ code: 5, stdout: '', stderr: 'Error: Namespace docs already exists\n', asked: [] });
    const missing = await kb(['ns', 'update', 'nope', '-d', 'x'], { env });
    expect(missing).toMatchObject({ code: 3, stdout: '' });
    expect(missing.stderr).toMatch(/^Error: .*nope.*\n/);
    const malformed = await kb(['ns', 'create', 'a b'], { env });
    expect(malformed).toMatchObject({ code: 2, stdout: '' });
    expect(malformed.stderr).toMatch(/^Error: .*: nothing was sent\n/);
  });

  it('without a token exits 4, saying how to get one', async () => {
    expect(await kb(['ns', 'list'], { env: freshEnv({ KB_URL: server.url }) })).toEqual({
      code: 4, stdout: '', stderr: `Error: No token for this deployment (${server.url})\nRun \`kb auth login\`, or set KB_TOKEN.\n`, asked: [],
    });
  });
});

describe('kb base', () => {
  it('create with --create-namespace makes the namespace too; list prints a table, and --json the data', async () => {
    const env = await orgEnv('base-create');
    expect(await kb(['base', 'create', 'docs', 'faq', '-d', 'Questions', '--create-namespace'], { env })).toEqual({
      code: 0, stdout: 'namespace:   docs\nkey:         faq\ndescription: Questions\n', stderr: '✓ Created base faq in namespace docs\n', asked: [],
    });
    expect((await kb(['ns', 'list', '--json'], { env })).stdout).toContain('"key": "docs"');
    expect(await kb(['base', 'list', 'docs'], { env })).toEqual({ code: 0, stdout: 'KEY  DESCRIPTION\nfaq  Questions\n', stderr: '', asked: [] });
    expect(JSON.parse((await kb(['base', 'list', 'docs', '--json'], { env })).stdout)).toEqual([{ namespace: 'docs', key: 'faq', description: 'Questions' }]);
  });

  it('update changes the description, and exits 3 for a base that does not exist', async () => {
    const env = await orgEnv('base-update');
    await kb(['base', 'create', 'docs', 'faq', '--create-namespace'], { env });
    expect(await kb(['base', 'update', 'docs', 'faq', '-d', 'Answers'], { env })).toEqual({
      code: 0, stdout: 'namespace:   docs\nkey:         faq\ndescription: Answers\n', stderr: '✓ Updated base faq in namespace docs\n', asked: [],
    });
    expect((await kb(['base', 'update', 'docs', 'nope', '-d', 'x'], { env })).code).toBe(3);
  });

  describe('delete asks first', () => {
    it('without a terminal it refuses with exit 2 and names --yes; the base stays', async () => {
      const env = await orgEnv('base-delete-no-tty');
      await kb(['base', 'create', 'docs', 'faq', '--create-namespace'], { env });
      expect(await kb(['base', 'delete', 'docs', 'faq'], { env })).toEqual({
        code: 2, stdout: '', stderr: 'Error: Cannot prompt: not a terminal (or CI is set). Pass --yes to delete without confirmation.\n', asked: [],
      });
      expect((await kb(['base', 'list', 'docs', '--json'], { env })).stdout).toContain('"faq"');
    });

    it('--yes deletes without asking', async () => {
      const env = await orgEnv('base-delete-yes');
      await kb(['base', 'create', 'docs', 'faq', '--create-namespace'], { env });
      expect(await kb(['base', 'delete', 'docs', 'faq', '--yes'], { env })).toEqual({
        code: 0, stdout: 'namespace:   docs\nkey:         faq\ndescription: -\n', stderr: '✓ Deleted base faq from namespace docs\n', asked: [],
      });
      expect((await kb(['base', 'list', 'docs', '--json'], { env })).stdout).toBe('[]\n');
    });

    it('on a terminal, y deletes and anything else cancels with exit 1', async () => {
      const env = await orgEnv('base-delete-tty');
      await kb(['base', 'create', 'docs', 'faq', '--create-namespace'], { env });
      const question = 'Delete base faq in namespace docs, with all its data? [y/N] ';
      expect(await kb(['base', 'delete', 'docs', 'faq'], { env, tty: true, answers: ['n'] })).toEqual({
        code: 1, stdout: '', stderr: 'Error: Cancelled: nothing was deleted.\n', asked: [question],
      });
      expect((await kb(['base', 'list', 'docs', '--json'], { env })).stdout).toContain('"faq"');
      const yes = await kb(['base', 'delete', 'docs', 'faq', '--json'], { env, tty: true, answers: ['y'] });
      expect(yes).toMatchObject({ code: 0, stderr: '', asked: [question] });
      expect(JSON.parse(yes.stdout)).toEqual({ namespace: 'docs', key: 'faq', description: null });
    });

    it('a malformed key fails before anyone is asked', async () => {
      const result = await kb(['base', 'delete', 'docs', 'a b'], { env: await orgEnv('base-delete-bad'), tty: true, answers: ['y'] });
      expect(result).toMatchObject({ code: 2, stdout: '', asked: [] });
      expect(result.stderr).toMatch(/: nothing was sent\n$/);
    });
  });
});

describe('kb health', () => {
  it('needs no token, and prints the state, or exactly it with --json', async () => {
    const env = freshEnv({ KB_URL: server.url });
    expect(await kb(['health'], { env })).toEqual({ code: 0, stdout: `${server.url} is alive\n`, stderr: '', asked: [] });
    expect(await kb(['health', '--json'], { env })).toEqual({ code: 0, stdout: '"alive"\n', stderr: '', asked: [] });
  });

  it('exits 6 and names the URL when nothing listens there', async () => {
    const result = await kb(['health'], { env: freshEnv({ KB_URL: 'http://127.0.0.1:1' }) });
    expect(result.code).toBe(6);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Error: .*http:\/\/127\.0\.0\.1:1.*connection refused/);
  });

  it('traces each request to stderr with KB_DEBUG=1 of its own environment', async () => {
    const result = await kb(['health'], { env: freshEnv({ KB_URL: server.url, KB_DEBUG: '1' }) });
    expect(result.stderr).toMatch(new RegExp(`^\\* GET ${server.url}/v1/health 200 \\d+ms`));
  });
});
