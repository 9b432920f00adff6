import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileStore } from '../../src/config/profiles.js';
import { closedPortUrl } from '../helpers/cli-e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freshEnv, kb } from './run.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'auth-cmd' });
});
afterAll(() => server.close());

/** Logs in with the token on stdin, as a script does, and checks that it worked. */
async function login(env: Record<string, string>, token: string, profile?: string): Promise<void> {
  const result = await kb(['auth', 'login', '--url', server.url, '--with-token', ...(profile ? ['--profile', profile] : [])], { env, stdin: `${token}\n` });
  expect(result.code, result.stderr).toBe(0);
}

describe('kb auth login', () => {
  it('checks a token read from stdin with GET /auth and saves it as the default profile', async () => {
    const env = freshEnv();
    const result = await kb(['auth', 'login', '--url', server.url, '--with-token'], { env, stdin: `${server.token}\n` });
    expect(result).toEqual({
      code: 0,
      stdout: '',
      stderr: `✓ Logged in to ${server.url} as organization auth-cmd; saved as profile "default" (the default).\n`,
      asked: [],
    });
    const token = await kb(['auth', 'token'], { env });
    expect(token).toMatchObject({ code: 0, stdout: `${server.token}\n`, stderr: '' });
  });

  it('prints exactly the result with --json', async () => {
    const result = await kb(['auth', 'login', '--url', server.url, '--with-token', '--profile', 'ci', '--json'], { env: freshEnv(), stdin: server.token });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ profile: 'ci', url: server.url, organization: 'auth-cmd', default: true });
    expect(result.stderr).toBe('');
  });

  it('on a terminal asks for the URL, then the token without showing it', async () => {
    const env = freshEnv();
    const result = await kb(['auth', 'login'], { env, tty: true, answers: [server.url, server.token] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.asked).toEqual(['URL of the kb deployment: [http://127.0.0.1:8080] ', `Token for ${server.url}: `]);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain(server.token);
    expect((await kb(['auth', 'token'], { env })).stdout).toBe(`${server.token}\n`);
  });

  it('on a terminal offers the URL of a kb serve running on this machine, from the saved profiles that answer', async () => {
    const env = freshEnv();
    const profiles = new ProfileStore({ dir: env.KB_CONFIG_DIR });
    // The default profile points at a local port where nothing runs any more: it is not offered.
    await profiles.saveProfile('local', { url: await closedPortUrl(), token: 'kbt_gone' });
    await profiles.saveProfile('local-2', { url: server.url, token: server.token });
    const result = await kb(['auth', 'login', '--profile', 'work'], { env, tty: true, answers: ['', server.token] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.asked).toEqual([`URL of the kb deployment: [${server.url}] `, `Token for ${server.url}: `]);
  });

  it('without a terminal and without --with-token, exits 2 naming the flag, and saves nothing', async () => {
    const env = freshEnv();
    const result = await kb(['auth', 'login', '--url', server.url], { env });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Error: Cannot prompt: not a terminal (or CI is set). Pass --with-token and pipe the token on stdin.\n',
      asked: [],
    });
    expect((await kb(['auth', 'token'], { env })).code).toBe(4);
  });

  it('exits 2 when stdin holds no token, and 4 when the server rejects it; nothing is saved', async () => {
    const env = freshEnv();
    expect(await kb(['auth', 'login', '--url', server.url, '--with-token'], { env, stdin: '\n' })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Error: --with-token read nothing from stdin\nPipe the token in: kb auth login --with-token < token.txt\n',
      asked: [],
    });
    const rejected = await kb(['auth', 'login', '--url', server.url, '--with-token'], { env, stdin: 'kbt_not-a-token' });
    expect(rejected.code).toBe(4);
    expect(rejected.stdout).toBe('');
    expect(rejected.stderr).toMatch(/^Error: .+\n/);
    expect(await kb(['auth', 'token'], { env })).toMatchObject({ code: 4, stdout: '' });
  });

  it('takes the URL from KB_URL of its own environment when --url is not given', async () => {
    const env = freshEnv({ KB_URL: server.url });
    const result = await kb(['auth', 'login', '--with-token'], { env, stdin: server.token });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(`✓ Logged in to ${server.url} as organization auth-cmd; saved as profile "default" (the default).\n`);
  });
});

describe('kb auth status', () => {
  it('shows the profile, URL, organization and the masked token, and exits 0', async () => {
    const env = freshEnv();
    await login(env, server.token);
    const result = await kb(['auth', 'status'], { env });
    expect(result).toEqual({
      code: 0,
      stdout:
        `profile:      default\nurl:          ${server.url}\norganization: auth-cmd\ntoken:        kbt_…${server.token.slice(-4)} (from the profile)\n` +
        'scope:        full\nexpires:      never\n' +
        '\nProfiles (* in use):\n' +
        `   NAME               URL${' '.repeat(server.url.length - 1)}TOKEN  ORGANIZATION  SCOPE  EXPIRES\n` +
        `*  default (default)  ${server.url}  yes    auth-cmd      full   never\n`,
      stderr: '',
      asked: [],
    });
  });

  it("checks every profile's token: its organization, scope and expiry, a warning for one that expires within 7 days, and why one could not be checked", async () => {
    const env = freshEnv();
    await login(env, server.token);
    const soon = new Date(Date.now() + 2 * 24 * 3_600_000).toISOString();
    await login(env, await server.newToken('auth-ro', { scope: 'read-only', expiresAt: soon }), 'reader');
    const profiles = new ProfileStore({ dir: env.KB_CONFIG_DIR });
    const gone = await closedPortUrl();
    await profiles.saveProfile('gone', { url: gone, token: 'kbt_0123456789abcdefghijklmnopqrstuvwxyz0123456' });
    await profiles.saveProfile('revoked', { url: server.url, token: 'kbt_abcdefghijklmnopqrstuvwxyz0123456789abcdefg' });

    const human = await kb(['auth', 'status'], { env });
    expect(human.code, human.stderr).toBe(0);
    const table = human.stdout.split('Profiles (* in use):\n')[1]?.split('\n') ?? [];
    expect(table[0]).toMatch(/^ {3}NAME +URL +TOKEN +ORGANIZATION +SCOPE +EXPIRES$/);
    expect(table[1]).toMatch(new RegExp(`^\\*  default \\(default\\) +${server.url} +yes +auth-cmd +full +never$`));
    expect(table[2]).toMatch(new RegExp(`^ {3}gone +${gone} +yes +\\(.*${gone.replace(/[.:/]/g, '\\$&')}.*\\)$`));
    expect(table[3]).toMatch(new RegExp(`^ {3}reader +${server.url} +yes +auth-ro +read-only +${soon.replace(/[.:]/g, '\\$&')}$`));
    expect(table[4]).toMatch(new RegExp(`^ {3}revoked +${server.url} +yes +\\(.+\\)$`));
    expect(human.stderr).toMatch(new RegExp(`^Warning: the token of profile "reader" expires at ${soon.replace(/[.:]/g, '\\$&')} \\(in 4[78] hours\\)\\. .*kb auth login --profile reader\`\\.\\n$`));

    const json = await kb(['auth', 'status', '--json'], { env });
    const entries = (JSON.parse(json.stdout) as { profiles: Array<Record<string, unknown>> }).profiles;
    expect(entries.map(({ name, organization, scope, expiresAt }) => ({ name, organization, scope, expiresAt }))).toEqual([
      { name: 'default', organization: 'auth-cmd', scope: 'full', expiresAt: null },
      { name: 'gone', organization: null, scope: null, expiresAt: null },
      { name: 'reader', organization: 'auth-ro', scope: 'read-only', expiresAt: soon },
      { name: 'revoked', organization: null, scope: null, expiresAt: null },
    ]);
    expect(entries.map((entry) => entry.problem === null)).toEqual([true, false, true, false]);
    expect(json.stdout + json.stderr + human.stdout + human.stderr).not.toMatch(/kbt_(?!…)[\w-]{8}/);
  });

  it('with --json prints the status, and exits 4 without a token, the status still on stdout', async () => {
    const env = freshEnv({ KB_URL: server.url });
    const result = await kb(['auth', 'status', '--json'], { env });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: null, url: server.url, urlSource: 'env', organization: null, tokenSource: 'none', token: null, scope: null, expiresAt: null,
      problem: 'Not logged in: no token',
      profiles: [],
    });
    expect(result.stderr).toBe('Error: Not logged in: no token\nRun `kb auth login`.\n');
  });
});

describe('kb auth switch, logout and token', () => {
  it('switch makes another profile the default; token then prints its token', async () => {
    const env = freshEnv();
    const other = await server.newToken('auth-other');
    await login(env, server.token, 'first');
    await login(env, other, 'second');
    expect((await kb(['auth', 'token'], { env })).stdout).toBe(`${server.token}\n`);
    expect(await kb(['auth', 'switch', 'second'], { env })).toEqual({
      code: 0, stdout: '', stderr: `✓ The default profile is now "second" (${server.url}).\n`, asked: [],
    });
    expect(await kb(['auth', 'token'], { env })).toEqual({ code: 0, stdout: `${other}\n`, stderr: '', asked: [] });
    expect((await kb(['auth', 'token', '--profile', 'first'], { env })).stdout).toBe(`${server.token}\n`);
  });

  it('switch to a profile that does not exist exits 2 and names the profiles there are', async () => {
    const env = freshEnv();
    await login(env, server.token, 'first');
    expect(await kb(['auth', 'switch', 'nope'], { env })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Error: no profile named "nope"; profiles: first\nCreate it with `kb auth login --profile nope`, or pick one with `kb auth switch NAME`.\n',
      asked: [],
    });
  });

  it('logout removes the token and keeps the profile the default; a second logout says there was none', async () => {
    const env = freshEnv();
    await login(env, server.token);
    const path = join(env.KB_CONFIG_DIR as string, 'config.json');
    expect(await kb(['auth', 'logout'], { env })).toEqual({
      code: 0, stdout: '', stderr: `✓ Logged out of profile "default": its token is removed from ${path}.\n` +
        `Kept: the profile "default" and its URL (${server.url}). To remove them too: \`kb auth remove default\`.\n`,
      asked: [],
    });
    expect(await kb(['auth', 'logout'], { env })).toEqual({
      code: 0, stdout: '', stderr: `Profile "default" had no token.\nKept: the profile "default" and its URL (${server.url}). To remove them too: \`kb auth remove default\`.\n`, asked: [],
    });
    expect(await kb(['auth', 'token'], { env })).toEqual({
      code: 4, stdout: '', stderr: 'Error: No token configured\nRun `kb auth login --profile default`.\n', asked: [],
    });
  });

  it('logout takes the profile from KB_PROFILE of its own environment', async () => {
    const env = freshEnv();
    await login(env, server.token, 'first');
    await login(env, server.token, 'second');
    const result = await kb(['auth', 'logout'], { env: { ...env, KB_PROFILE: 'second' } });
    expect(result.stderr).toMatch(/^✓ Logged out of profile "second"/);
    expect((await kb(['auth', 'token', '--profile', 'first'], { env })).code).toBe(0);
    expect((await kb(['auth', 'token', '--profile', 'second'], { env })).code).toBe(4);
  });

  it('logout with no profile at all exits 4', async () => {
    expect(await kb(['auth', 'logout'], { env: freshEnv() })).toEqual({
      code: 4, stdout: '', stderr: 'Error: No profile to log out of: none is configured\n', asked: [],
    });
  });
});
