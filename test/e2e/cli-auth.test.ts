import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { isolatedEnv, runKb, type RunResult } from '../helpers/cli.js';
import {
  apiData,
  closedPortUrl,
  describeRun,
  expectEnvelopeFailure,
  expectNoStack,
  jsonOut,
  kb,
  leakedPieces,
  lines,
  TEST_TIMEOUT_MS,
} from '../helpers/cli-e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Two real deployments, so that which URL and which token a command used shows in what it gets back.
let one: TestServer;
let two: TestServer;
beforeAll(async () => {
  [one, two] = await Promise.all([startTestServer({ org: 'org-alpha' }), startTestServer({ org: 'org-beta' })]);
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
});

/** `kb auth login --with-token`, the token on stdin; `run` is runKb where processes must really run at once. */
function login(env: NodeJS.ProcessEnv, token: string, args: readonly string[], run: typeof runKb = kb): Promise<RunResult> {
  return run(['auth', 'login', '--with-token', ...args], { env, input: `${token}\n` });
}

function configPath(env: NodeJS.ProcessEnv): string {
  return join(env.KB_CONFIG_DIR as string, 'config.json');
}

interface ConfigFile {
  defaultProfile?: string;
  profiles: Record<string, { url: string; token?: string }>;
}

function readConfig(env: NodeJS.ProcessEnv): ConfigFile {
  return JSON.parse(readFileSync(configPath(env), 'utf8')) as ConfigFile;
}

function expectOk(expect: ExpectStatic, result: RunResult): void {
  expect(result.code, describeRun(result)).toBe(0);
}

describe.concurrent('profiles through kb auth', { timeout: TEST_TIMEOUT_MS }, () => {
  it('the first login becomes the default; a later login --profile X does not change it; auth switch does', async ({ expect }) => {
    const env = isolatedEnv();
    const first = await login(env, one.token, ['--url', one.url]);
    expectOk(expect, first);
    expect(first.stdout).toBe('');
    expect(first.stderr).toContain('org-alpha');
    expect(readConfig(env)).toMatchObject({ defaultProfile: 'default', profiles: { default: { url: one.url, token: one.token } } });

    const second = await login(env, two.token, ['--url', two.url, '--profile', 'staging', '--json']);
    expect(jsonOut(expect, second)).toMatchObject({ profile: 'staging', url: two.url, organization: 'org-beta' });
    expect(readConfig(env)).toMatchObject({
      defaultProfile: 'default',
      profiles: { default: { url: one.url, token: one.token }, staging: { url: two.url, token: two.token } },
    });

    const [switched, missing] = await Promise.all([
      kb(['auth', 'switch', 'staging'], { env }),
      kb(['auth', 'switch', 'nowhere'], { env: { ...env } }),
    ]);
    expectOk(expect, switched);
    expect(missing.code, describeRun(missing)).toBe(2);
    expect(missing.stderr).toContain('nowhere');
    expect(readConfig(env).defaultProfile).toBe('staging');

    // Without --profile, login writes the default profile, whichever that is now.
    const gamma = await two.newToken('org-gamma-two');
    expectOk(expect, await login(env, gamma, ['--url', two.url]));
    expect(readConfig(env)).toMatchObject({
      defaultProfile: 'staging',
      profiles: { default: { url: one.url, token: one.token }, staging: { url: two.url, token: gamma } },
    });
  });

  it('a first login under --profile makes that profile the default', async ({ expect }) => {
    const env = isolatedEnv();
    expectOk(expect, await login(env, one.token, ['--url', one.url, '--profile', 'work']));
    expect(readConfig(env)).toMatchObject({ defaultProfile: 'work', profiles: { work: { url: one.url, token: one.token } } });
    expect(Object.keys(readConfig(env).profiles)).toEqual(['work']);
  });

  it('a rejected token exits 4 and saves nothing: no file when there was none, the same bytes when there was one', async ({ expect }) => {
    const wrong = `kbt_${'R'.repeat(43)}`;
    const fresh = isolatedEnv();
    const rejected = await login(fresh, wrong, ['--url', one.url]);
    await expectEnvelopeFailure(expect, rejected, 4, { url: one.url, token: wrong }, { method: 'GET', path: '/auth' }, 401);
    expect(existsSync(configPath(fresh))).toBe(false);

    const env = isolatedEnv();
    expectOk(expect, await login(env, one.token, ['--url', one.url]));
    const before = readFileSync(configPath(env), 'utf8');
    const [again, other, unreachable] = await Promise.all([
      login(env, wrong, ['--url', one.url]),
      login(env, wrong, ['--url', one.url, '--profile', 'other']),
      login(env, one.token, ['--url', await closedPortUrl(), '--profile', 'offline']),
    ]);
    expect(again.code, describeRun(again)).toBe(4);
    expect(other.code, describeRun(other)).toBe(4);
    expect(unreachable.code, describeRun(unreachable)).toBe(6);
    expect(readFileSync(configPath(env), 'utf8')).toBe(before);
  });

  it('login without --with-token and without a TTY exits 2 naming --with-token; an empty stdin exits 2; nothing is saved', async ({ expect }) => {
    const env = isolatedEnv();
    const [noFlag, noFlagNoUrl, empty] = await Promise.all([
      kb(['auth', 'login', '--url', one.url], { env }),
      kb(['auth', 'login'], { env }),
      kb(['auth', 'login', '--url', one.url, '--with-token'], { env, input: '' }),
    ]);
    for (const result of [noFlag, noFlagNoUrl]) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--with-token');
      expectNoStack(expect, result);
    }
    expect(empty.code, describeRun(empty)).toBe(2);
    expectNoStack(expect, empty);
    expect(existsSync(configPath(env))).toBe(false);
  });

  it('auth status shows the profile, URL, organization, token source and a masked token', async ({ expect }) => {
    const env = isolatedEnv();
    expectOk(expect, await login(env, one.token, ['--url', one.url]));
    const other = await one.newToken('org-delta');
    const [human, json, fromEnv, fromEnvJson] = await Promise.all([
      kb(['auth', 'status'], { env }),
      kb(['auth', 'status', '--json'], { env }),
      kb(['auth', 'status'], { env: { ...env, KB_TOKEN: other } }),
      kb(['auth', 'status', '--json'], { env: { ...env, KB_TOKEN: other } }),
    ]);

    expectOk(expect, human);
    for (const shown of ['default', one.url, 'org-alpha']) expect(human.stdout).toContain(shown);
    const tokenLine = lines(human.stdout).find((line) => /token/i.test(line));
    expect(tokenLine, human.stdout).toMatch(/profile/i);
    expect(tokenLine, human.stdout).not.toMatch(/\bnone\b/i);
    expect(leakedPieces(human.stdout + human.stderr, one.token)).toEqual([]);

    const status = jsonOut(expect, json) as Record<string, unknown>;
    expect(status).toMatchObject({ profile: 'default', url: one.url, organization: 'org-alpha', tokenSource: 'profile' });
    expect(typeof status.token).toBe('string');
    expect(status.token).not.toBe(one.token);
    expect(leakedPieces(json.stdout + json.stderr, one.token)).toEqual([]);

    expectOk(expect, fromEnv);
    expect(fromEnv.stdout).toContain('org-delta');
    expect(lines(fromEnv.stdout).find((line) => /token/i.test(line))).toContain('KB_TOKEN');
    expect(leakedPieces(fromEnv.stdout + fromEnv.stderr, other)).toEqual([]);
    expect(jsonOut(expect, fromEnvJson)).toMatchObject({ profile: 'default', url: one.url, organization: 'org-delta', tokenSource: 'env' });
  });

  it('logging out of a profile kb serve saved says how to get a token again, and so does auth status', async ({ expect }) => {
    const env = isolatedEnv();
    const token = await one.newToken('org-logout-local');
    expectOk(expect, await login(env, token, ['--url', one.url, '--profile', 'local']));
    const again = `kb serve token create --org local --save --profile local --url ${one.url.replace(/\/$/, '')}`;
    const logout = await kb(['auth', 'logout'], { env });
    expectOk(expect, logout);
    expect(logout.stderr.split('\n')[1], describeRun(logout)).toBe(`To log in again: \`${again}\`.`);
    const status = await kb(['auth', 'status'], { env });
    expect(status.code, describeRun(status)).toBe(4);
    expect(status.stderr, describeRun(status)).toContain(`Run \`kb auth login --profile local\`, or for the kb serve on this machine \`${again}\`.`);
    // A profile of another name is one a person set up: no such hint.
    expectOk(expect, await login(env, token, ['--url', one.url, '--profile', 'mine']));
    const other = await kb(['auth', 'logout', '--profile', 'mine'], { env });
    expectOk(expect, other);
    expect(other.stderr, describeRun(other)).not.toContain('To log in again');
  });

  it('auth token prints the raw token; auth logout removes it from the file and the default stays; then status and commands exit 4', async ({ expect }) => {
    const env = isolatedEnv();
    // Organizations of this test alone: the other tests run at the same time.
    const [main, staging] = await Promise.all([one.newToken('org-logout'), two.newToken('org-logout-staging')]);
    expectOk(expect, await login(env, main, ['--url', one.url]));
    expectOk(expect, await login(env, staging, ['--url', two.url, '--profile', 'staging']));
    const [token, stagingToken] = await Promise.all([
      kb(['auth', 'token'], { env }),
      kb(['auth', 'token', '--profile', 'staging'], { env }),
    ]);
    expectOk(expect, token);
    expect(token.stdout).toBe(`${main}\n`);
    expectOk(expect, stagingToken);
    expect(stagingToken.stdout).toBe(`${staging}\n`);

    expectOk(expect, await kb(['auth', 'logout'], { env }));
    const raw = readFileSync(configPath(env), 'utf8');
    expect(raw).not.toContain(main);
    expect(raw).toContain(staging);
    const config = JSON.parse(raw) as ConfigFile;
    expect(config.defaultProfile).toBe('default');
    expect(config.profiles.default).toMatchObject({ url: one.url });
    expect(config.profiles.default).not.toHaveProperty('token');

    const [status, statusJson, tokenAfter, list, stagingList] = await Promise.all([
      kb(['auth', 'status'], { env }),
      kb(['auth', 'status', '--json'], { env }),
      kb(['auth', 'token'], { env }),
      kb(['ns', 'list'], { env }),
      kb(['ns', 'list', '--json'], { env: { ...env, KB_PROFILE: 'staging' } }),
    ]);
    expect(status.code, describeRun(status)).toBe(4);
    expect(status.stdout).toContain('default');
    expect(status.stdout).toContain(one.url);
    expect(statusJson.code, describeRun(statusJson)).toBe(4);
    expect(JSON.parse(statusJson.stdout)).toMatchObject({ profile: 'default', url: one.url, organization: null, tokenSource: 'none' });
    expect(tokenAfter.code, describeRun(tokenAfter)).toBe(4);
    expect(tokenAfter.stdout).toBe('');
    expect(list.code, describeRun(list)).toBe(4);
    expect(list.stdout).toBe('');
    expect(list.stderr).toContain('kb auth login');
    expectNoStack(expect, list);
    expect(jsonOut(expect, stagingList)).toEqual([]);
  });
});

describe.concurrent('which deployment a command uses (docs/contract.md, Deployments and profiles)', { timeout: TEST_TIMEOUT_MS }, () => {
  it('--profile beats KB_PROFILE beats the default profile; KB_URL and KB_TOKEN override the profile\'s; a missing profile fails clearly', async ({ expect }) => {
    const env = isolatedEnv();
    // Organizations of this test alone, so that the namespaces listed are exactly the ones made here.
    const [alpha, beta, gamma] = await Promise.all([one.newToken('org-prec-one'), two.newToken('org-prec-two'), one.newToken('org-prec-gamma')]);
    expectOk(expect, await login(env, alpha, ['--url', one.url]));
    expectOk(expect, await login(env, beta, ['--url', two.url, '--profile', 'two']));
    await apiData(expect, one.url, alpha, 'POST', '/ns_create', { key: 'on-one' });
    await apiData(expect, two.url, beta, 'POST', '/ns_create', { key: 'on-two' });
    await apiData(expect, one.url, gamma, 'POST', '/ns_create', { key: 'gamma-ns' });
    const onOne = [{ key: 'on-one', description: null }];
    const onTwo = [{ key: 'on-two', description: null }];

    const list = (extraEnv: Record<string, string>, args: string[] = []) =>
      kb(['ns', 'list', '--json', ...args], { env: { ...env, ...extraEnv } });
    const [
      byDefault, byEnvProfile, flagBeatsEnv, flagBeatsMissingEnv, urlAndToken, tokenOnly, urlOnly, urlOnlyStatus, missingFlag, missingEnv,
    ] = await Promise.all([
      list({}),
      list({ KB_PROFILE: 'two' }),
      list({ KB_PROFILE: 'two' }, ['--profile', 'default']),
      list({ KB_PROFILE: 'missing' }, ['--profile', 'two']),
      list({ KB_URL: two.url, KB_TOKEN: beta }),
      list({ KB_TOKEN: gamma }),
      list({ KB_URL: two.url }),
      kb(['auth', 'status', '--json'], { env: { ...env, KB_URL: two.url } }),
      list({}, ['--profile', 'missing']),
      list({ KB_PROFILE: 'missing' }),
    ]);

    expect(jsonOut(expect, byDefault)).toEqual(onOne);
    expect(jsonOut(expect, byEnvProfile)).toEqual(onTwo);
    expect(jsonOut(expect, flagBeatsEnv)).toEqual(onOne);
    expect(jsonOut(expect, flagBeatsMissingEnv)).toEqual(onTwo);
    expect(jsonOut(expect, urlAndToken)).toEqual(onTwo);
    expect(jsonOut(expect, tokenOnly)).toEqual([{ key: 'gamma-ns', description: null }]);
    // The default profile's token, sent to the other deployment, which does not know it.
    await expectEnvelopeFailure(expect, urlOnly, 4, { url: two.url, token: alpha }, { method: 'GET', path: '/ns_list' }, 401, [
      `The token came from profile "default" (${two.url}): log in again with \`kb auth login --profile default\`, or remove the profile with \`kb auth remove default\`.`,
    ]);
    expect(urlOnlyStatus.code, describeRun(urlOnlyStatus)).toBe(4);
    expect(JSON.parse(urlOnlyStatus.stdout)).toMatchObject({ profile: 'default', url: two.url, urlSource: 'env', tokenSource: 'profile' });

    for (const result of [missingFlag, missingEnv]) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stdout).toBe('');
      expect(lines(result.stderr)[0]).toMatch(/profile/i);
      expect(lines(result.stderr)[0]).toContain('"missing"');
      expectNoStack(expect, result);
    }
    expect(missingFlag.stderr).toContain('--profile');
    expect(missingEnv.stderr).toContain('KB_PROFILE');
  });
});

describe.concurrent('whole paths', { timeout: TEST_TIMEOUT_MS }, () => {
  it('with only KB_CONFIG_DIR set: login from stdin, then ns create, base create, base list, ns list', async ({ expect }) => {
    const env = isolatedEnv({ KB_DATA_DIR: undefined });
    expect(Object.keys(env).filter((name) => name.startsWith('KB_'))).toEqual(['KB_CONFIG_DIR']);
    const token = await one.newToken('org-path');

    expectOk(expect, await login(env, token, ['--url', one.url]));
    expectOk(expect, await kb(['ns', 'create', 'docs', '--description', 'Documentation'], { env }));
    expectOk(expect, await kb(['base', 'create', 'docs', 'faq', '-d', 'Questions'], { env }));
    const [bases, namespaces] = await Promise.all([
      kb(['base', 'list', 'docs', '--json'], { env }),
      kb(['ns', 'list', '--json'], { env }),
    ]);
    expect(jsonOut(expect, bases)).toEqual([{ namespace: 'docs', key: 'faq', description: 'Questions' }]);
    expect(jsonOut(expect, namespaces)).toEqual([{ key: 'docs', description: 'Documentation' }]);
    expect(await apiData(expect, one.url, token, 'GET', '/ns_list')).toEqual([{ key: 'docs', description: 'Documentation' }]);
  });

  it('six concurrent logins to six profiles keep every profile', async ({ expect }) => {
    const env = isolatedEnv();
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const tokens = await Promise.all(names.map((name) => one.newToken(`org-${name}`)));
    const results = await Promise.all(names.map((name, i) => login(env, tokens[i] as string, ['--url', one.url, '--profile', name], runKb)));
    for (const result of results) expectOk(expect, result);

    const config = readConfig(env);
    expect(Object.keys(config.profiles).sort()).toEqual(names);
    names.forEach((name, i) => expect(config.profiles[name]).toMatchObject({ url: one.url, token: tokens[i] }));
    expect(names).toContain(config.defaultProfile);
    expect(statSync(configPath(env)).mode & 0o777).toBe(0o600);
  });
});
