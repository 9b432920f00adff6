import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/client/errors.js';
import { ConfigTrustError, ProfileStore, resolveDeployment } from '../../src/config/index.js';
import { rejection } from '../helpers/rejection.js';
import { IS_POSIX, IS_ROOT, NOBODY, removeTempDirs, runConfigOp, tempDirFor, UNPRIVILEGED } from './helpers.js';

afterAll(removeTempDirs);

let dir: string;
let file: string;
let warnings: string[];
let store: ProfileStore;
const CONFIG = `${JSON.stringify({ defaultProfile: 'work', profiles: { work: { url: 'http://w.example', token: 'kbt_work' } } }, null, 2)}\n`;

beforeEach(() => {
  dir = join(tempDirFor('kb-trust-'), 'kb');
  file = join(dir, 'config.json');
  warnings = [];
  store = new ProfileStore({ dir, onWarning: (message) => warnings.push(message) });
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(file, CONFIG, { mode: 0o600 });
});

/** Every way a changed config could be used or written: a read, a resolve, each kind of save. */
function everyUse(): Array<[string, () => Promise<unknown>]> {
  return [
    ['read', () => store.read()],
    ['resolveDeployment', () => resolveDeployment({ store, env: { KB_URL: 'http://env.example', KB_TOKEN: 't' } })],
    ['saveProfile', () => store.saveProfile('home', { url: 'http://h.example', token: 'kbt_home' })],
    ['setDefault', () => store.setDefault('work')],
    ['logout', () => store.logout('work')],
  ];
}

async function expectRefusedEverywhere(path: string, message: RegExp): Promise<void> {
  for (const [use, run] of everyUse()) {
    const error = await rejection(run());
    expect(error, use).toBeInstanceOf(ConfigTrustError);
    expect(error, use).toMatchObject({ name: 'ConfigTrustError', code: 'config_untrusted', exitCode: 4, path });
    expect((error as Error).message, use).toMatch(message);
    expect((error as Error).message, use).not.toContain('\n');
    expect((error as ConfigTrustError).help, use).toMatch(/could point a profile at their own server/);
    expect(exitCodeFor(error), use).toBe(4);
  }
  expect(readFileSync(file, 'utf8')).toBe(CONFIG);
  expect(readdirSync(dir)).toEqual(['config.json']);
}

describe.skipIf(!IS_POSIX)('config trust: what another user could change is not used (exit 4, ConfigTrustError) (POSIX only: Windows has no modes or uids to check)', () => {
  it.each([
    ['0770', 'group', '0770'],
    ['0707', 'others', '0707'],
    ['0777', 'group and others', '0777'],
    ['1777', 'group and others', '0777'],
  ])('refuses a config directory of mode %s (writable by %s), naming it and `chmod 700`', async (mode, who, shown) => {
    chmodSync(dir, Number.parseInt(mode, 8));
    await expectRefusedEverywhere(
      dir,
      new RegExp(`^the config directory ${dir} is writable by ${who} \\(mode ${shown}\\): kb does not use it until you run \`chmod 700 ${dir}\`$`),
    );
  });

  it.each([
    ['0620', 'group'],
    ['0602', 'others'],
    ['0666', 'group and others'],
  ])('refuses a config file of mode %s (writable by %s), naming it and `chmod 600`', async (mode, who) => {
    chmodSync(file, Number.parseInt(mode, 8));
    await expectRefusedEverywhere(file, new RegExp(`^the config file ${file} is writable by ${who} \\(mode ${mode}\\): .*\`chmod 600 ${file}\`$`));
  });

  it('quotes a path with spaces in the command it suggests, so that it can be pasted', async () => {
    const spaced = join(tempDirFor('kb-trust-'), 'my config');
    mkdirSync(spaced, { mode: 0o700 });
    writeFileSync(join(spaced, 'config.json'), CONFIG);
    chmodSync(join(spaced, 'config.json'), 0o622);
    const error = await rejection(new ProfileStore({ dir: spaced }).read());
    expect((error as Error).message).toContain(`\`chmod 600 '${join(spaced, 'config.json')}'\``);
  });

  it.skipIf(!IS_ROOT)('refuses a config file owned by another user, naming the owner and how to take it back (needs root: only root can chown)', async () => {
    chownSync(file, NOBODY.uid, NOBODY.gid);
    await expectRefusedEverywhere(file, new RegExp(`^the config file ${file} belongs to uid ${NOBODY.uid}, not to you \\(uid 0\\): kb does not use it$`));
    const error = (await rejection(store.read())) as ConfigTrustError;
    expect(error.help).toContain(`sudo chown 0 ${file} && chmod 600 ${file}`);
  });

  it.skipIf(!IS_ROOT)('refuses a config directory owned by another user (needs root: only root can chown)', async () => {
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    await expectRefusedEverywhere(dir, new RegExp(`^the config directory ${dir} belongs to uid ${NOBODY.uid}, not to you`));
  });

  it.skipIf(!IS_ROOT)('trusts a config that root owns, as ssh does (needs root: only root can make a root-owned file for another user)', async () => {
    const own = tempDirFor('kb-trust-', UNPRIVILEGED);
    // Readable by others, so that nobody can read it at all: used, with the warning.
    writeFileSync(join(own, 'config.json'), CONFIG);
    chmodSync(join(own, 'config.json'), 0o644);
    const result = await runConfigOp(['read'], own);
    expect(result.error).toBeUndefined();
    expect(result.ok).toMatchObject({ defaultProfile: 'work' });
    expect(result.warnings).toHaveLength(1);
  });

  it('takes a config directory without a file as empty, whatever its mode: nothing in it is used', async () => {
    const empty = join(tempDirFor('kb-trust-'), 'kb');
    mkdirSync(empty, { mode: 0o777 });
    chmodSync(empty, 0o777);
    expect((await new ProfileStore({ dir: empty }).read()).profiles.size).toBe(0);
  });

  it('still refuses to save into a config directory others can write, and writes nothing there', async () => {
    const open = join(tempDirFor('kb-trust-'), 'kb');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const error = await rejection(new ProfileStore({ dir: open }).saveProfile('work', { url: 'http://w.example', token: 'kbt_secret' }));
    expect(error).toBeInstanceOf(ConfigTrustError);
    expect(readdirSync(open)).toEqual([]);
  });
});

describe.skipIf(!IS_POSIX)('config trust: a file others can read is used, with a warning (POSIX only: Windows has no modes to check)', () => {
  it.each([
    ['0644', 'group and others'],
    ['0640', 'group'],
    ['0604', 'others'],
  ])('warns once about a config file of mode %s (readable by %s), naming it and `chmod 600`', async (mode, who) => {
    chmodSync(file, Number.parseInt(mode, 8));
    expect((await store.read()).defaultProfile).toBe('work');
    await store.read();
    expect(warnings).toEqual([`the config file ${file} is readable by ${who} (mode ${mode}) and holds tokens: run \`chmod 600 ${file}\``]);
  });

  it('says nothing about a file of mode 0600 in a directory of mode 0755', async () => {
    chmodSync(dir, 0o755);
    await store.read();
    expect(warnings).toEqual([]);
  });

  it('writes the warning to stderr when no handler is given, and nothing to stdout but the result', async () => {
    const own = tempDirFor('kb-trust-', UNPRIVILEGED);
    writeFileSync(join(own, 'config.json'), CONFIG);
    chmodSync(join(own, 'config.json'), 0o644);
    if (IS_ROOT) chownSync(join(own, 'config.json'), UNPRIVILEGED.uid, UNPRIVILEGED.gid);
    const result = await runConfigOp(['read-to-stderr'], own);
    expect(result.ok).toMatchObject({ defaultProfile: 'work' });
    expect(result.stderr).toBe(`Warning: the config file ${join(own, 'config.json')} is readable by group and others (mode 0644) and holds tokens: run \`chmod 600 ${join(own, 'config.json')}\`\n`);
  });

  it('leaves the file 0600 after a save, so the warning does not come back', async () => {
    chmodSync(file, 0o644);
    await store.saveProfile('home', { url: 'http://h.example' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    warnings = [];
    await new ProfileStore({ dir, onWarning: (message) => warnings.push(message) }).read();
    expect(warnings).toEqual([]);
  });
});
