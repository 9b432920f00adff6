import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/client/errors.js';
import { ConfigError, ConfigWriteError, LockTimeoutError, ProfileStore, saveServeProfile } from '../../src/config/index.js';
import { rejection } from '../helpers/rejection.js';
import { IS_ROOT, mountTmpfs, removeTempDirs, remountReadOnly, runConfigOp, tempDirFor, UNPRIVILEGED, unmountTmpfs } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAVER = fileURLToPath(new URL('./fixtures/save-profile.ts', import.meta.url));

let dir: string;
let file: string;
const savedConfigDir = process.env.KB_CONFIG_DIR;

afterAll(removeTempDirs);

beforeEach(() => {
  dir = join(tempDirFor('kb-config-'), 'kb');
  file = join(dir, 'config.json');
  process.env.KB_CONFIG_DIR = dir;
});

afterEach(() => {
  if (savedConfigDir === undefined) delete process.env.KB_CONFIG_DIR;
  else process.env.KB_CONFIG_DIR = savedConfigDir;
});

const raw = () => readFileSync(file, 'utf8');
const onDisk = () => JSON.parse(raw()) as { defaultProfile?: string; profiles: Record<string, { url: string; token?: string }> };

function writeRaw(text: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, text, { mode: 0o600 });
}

describe('ProfileStore: saving profiles', () => {
  it('lives in KB_CONFIG_DIR, read when the store is made', () => {
    expect(new ProfileStore().path).toBe(file);
  });

  it('reads an empty config when there is no file, and creates nothing', async () => {
    const config = await new ProfileStore().read();
    expect(config.defaultProfile).toBeUndefined();
    expect(config.profiles.size).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });

  it('makes the first profile saved the default', async () => {
    const store = new ProfileStore();
    expect(await store.saveProfile('work', { url: 'https://kb.example.com', token: 'kbt_work' })).toEqual({ isDefault: true, replaced: false });
    expect(onDisk()).toEqual({ defaultProfile: 'work', profiles: { work: { url: 'https://kb.example.com', token: 'kbt_work' } } });
    const config = await store.read();
    expect(config.defaultProfile).toBe('work');
    expect(config.profiles.get('work')).toEqual({ url: 'https://kb.example.com', token: 'kbt_work' });
  });

  it('does not change the default when another profile is saved', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://kb.example.com', token: 'a' });
    expect(await store.saveProfile('home', { url: 'http://127.0.0.1:8080', token: 'b' })).toEqual({ isDefault: false, replaced: false });
    expect(onDisk().defaultProfile).toBe('work');
    expect([...(await store.read()).profiles.keys()].sort()).toEqual(['home', 'work']);
  });

  it('replaces a profile saved again, URL and token together, and keeps the default', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://old.example.com', token: 'old' });
    await store.saveProfile('home', { url: 'http://127.0.0.1:8080', token: 'b' });
    expect(await store.saveProfile('home', { url: 'http://127.0.0.1:9090' })).toEqual({ isDefault: false, replaced: true });
    expect(onDisk()).toEqual({
      defaultProfile: 'work',
      profiles: { work: { url: 'https://old.example.com', token: 'old' }, home: { url: 'http://127.0.0.1:9090' } },
    });
  });

  it('setDefault makes another existing profile the default', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://kb.example.com', token: 'a' });
    await store.saveProfile('home', { url: 'http://127.0.0.1:8080', token: 'b' });
    await store.setDefault('home');
    expect(onDisk().defaultProfile).toBe('home');
  });

  it('setDefault of a profile that does not exist is profile_not_found (exit 2), naming the profiles, and changes nothing', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://kb.example.com', token: 'a' });
    const before = raw();
    const error = await rejection(store.setDefault('nope'));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'profile_not_found', exitCode: 2 });
    expect((error as Error).message).toBe('no profile named "nope"; profiles: work');
    expect(exitCodeFor(error)).toBe(2);
    expect(raw()).toBe(before);
  });

  it('logout removes the token from the file and keeps the URL', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://kb.example.com', token: 'kbt_secret_work' });
    expect(await store.logout('work')).toEqual({ hadToken: true });
    expect(raw()).not.toContain('kbt_secret_work');
    expect(onDisk().profiles.work).toEqual({ url: 'https://kb.example.com' });
    expect(await store.logout('work')).toEqual({ hadToken: false });
  });

  it('logout of the default profile keeps it the default: no other profile takes its place', async () => {
    const store = new ProfileStore();
    await store.saveProfile('work', { url: 'https://kb.example.com', token: 'a' });
    await store.saveProfile('home', { url: 'http://127.0.0.1:8080', token: 'b' });
    await store.logout('work');
    expect(onDisk()).toEqual({
      defaultProfile: 'work',
      profiles: { work: { url: 'https://kb.example.com' }, home: { url: 'http://127.0.0.1:8080', token: 'b' } },
    });
  });

  it('logout of a profile that does not exist is profile_not_found', async () => {
    expect(await rejection(new ProfileStore().logout('ghost'))).toMatchObject({ code: 'profile_not_found', message: 'no profile named "ghost"; there are no profiles yet' });
  });

  it('treats names as data: constructor, toString and hasOwnProperty are ordinary profiles', async () => {
    const store = new ProfileStore();
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) await store.saveProfile(name, { url: `http://${name.toLowerCase()}.example`, token: name });
    await store.setDefault('toString');
    await store.logout('constructor');
    const config = await store.read();
    expect(config.defaultProfile).toBe('toString');
    expect(config.profiles.get('constructor')).toEqual({ url: 'http://constructor.example' });
    expect(config.profiles.get('hasOwnProperty')).toEqual({ url: 'http://hasownproperty.example', token: 'hasOwnProperty' });
    expect(config.profiles.has('valueOf')).toBe(false);
    expect(await rejection(store.setDefault('valueOf'))).toMatchObject({ code: 'profile_not_found' });
  });

  it.each(['', '-work', '_work', 'a b', 'a.b', '__proto__', 'x'.repeat(64), 'wörk'])('rejects the profile name %j with invalid_profile (exit 2), writing nothing', async (name) => {
    const error = await rejection(new ProfileStore().saveProfile(name, { url: 'http://h' }));
    expect(error).toMatchObject({ name: 'ConfigError', code: 'invalid_profile', exitCode: 2 });
    expect(existsSync(file)).toBe(false);
  });

  it('accepts a name of 63 characters', async () => {
    await new ProfileStore().saveProfile(`a${'-'.repeat(62)}`, { url: 'http://h' });
    expect(Object.keys(onDisk().profiles)).toEqual([`a${'-'.repeat(62)}`]);
  });

  it.each(['ftp://h', 'h:8080', 'not a url', ''])('rejects the URL %j with invalid_profile', async (url) => {
    expect(await rejection(new ProfileStore().saveProfile('work', { url }))).toMatchObject({ code: 'invalid_profile' });
  });

  it('keeps fields a newer kb wrote when it saves', async () => {
    writeRaw(JSON.stringify({ version: 2, profiles: { work: { url: 'http://w', token: 't', org: 'acme' } } }));
    await new ProfileStore().saveProfile('home', { url: 'http://h' });
    expect(onDisk()).toEqual({
      version: 2, defaultProfile: 'home', profiles: { work: { url: 'http://w', token: 't', org: 'acme' }, home: { url: 'http://h' } },
    });
  });
});

describe('ProfileStore: a broken config file', () => {
  const broken: Array<[string, string, RegExp]> = [
    ['not JSON', '{"profiles": {', /is not valid JSON: /],
    ['empty', '', /is not valid JSON: it is empty/],
    ['an array', '[]', /is not a valid kb config: /],
    ['without profiles', '{"defaultProfile":"work"}', /is not a valid kb config: profiles: is required/],
    ['with a URL that is not http', '{"profiles":{"work":{"url":"ftp://x"}}}', /profiles\.work\.url: must be an http:\/\/ or https:\/\/ URL/],
    ['with a token that is not a string', '{"profiles":{"work":{"url":"http://x","token":42}}}', /profiles\.work\.token: /],
    ['with a bad profile name', '{"profiles":{"a b":{"url":"http://x"}}}', /a profile name is 1 to 63 characters/],
    ['with a default that is not a string', '{"defaultProfile":5,"profiles":{}}', /defaultProfile: /],
  ];

  it.each(broken)('reports a file %s as config_invalid (exit 1), naming the file and the problem', async (_what, text, problem) => {
    writeRaw(text);
    const error = await rejection(new ProfileStore().read());
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'config_invalid', exitCode: 1 });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(problem);
    expect((error as ConfigError).help).toMatch(/Fix the file or remove it/);
    expect(exitCodeFor(error)).toBe(1);
  });

  it.each(broken)('refuses every change while the file is %s, and leaves its bytes as they were', async (_what, text) => {
    writeRaw(text);
    const store = new ProfileStore();
    for (const change of [
      () => store.saveProfile('home', { url: 'http://h', token: 't' }),
      () => store.setDefault('work'),
      () => store.logout('work'),
      () => saveServeProfile({ url: 'http://127.0.0.1:8080', token: 't', port: 8080, ownsToken: () => Promise.resolve(false), store }),
    ]) {
      expect(await rejection(change())).toMatchObject({ code: 'config_invalid' });
    }
    expect(raw()).toBe(text);
    expect(existsSync(join(dir, 'config.lock'))).toBe(false);
  });

  it(`reports a file it cannot read as config_unreadable, naming the file (run as ${IS_ROOT ? 'nobody: root reads any file' : 'this user'})`, async () => {
    const own = tempDirFor('kb-config-', UNPRIVILEGED);
    const path = join(own, 'config.json');
    writeFileSync(path, '{"profiles":{}}', { mode: 0o600 });
    chmodSync(path, 0o000);
    if (IS_ROOT) chownSync(path, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
    const result = await runConfigOp(['read'], own);
    expect(result.error).toEqual({
      name: 'ConfigError', code: 'config_unreadable', exitCode: 1, message: `cannot read the config file ${path}: permission denied (EACCES)`,
    });
  });
});

/** Every change a command can make, so that a test can show that none of them gets through. */
function everyChange(store: ProfileStore): Array<[string, () => Promise<unknown>]> {
  return [
    ['saveProfile', () => store.saveProfile('home', { url: 'http://h.example', token: 'kbt_home' })],
    ['setDefault', () => store.setDefault('work')],
    ['logout', () => store.logout('work')],
    ['saveServeProfile', () => saveServeProfile({ url: 'http://127.0.0.1:8080', token: 'kbt_local', port: 8080, ownsToken: () => Promise.resolve(false), store })],
  ];
}

/** Fills the filesystem of `dir` with a file, then frees `pagesLeft` pages of it (tmpfs allocates by page). */
function fillDisk(dir: string, pagesLeft: number): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const page = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, page);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  if (pagesLeft > 0) truncateSync(filler, statSync(filler).size - pagesLeft * 4096);
  return filler;
}

describe('ProfileStore: a config that cannot be written fails with one line naming the path, and changes nothing', () => {
  const saved = `${JSON.stringify({ defaultProfile: 'work', profiles: { work: { url: 'http://w.example', token: 'kbt_work' } } }, null, 2)}\n`;

  function expectOneLine(error: unknown, path: string, message: string): void {
    expect(error).toBeInstanceOf(ConfigWriteError);
    expect(error).toMatchObject({ name: 'ConfigWriteError', code: 'config_unwritable', exitCode: 1, path, message });
    expect(message).not.toContain('\n');
    expect(exitCodeFor(error)).toBe(1);
  }

  it('refuses to replace a read-only config file (mode 0400), for every change, and leaves it as it was', async () => {
    writeRaw(saved);
    chmodSync(file, 0o400);
    const store = new ProfileStore();
    for (const [change, run] of everyChange(store)) {
      const error = await rejection(run());
      expectOneLine(error, file, `cannot save the config: ${file} is read-only (mode 0400), and kb does not replace it`);
      expect((error as ConfigWriteError).help, change).toBe(`To let kb save, make it writable: \`chmod 600 ${file}\`.`);
    }
    expect(raw()).toBe(saved);
    expect(statSync(file).mode & 0o777).toBe(0o400);
    expect(readdirSync(dir)).toEqual(['config.json']);
    expect((await store.read()).defaultProfile).toBe('work');
  });

  it(`names the config directory it may not write (EACCES) (run as ${IS_ROOT ? 'nobody: root writes anywhere' : 'this user'})`, async () => {
    const own = join(tempDirFor('kb-config-', UNPRIVILEGED), 'kb');
    mkdirSync(own, { mode: 0o700 });
    writeFileSync(join(own, 'config.json'), saved, { mode: 0o600 });
    if (IS_ROOT) {
      chownSync(own, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
      chownSync(join(own, 'config.json'), UNPRIVILEGED.uid, UNPRIVILEGED.gid);
    }
    chmodSync(own, 0o500);
    const result = await runConfigOp(['save', 'home', 'http://h.example', 'kbt_home'], own);
    expect(result.error).toMatchObject({
      name: 'ConfigWriteError', code: 'config_unwritable', exitCode: 1, message: `cannot save the config in ${own}: permission denied (EACCES)`,
    });
    expect(readFileSync(join(own, 'config.json'), 'utf8')).toBe(saved);
    expect(readdirSync(own)).toEqual(['config.json']);
  });

  it(`names the config directory it may not create (EACCES) (run as ${IS_ROOT ? 'nobody: root writes anywhere' : 'this user'})`, async () => {
    const parent = tempDirFor('kb-config-', UNPRIVILEGED);
    chmodSync(parent, 0o500);
    const own = join(parent, 'kb');
    const result = await runConfigOp(['save', 'home', 'http://h.example', 'kbt_home'], own);
    expect(result.error).toMatchObject({ name: 'ConfigWriteError', message: `cannot save the config in ${own}: permission denied (EACCES)` });
    expect(readdirSync(parent)).toEqual([]);
  });

  it('names the config directory when a part of its path is a file (ENOTDIR), for reads too', async () => {
    const blocker = join(tempDirFor('kb-config-'), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const store = new ProfileStore({ dir: join(blocker, 'kb') });
    for (const [, run] of everyChange(store)) {
      expectOneLine(await rejection(run()), join(blocker, 'kb'), `cannot save the config in ${join(blocker, 'kb')}: a part of the path is not a directory (ENOTDIR)`);
    }
    expect(await rejection(store.read())).toMatchObject({
      name: 'ConfigError', code: 'config_unreadable', message: `cannot read the config file ${join(blocker, 'kb', 'config.json')}: a part of the path is not a directory (ENOTDIR)`,
    });
    expect(readFileSync(blocker, 'utf8')).toBe('not a directory');
  });

  it('names the config directory when it is a file (EEXIST), and leaves the file alone', async () => {
    const blocker = join(tempDirFor('kb-config-'), 'kb');
    writeFileSync(blocker, 'not a directory');
    const store = new ProfileStore({ dir: blocker });
    expectOneLine(await rejection(store.saveProfile('work', { url: 'http://w.example' })), blocker, `cannot save the config in ${blocker}: it exists and is not a directory (EEXIST)`);
    expect(readFileSync(blocker, 'utf8')).toBe('not a directory');
  });

  describe.skipIf(!IS_ROOT)('on a filesystem of its own (needs root: the tests mount a tmpfs)', () => {
    let mount: string;
    beforeEach(() => {
      mount = mountTmpfs(64 * 1024);
      dir = join(mount, 'kb');
      file = join(dir, 'config.json');
      process.env.KB_CONFIG_DIR = dir;
    });
    afterEach(() => {
      unmountTmpfs(mount);
    });

    it('names the config directory on a read-only filesystem (EROFS), and changes nothing', async () => {
      const store = new ProfileStore();
      await store.saveProfile('work', { url: 'http://w.example', token: 'kbt_work' });
      const before = raw();
      remountReadOnly(mount);
      for (const [, run] of everyChange(store)) {
        expectOneLine(await rejection(run()), dir, `cannot save the config in ${dir}: the filesystem is read-only (EROFS)`);
      }
      expect(raw()).toBe(before);
      expect((await store.read()).defaultProfile).toBe('work');
    });

    it('names the config file when the disk fills during the write (ENOSPC): the old file stays whole, no temporary file is left, and a save works once there is space', async () => {
      const store = new ProfileStore();
      await store.saveProfile('work', { url: 'http://w.example', token: 'kbt_work' });
      const before = raw();
      // One free page: enough for the lock file, none for the new config beside the old one.
      const filler = fillDisk(mount, 1);
      for (const [, run] of everyChange(store)) {
        const error = await rejection(run());
        expectOneLine(error, file, `cannot save the config file ${file}: no space left on the device (ENOSPC)`);
        expect((error as ConfigWriteError).help).toBe('Free some space and try again; the file was left as it was.');
        expect(raw()).toBe(before);
        expect(readdirSync(dir)).toEqual(['config.json']);
      }
      // A config larger than the old one: written in place, it would be cut short where the disk ran out.
      const long = { url: `http://h.example/${'p'.repeat(9000)}`, token: 'kbt_long' };
      expectOneLine(await rejection(store.saveProfile('long', long)), file, `cannot save the config file ${file}: no space left on the device (ENOSPC)`);
      expect(raw()).toBe(before);
      rmSync(filler);
      await store.saveProfile('home', { url: 'http://h.example', token: 'kbt_home' });
      expect(Object.keys(onDisk().profiles)).toEqual(['work', 'home']);
    });

    it('names the lock file when the disk is too full to take the lock, and leaves nothing behind', async () => {
      const store = new ProfileStore();
      await store.saveProfile('work', { url: 'http://w.example', token: 'kbt_work' });
      const before = raw();
      fillDisk(mount, 0);
      const lock = join(dir, 'config.lock');
      expectOneLine(
        await rejection(store.saveProfile('home', { url: 'http://h.example' })),
        lock,
        `cannot save the config: cannot create the lock file ${lock}: no space left on the device (ENOSPC)`,
      );
      expect(raw()).toBe(before);
      expect(readdirSync(dir)).toEqual(['config.json']);
    });
  });
});

describe('ProfileStore: temporary files', () => {
  it('removes the temporary files that saves killed while writing left beside the config, which hold tokens', async () => {
    writeRaw('{"profiles":{}}');
    const leftovers = ['config.json.tmp-1732300000a1b2c3', 'config.json.tmp-1732300001d4e5f6'];
    for (const name of leftovers) writeFileSync(join(dir, name), '{"profiles":{"work":{"url":"http://w","token":"kbt_half', { mode: 0o600 });
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    await new ProfileStore().saveProfile('home', { url: 'http://h.example' });
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'notes.txt']);
  });
});

describe('ProfileStore: file and directory modes', () => {
  let savedUmask: number;
  beforeEach(() => {
    savedUmask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(savedUmask);
  });

  it('creates the config directory 0700 and the file 0600 under umask 022', async () => {
    await new ProfileStore().saveProfile('work', { url: 'http://h', token: 't' });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rewrites a file found 0644 as 0600', async () => {
    writeRaw('{"profiles":{}}');
    chmodSync(file, 0o644);
    await new ProfileStore().saveProfile('work', { url: 'http://h', token: 't' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('ProfileStore: concurrent savers', () => {
  it('loses no profile when 20 saves in one process run at once', async () => {
    const names = Array.from({ length: 20 }, (_, index) => `p${index}`);
    await Promise.all(names.map((name) => new ProfileStore().saveProfile(name, { url: `http://${name}.example` })));
    expect(Object.keys(onDisk().profiles).sort()).toEqual([...names].sort());
    expect(existsSync(join(dir, 'config.lock'))).toBe(false);
  });

  it('gives up with LockTimeoutError, writing nothing, while another process holds the lock', async () => {
    await new ProfileStore().saveProfile('work', { url: 'http://w' });
    const before = raw();
    writeFileSync(join(dir, 'config.lock'), JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'other' }));
    const error = await rejection(new ProfileStore({ lockTimeoutMs: 200 }).saveProfile('home', { url: 'http://h' }));
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(exitCodeFor(error)).toBe(1);
    expect(raw()).toBe(before);
  });

  it('loses no profile when 8 processes save a different profile at the same moment', async () => {
    const go = join(tempDirFor('kb-go-'), 'go');
    const names = Array.from({ length: 8 }, (_, index) => `proc-${index}`);
    const children = names.map((name) => {
      const child = spawn(process.execPath, ['--import', 'tsx', SAVER, name, `http://${name}.example`, go], {
        cwd: ROOT,
        env: { ...process.env, KB_CONFIG_DIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.on('close', (code) => resolve({ code, stdout, stderr })),
      );
      return { ready: () => stdout.startsWith('ready\n'), exited };
    });
    await expect.poll(() => children.every((child) => child.ready()), { timeout: 25_000, interval: 20 }).toBe(true);
    writeFileSync(go, '');
    const results = await Promise.all(children.map((child) => child.exited));
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });

    const config = onDisk();
    expect(Object.keys(config.profiles).sort()).toEqual(names);
    for (const name of names) expect(config.profiles[name]).toEqual({ url: `http://${name}.example`, token: `token-${name}` });
    // Exactly one saver found no default and became it.
    const defaults = results.filter((result) => result.stdout.includes('"isDefault":true'));
    expect(defaults).toHaveLength(1);
    expect(names).toContain(config.defaultProfile);
    expect(existsSync(join(dir, 'config.lock'))).toBe(false);
    rmSync(go, { force: true });
  }, 60_000);
});
