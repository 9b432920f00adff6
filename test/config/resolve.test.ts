import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/client/errors.js';
import { ConfigError, ProfileStore, resolveDeployment, type Deployment } from '../../src/config/index.js';
import { tempDir } from '../helpers/server.js';

let dir: string;
let store: ProfileStore;
beforeEach(() => {
  dir = tempDir('kb-config-');
  store = new ProfileStore({ dir });
});

/** resolveDeployment with KB_CONFIG_DIR at the test's dir and nothing else from the developer's environment. */
function resolve(env: Record<string, string> = {}, profileFlag?: string): Promise<Deployment> {
  return resolveDeployment({ profileFlag, env: { KB_CONFIG_DIR: dir, ...env } });
}

async function failure(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

async function twoProfiles(): Promise<void> {
  await store.saveProfile('work', { url: 'https://work.example', token: 'tok-work' });
  await store.saveProfile('home', { url: 'http://127.0.0.1:8080', token: 'tok-home' });
}

describe('resolveDeployment: which deployment a command talks to (docs/contract.md, Deployments and profiles)', () => {
  const work = { profile: 'work', url: 'https://work.example', token: 'tok-work', urlSource: 'profile', tokenSource: 'profile' };
  const home = { profile: 'home', url: 'http://127.0.0.1:8080', token: 'tok-home', urlSource: 'profile', tokenSource: 'profile' };
  const table: Array<[string, Record<string, string>, string | undefined, Deployment]> = [
    ['the default profile when nothing else is said', {}, undefined, work as Deployment],
    ['KB_PROFILE over the default', { KB_PROFILE: 'home' }, undefined, home as Deployment],
    ['--profile over the default', {}, 'home', home as Deployment],
    ['--profile over KB_PROFILE', { KB_PROFILE: 'work' }, 'home', home as Deployment],
    ['an empty KB_PROFILE as unset', { KB_PROFILE: '' }, undefined, work as Deployment],
    ['KB_URL over the profile\'s URL, keeping its token', { KB_URL: 'http://env.example' }, undefined,
      { ...work, url: 'http://env.example', urlSource: 'env' } as Deployment],
    ['KB_TOKEN over the profile\'s token, keeping its URL', { KB_TOKEN: 'tok-env' }, undefined,
      { ...work, token: 'tok-env', tokenSource: 'env' } as Deployment],
    ['KB_URL and KB_TOKEN over the profile named by --profile', { KB_URL: 'http://env.example', KB_TOKEN: 'tok-env' }, 'home',
      { profile: 'home', url: 'http://env.example', token: 'tok-env', urlSource: 'env', tokenSource: 'env' }],
    ['an empty KB_URL and KB_TOKEN as unset', { KB_URL: '', KB_TOKEN: '' }, undefined, work as Deployment],
  ];

  it.each(table)('takes %s', async (_what, env, flag, expected) => {
    await twoProfiles();
    expect(await resolve(env, flag)).toEqual(expected);
  });

  it('reports a profile without a token as tokenSource none: a missing token is the caller\'s business', async () => {
    await twoProfiles();
    await store.logout('work');
    expect(await resolve()).toEqual({ profile: 'work', url: 'https://work.example', token: undefined, urlSource: 'profile', tokenSource: 'none' });
  });

  it('keeps using the logged-out default profile rather than another one', async () => {
    await twoProfiles();
    await store.logout('work');
    expect((await resolve()).profile).toBe('work');
  });

  it('needs no config file at all when KB_URL is set', async () => {
    expect(await resolve({ KB_URL: 'http://127.0.0.1:8080' })).toEqual({
      profile: undefined, url: 'http://127.0.0.1:8080', token: undefined, urlSource: 'env', tokenSource: 'none',
    });
    expect(await resolve({ KB_URL: 'http://127.0.0.1:8080', KB_TOKEN: 't' })).toMatchObject({ token: 't', tokenSource: 'env' });
  });

  it('treats profile names as data: constructor is a profile, toString is not one', async () => {
    await store.saveProfile('constructor', { url: 'http://c.example', token: 'c' });
    expect(await resolve({}, 'constructor')).toMatchObject({ profile: 'constructor', url: 'http://c.example', token: 'c' });
    expect((await failure(resolve({}, 'toString'))).code).toBe('profile_not_found');
    expect((await failure(resolve({ KB_PROFILE: '__proto__' }))).code).toBe('profile_not_found');
  });

  it('reads KB_CONFIG_DIR from the environment it is given', async () => {
    await twoProfiles();
    expect((await resolveDeployment({ env: { KB_CONFIG_DIR: dir } })).profile).toBe('work');
  });
});

describe('resolveDeployment: failures', () => {
  it('without any deployment is no_deployment (exit 4), saying to log in or start kb serve', async () => {
    const error = await failure(resolve());
    expect(error).toMatchObject({ code: 'no_deployment', exitCode: 4, message: 'no kb deployment is configured' });
    expect(error.help).toMatch(/kb auth login/);
    expect(error.help).toMatch(/kb serve/);
    expect(exitCodeFor(error)).toBe(4);
  });

  it('with --profile naming no profile is profile_not_found (exit 2), naming the profiles that exist', async () => {
    await twoProfiles();
    const error = await failure(resolve({}, 'nope'));
    expect(error).toMatchObject({ code: 'profile_not_found', exitCode: 2 });
    expect(error.message).toBe('no profile named "nope" (given by --profile); profiles: home, work');
    expect(exitCodeFor(error)).toBe(2);
  });

  it('with KB_PROFILE naming no profile says so, even when KB_URL is set', async () => {
    await twoProfiles();
    const error = await failure(resolve({ KB_PROFILE: 'nope', KB_URL: 'http://env.example' }));
    expect(error.message).toBe('no profile named "nope" (given by KB_PROFILE); profiles: home, work');
  });

  it('with a default that names no profile (a file edited by hand) says so', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ defaultProfile: 'gone', profiles: { work: { url: 'http://w' } } }), { mode: 0o600 });
    const error = await failure(resolve());
    expect(error.code).toBe('profile_not_found');
    expect(error.message).toBe(`no profile named "gone" (the default profile in ${join(dir, 'config.json')}); profiles: work`);
  });

  it('with a KB_URL that is not http or https is invalid_url (exit 2)', async () => {
    const error = await failure(resolve({ KB_URL: 'localhost:8080' }));
    expect(error).toMatchObject({ code: 'invalid_url', exitCode: 2, message: 'KB_URL is not an http:// or https:// URL: "localhost:8080"' });
  });

  it('with a broken config file is config_invalid, even when KB_URL and KB_TOKEN are set', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{oops', { mode: 0o600 });
    expect(await failure(resolve({ KB_URL: 'http://env.example', KB_TOKEN: 't' }))).toMatchObject({ code: 'config_invalid', exitCode: 1 });
  });
});
