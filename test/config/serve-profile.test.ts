import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/client/errors.js';
import { ConfigError, ProfileStore, saveServeProfile, ServeProfileTakenError, type ServeProfileOptions } from '../../src/config/index.js';
import { generateToken, hashToken } from '../../src/server/tokens.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { followServeProfile, isLocalServerUrl } from '../../src/config/serve-profile.js';
import { rejection } from '../helpers/rejection.js';
import { removeTempDirs, tempDirFor } from './helpers.js';

/** A local server's side of the first start: its own store, one token, and the check that a token is its own. */
interface Instance {
  store: Store;
  token: string;
  ownsToken: (token: string) => Promise<boolean>;
}

async function instance(): Promise<Instance> {
  const store = await openStore({ engine: 'sqlite', dataDir: tempDirFor('kb-serve-data-') });
  const { id, token, hash } = generateToken();
  await store.createToken('local', id, hash);
  return { store, token, ownsToken: async (candidate) => (await store.authenticate(hashToken(candidate))) !== null };
}

let dir: string;
let profiles: ProfileStore;
let instances: Instance[];

beforeEach(() => {
  dir = join(tempDirFor('kb-config-'), 'kb');
  profiles = new ProfileStore({ dir });
  instances = [];
});

afterEach(async () => {
  await Promise.all(instances.map((started) => started.store.close()));
});

afterAll(removeTempDirs);

async function start(): Promise<Instance> {
  const started = await instance();
  instances.push(started);
  return started;
}

function firstStart(server: Instance, port: number, name?: string): Promise<{ name: string; isDefault: boolean }> {
  const options: ServeProfileOptions = { url: `http://127.0.0.1:${port}`, token: server.token, port, ownsToken: server.ownsToken, store: profiles };
  return saveServeProfile(name === undefined ? options : { ...options, name });
}

const raw = () => readFileSync(join(dir, 'config.json'), 'utf8');
const onDisk = () => JSON.parse(raw()) as { defaultProfile?: string; profiles: Record<string, { url: string; token?: string }> };

describe('saveServeProfile: the profile kb serve saves on its first start (docs/contract.md, First start)', () => {
  it('saves profile local, URL and token, as the default when there is none', async () => {
    const server = await start();
    expect(await firstStart(server, 8080)).toEqual({ name: 'local', isDefault: true });
    expect(onDisk()).toEqual({ defaultProfile: 'local', profiles: { local: { url: 'http://127.0.0.1:8080', token: server.token } } });
  });

  it('with TLS, saves the certificate as the profile\'s CA; a new token for the same URL keeps it, another URL does not', async () => {
    const server = await start();
    const url = 'https://127.0.0.1:8443';
    const options: ServeProfileOptions = { url, token: server.token, port: 8443, ownsToken: server.ownsToken, store: profiles };
    expect(await saveServeProfile({ ...options, ca: '/etc/kb/cert.pem' })).toEqual({ name: 'local', isDefault: true });
    expect(onDisk().profiles.local).toEqual({ url, token: server.token, ca: '/etc/kb/cert.pem' });
    await saveServeProfile({ ...options, name: 'local' });
    expect(onDisk().profiles.local).toEqual({ url, token: server.token, ca: '/etc/kb/cert.pem' });
    await saveServeProfile({ ...options, url: 'http://127.0.0.1:8080', port: 8080, name: 'local' });
    expect(onDisk().profiles.local).toEqual({ url: 'http://127.0.0.1:8080', token: server.token });
  });

  it('saves profile local and leaves an existing default alone', async () => {
    await profiles.saveProfile('work', { url: 'https://kb.example.com', token: 'kbt_work' });
    const server = await start();
    expect(await firstStart(server, 8080)).toEqual({ name: 'local', isDefault: false });
    expect(onDisk().defaultProfile).toBe('work');
    expect(onDisk().profiles.local).toEqual({ url: 'http://127.0.0.1:8080', token: server.token });
  });

  it('saves a second server (another data dir) as local-<port>, leaving the first one\'s profile local as it was', async () => {
    const first = await start();
    await firstStart(first, 8080);
    const second = await start();
    expect(await firstStart(second, 9090)).toEqual({ name: 'local-9090', isDefault: false });
    expect(onDisk()).toEqual({
      defaultProfile: 'local',
      profiles: {
        local: { url: 'http://127.0.0.1:8080', token: first.token },
        'local-9090': { url: 'http://127.0.0.1:9090', token: second.token },
      },
    });
  });

  it('takes local back when it holds a token of this very server, with the new URL', async () => {
    const server = await start();
    await firstStart(server, 8080);
    expect(await firstStart(server, 8181)).toEqual({ name: 'local', isDefault: true });
    expect(onDisk().profiles).toEqual({ local: { url: 'http://127.0.0.1:8181', token: server.token } });
  });

  it('takes local-<port> back when it holds a token of this very server, while local holds another\'s', async () => {
    const [first, second] = [await start(), await start()];
    await firstStart(first, 8080);
    await firstStart(second, 9090);
    expect(await firstStart(second, 9090)).toEqual({ name: 'local-9090', isDefault: false });
    expect(onDisk().profiles.local?.token).toBe(first.token);
  });

  it('does not take a local without a token (logged out: it may point anywhere)', async () => {
    await profiles.saveProfile('local', { url: 'http://127.0.0.1:8080' });
    const server = await start();
    expect(await firstStart(server, 8080)).toEqual({ name: 'local-8080', isDefault: false });
    expect(onDisk().profiles.local).toEqual({ url: 'http://127.0.0.1:8080' });
  });

  it('takes a profile without a token (logged out) that --profile names, and gives it this server\'s URL and token', async () => {
    await profiles.saveProfile('dev', { url: 'https://kb.example.com' });
    const server = await start();
    expect(await firstStart(server, 8080, 'dev')).toEqual({ name: 'dev', isDefault: true });
    expect(onDisk().profiles).toEqual({ dev: { url: 'http://127.0.0.1:8080', token: server.token } });
  });

  it('makes local-<port> the default when there is no default at all', async () => {
    const other = await start();
    await firstStart(other, 8080);
    // A file edited by hand: a profile local, and no default.
    const { defaultProfile: _dropped, ...rest } = onDisk();
    await profiles.update((draft) => {
      draft.defaultProfile = undefined;
    });
    expect(onDisk()).toEqual(rest);
    expect(await firstStart(await start(), 9090)).toEqual({ name: 'local-9090', isDefault: true });
  });

  it('throws ServeProfileTakenError (exit 5) naming local and local-<port>, and writes nothing, when both hold other servers\' tokens', async () => {
    await firstStart(await start(), 8080);
    await firstStart(await start(), 9090);
    const before = raw();
    const error = await rejection(firstStart(await start(), 9090));
    expect(error).toBeInstanceOf(ServeProfileTakenError);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      name: 'ServeProfileTakenError',
      code: 'profile_taken',
      exitCode: 5,
      taken: ['local', 'local-9090'],
      message: 'profiles "local" and "local-9090" are already in use for another server: kb serve does not overwrite them',
      help: 'Save this server under another name with `kb serve --profile NAME`.',
    });
    expect(exitCodeFor(error)).toBe(5);
    expect(raw()).toBe(before);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('with --profile NAME saves only under that name, not under local', async () => {
    const server = await start();
    expect(await firstStart(server, 8080, 'dev')).toEqual({ name: 'dev', isDefault: true });
    expect(Object.keys(onDisk().profiles)).toEqual(['dev']);
  });

  it('with --profile NAME held by another server throws, naming only NAME, and does not fall back to local', async () => {
    await firstStart(await start(), 8080, 'dev');
    const before = raw();
    const error = await rejection(firstStart(await start(), 9090, 'dev'));
    expect(error).toMatchObject({ name: 'ServeProfileTakenError', taken: ['dev'], message: 'profile "dev" is already in use for another server: kb serve does not overwrite it' });
    expect(raw()).toBe(before);
  });

  it('rejects an invalid --profile name as invalid_profile (exit 2) before asking about any token or writing anything', async () => {
    let asked = 0;
    const server = await start();
    const error = await rejection(
      saveServeProfile({ url: 'http://127.0.0.1:8080', token: server.token, port: 8080, name: 'no spaces', store: profiles, ownsToken: async () => (asked++, true) }),
    );
    expect(error).toMatchObject({ name: 'ConfigError', code: 'invalid_profile', exitCode: 2 });
    expect(asked).toBe(0);
    expect(readdirSync(join(dir, '..'))).toEqual([]);
  });

  it('passes on a failure of ownsToken, writes nothing and releases the lock', async () => {
    await firstStart(await start(), 8080);
    const before = raw();
    const failing = saveServeProfile({
      url: 'http://127.0.0.1:9090', token: 'kbt_x', port: 9090, store: profiles, ownsToken: () => Promise.reject(new Error('database is closed')),
    });
    await expect(failing).rejects.toThrow('database is closed');
    expect(raw()).toBe(before);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('gives local to exactly one of two servers starting at the same moment, and local-<port> to the other', async () => {
    const [first, second] = [await start(), await start()];
    const results = await Promise.all([firstStart(first, 8080), firstStart(second, 9090)]);
    const names = results.map((result) => result.name).sort();
    expect(names[0]).toBe('local');
    expect(['local-8080', 'local-9090']).toContain(names[1]);
    const config = onDisk();
    expect(Object.keys(config.profiles).sort()).toEqual(names);
    expect(config.defaultProfile).toBe('local');
    expect(new Set(Object.values(config.profiles).map((profile) => profile.token))).toEqual(new Set([first.token, second.token]));
  });
});

describe('followServeProfile: a profile follows its local server to another port', () => {
  it('changes the URL alone, keeping the token and the default', async () => {
    const server = await start();
    await firstStart(server, 8080);
    expect(await followServeProfile({ name: 'local', from: 'http://127.0.0.1:8080', token: server.token, to: 'http://127.0.0.1:9090', store: profiles })).toBe(true);
    expect(onDisk()).toEqual({ defaultProfile: 'local', profiles: { local: { url: 'http://127.0.0.1:9090', token: server.token } } });
  });

  it('leaves a profile that changed since it was read (another URL or token), and one that is gone', async () => {
    const server = await start();
    await firstStart(server, 8080);
    const before = raw();
    const to = 'http://127.0.0.1:9090';
    expect(await followServeProfile({ name: 'local', from: 'http://127.0.0.1:7070', token: server.token, to, store: profiles })).toBe(false);
    expect(await followServeProfile({ name: 'local', from: 'http://127.0.0.1:8080', token: 'kbt_other', to, store: profiles })).toBe(false);
    expect(await followServeProfile({ name: 'gone', from: 'http://127.0.0.1:8080', token: server.token, to, store: profiles })).toBe(false);
    expect(JSON.parse(raw())).toEqual(JSON.parse(before));
  });

  it('counts as local only http or https (a kb serve with --tls-cert) to a loopback address, without a path', () => {
    for (const url of ['http://127.0.0.1:8080', 'http://127.9.0.1:1/', 'http://localhost:8080', 'http://[::1]:8080', 'https://127.0.0.1:8443']) expect(isLocalServerUrl(url), url).toBe(true);
    for (const url of ['ftp://127.0.0.1:8080', 'https://10.0.0.2:8443', 'http://10.0.0.2:8080', 'http://kb.example.com', 'http://127.0.0.1:8080/kb', 'http://u:p@127.0.0.1:1', 'not a url']) {
      expect(isLocalServerUrl(url), url).toBe(false);
    }
  });
});
