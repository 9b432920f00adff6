import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KbApiError } from '../../src/api/errors.js';
import type { Base, Namespace } from '../../src/api/schemas.js';
import { generateToken } from '../../src/server/tokens.js';
import { APPLICATION_ID, SCHEMA_VERSION } from '../../src/store/migrations.js';
import { DATABASE_FILE, SqliteStore } from '../../src/store/sqlite.js';
import { StoreOpenError } from '../../src/store/store.js';
import { tempDir } from '../helpers/server.js';

const dirs: string[] = [];
function newDir(): string {
  const dir = tempDir('kb-store-');
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) {
    try {
      chmodSync(dir, 0o700);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Creates a token for `org` and returns the organization's id, as the server's authentication would. */
async function orgId(store: SqliteStore, org: string): Promise<number> {
  const token = generateToken();
  await store.createToken(org, token.id, token.hash);
  const principal = await store.authenticate(token.hash);
  if (!principal) throw new Error('a fresh token did not authenticate');
  return principal.orgId;
}

/** Resolves to the KbApiError a promise rejects with. */
async function apiError(promise: Promise<unknown>): Promise<KbApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(KbApiError);
  return error as KbApiError;
}

const ns = (key: string, description: string | null = null): Namespace => ({ key, description });
const base = (namespace: string, key: string, description: string | null = null): Base => ({ namespace, key, description });

describe('SqliteStore with an open database', () => {
  let dir: string;
  let store: SqliteStore;
  let acme: number;
  let globex: number;

  beforeEach(async () => {
    dir = newDir();
    store = SqliteStore.open(dir);
    acme = await orgId(store, 'acme');
    globex = await orgId(store, 'globex');
  });

  afterEach(async () => {
    await store.close();
  });

  async function reopen(): Promise<void> {
    await store.close();
    store = SqliteStore.open(dir);
  }

  describe('namespaces', () => {
    it('creates a namespace and returns it', async () => {
      expect(await store.nsCreate(acme, ns('docs', 'Documents'))).toEqual({ key: 'docs', description: 'Documents' });
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'Documents' }]);
    });

    it('lists namespaces ordered by key in byte order', async () => {
      const keys = ['b_x', 'a-x', 'B-x', 'a_x', 'abc', 'A00', '9zz', '-ab', '_ab', 'aaa', 'Zzz', 'a0x', 'aXx'];
      for (const key of keys) await store.nsCreate(acme, ns(key));
      // Byte order: '-' (0x2d) < digits < upper case < '_' (0x5f) < lower case.
      expect((await store.nsList(acme)).map((n) => n.key)).toEqual([
        '-ab', '9zz', 'A00', 'B-x', 'Zzz', '_ab', 'a-x', 'a0x', 'aXx', 'a_x', 'aaa', 'abc', 'b_x',
      ]);
    });

    it("sorts 'B' before 'a' before 'b', unlike a case-insensitive or locale collation", async () => {
      await Promise.all(['bbb', 'aaa', 'BBB'].map((key) => store.nsCreate(acme, ns(key))));
      expect((await store.nsList(acme)).map((n) => n.key)).toEqual(['BBB', 'aaa', 'bbb']);
    });

    it('refuses a second namespace with the same key in one organization with a conflict', async () => {
      await store.nsCreate(acme, ns('docs', 'first'));
      const error = await apiError(store.nsCreate(acme, ns('docs', 'second')));
      expect(error.code).toBe('conflict');
      expect(error.status).toBe(409);
      expect(error.message).toContain('docs');
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'first' }]);
    });

    it('allows the same key in two organizations, each listing only its own', async () => {
      await store.nsCreate(acme, ns('docs', 'acme docs'));
      await store.nsCreate(globex, ns('docs', 'globex docs'));
      await store.nsCreate(globex, ns('other'));
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'acme docs' }]);
      expect(await store.nsList(globex)).toEqual([
        { key: 'docs', description: 'globex docs' },
        { key: 'other', description: null },
      ]);
    });

    it('treats __proto__, constructor and prototype as ordinary keys', async () => {
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        expect(await store.nsCreate(acme, ns(key, key))).toEqual({ key, description: key });
        await store.baseCreate(acme, base(key, key));
      }
      expect((await store.nsList(acme)).map((n) => n.key)).toEqual(['__proto__', 'constructor', 'prototype']);
      expect(await store.baseList(acme, '__proto__')).toEqual([base('__proto__', '__proto__')]);
    });

    it('updates: a string sets the description, null clears it, undefined leaves it', async () => {
      await store.nsCreate(acme, ns('docs', 'old'));
      expect(await store.nsUpdate(acme, 'docs', { description: 'new' })).toEqual({ key: 'docs', description: 'new' });
      expect(await store.nsUpdate(acme, 'docs', {})).toEqual({ key: 'docs', description: 'new' });
      expect(await store.nsUpdate(acme, 'docs', { description: undefined })).toEqual({ key: 'docs', description: 'new' });
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'new' }]);
      expect(await store.nsUpdate(acme, 'docs', { description: null })).toEqual({ key: 'docs', description: null });
      await reopen();
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: null }]);
    });

    it('updating an unknown namespace, or another organization\'s, is not_found', async () => {
      await store.nsCreate(acme, ns('docs'));
      const unknown = await apiError(store.nsUpdate(acme, 'nope', { description: 'x' }));
      expect(unknown.code).toBe('not_found');
      expect(unknown.status).toBe(404);
      const foreign = await apiError(store.nsUpdate(globex, 'docs', { description: 'x' }));
      expect(foreign.code).toBe('not_found');
      expect(foreign.message).toBe(unknown.message.replace('nope', 'docs'));
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: null }]);
    });
  });

  describe('bases', () => {
    it('creates a base and lists it', async () => {
      await store.nsCreate(acme, ns('docs'));
      expect(await store.baseCreate(acme, base('docs', 'manual', 'The manual'))).toEqual(base('docs', 'manual', 'The manual'));
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'The manual')]);
    });

    it('creates the missing namespace with the base', async () => {
      await store.baseCreate(acme, base('fresh', 'manual'));
      expect(await store.nsList(acme)).toEqual([{ key: 'fresh', description: null }]);
      expect(await store.baseList(acme, 'fresh')).toEqual([base('fresh', 'manual')]);
      expect(await store.nsList(globex)).toEqual([]);
    });

    it('leaves an existing namespace as it is when creating a base in it', async () => {
      await store.nsCreate(acme, ns('docs', 'kept'));
      await store.baseCreate(acme, base('docs', 'manual'));
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'kept' }]);
    });

    it('lists bases ordered by key in byte order', async () => {
      for (const key of ['b_x', 'B-x', '_ab', '-ab', 'a-x', '9zz']) await store.baseCreate(acme, base('docs', key));
      expect((await store.baseList(acme, 'docs')).map((b) => b.key)).toEqual(['-ab', '9zz', 'B-x', '_ab', 'a-x', 'b_x']);
    });

    it('refuses a second base with the same key in one namespace, and keeps the first', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'first'));
      const error = await apiError(store.baseCreate(acme, base('docs', 'manual', 'second')));
      expect(error.code).toBe('conflict');
      expect(error.status).toBe(409);
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'first')]);
    });

    it('allows the same base key in two namespaces and in two organizations', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'a'));
      await store.baseCreate(acme, base('more', 'manual', 'b'));
      await store.baseCreate(globex, base('docs', 'manual', 'c'));
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'a')]);
      expect(await store.baseList(acme, 'more')).toEqual([base('more', 'manual', 'b')]);
      expect(await store.baseList(globex, 'docs')).toEqual([base('docs', 'manual', 'c')]);
    });

    it('a rejected base_create into a missing namespace creates no namespace', async () => {
      // A NOT NULL violation after the namespace was ensured: the namespace must be rolled back with the base.
      const broken = { namespace: 'ghost', key: null, description: null } as unknown as Base;
      await expect(store.baseCreate(acme, broken)).rejects.toThrow();
      expect(await store.nsList(acme)).toEqual([]);
      await reopen();
      expect(await store.nsList(acme)).toEqual([]);
    });

    it('a conflicting base_create writes nothing', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'first'));
      const before = await store.nsList(acme);
      await apiError(store.baseCreate(acme, base('docs', 'manual', 'second')));
      expect(await store.nsList(acme)).toEqual(before);
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'first')]);
    });

    it('of two creates of one key into a new namespace in one batch, one wins and one namespace exists', async () => {
      const results = await Promise.allSettled([
        store.baseCreate(acme, base('race', 'manual', 'one')),
        store.baseCreate(acme, base('race', 'manual', 'two')),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(await store.nsList(acme)).toEqual([{ key: 'race', description: null }]);
      expect(await store.baseList(acme, 'race')).toHaveLength(1);
    });

    it('updates: a string sets the description, null clears it, undefined leaves it', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'old'));
      expect(await store.baseUpdate(acme, 'docs', 'manual', { description: 'new' })).toEqual(base('docs', 'manual', 'new'));
      expect(await store.baseUpdate(acme, 'docs', 'manual', {})).toEqual(base('docs', 'manual', 'new'));
      expect(await store.baseUpdate(acme, 'docs', 'manual', { description: undefined })).toEqual(base('docs', 'manual', 'new'));
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'new')]);
      expect(await store.baseUpdate(acme, 'docs', 'manual', { description: null })).toEqual(base('docs', 'manual'));
      await reopen();
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual')]);
    });

    it('deletes a base and returns it; deleting again is not_found; the key can be reused', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'text'));
      await store.baseCreate(acme, base('docs', 'other'));
      expect(await store.baseDelete(acme, 'docs', 'manual')).toEqual(base('docs', 'manual', 'text'));
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'other')]);
      expect((await apiError(store.baseDelete(acme, 'docs', 'manual'))).code).toBe('not_found');
      expect(await store.baseCreate(acme, base('docs', 'manual'))).toEqual(base('docs', 'manual'));
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: null }]);
    });

    it('reports not_found for an unknown namespace or base, and for another organization\'s', async () => {
      await store.baseCreate(acme, base('docs', 'manual', 'secret'));
      const cases: Array<[string, () => Promise<unknown>]> = [
        ['list, unknown namespace', () => store.baseList(acme, 'nope')],
        ['update, unknown namespace', () => store.baseUpdate(acme, 'nope', 'manual', { description: 'x' })],
        ['update, unknown base', () => store.baseUpdate(acme, 'docs', 'nope', { description: 'x' })],
        ['delete, unknown namespace', () => store.baseDelete(acme, 'nope', 'manual')],
        ['delete, unknown base', () => store.baseDelete(acme, 'docs', 'nope')],
        ['list, other organization', () => store.baseList(globex, 'docs')],
        ['update, other organization', () => store.baseUpdate(globex, 'docs', 'manual', { description: 'x' })],
        ['delete, other organization', () => store.baseDelete(globex, 'docs', 'manual')],
      ];
      for (const [what, run] of cases) {
        const error = await apiError(run());
        expect(error.code, what).toBe('not_found');
        expect(error.status, what).toBe(404);
      }
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'secret')]);
    });

    it('keeps descriptions exactly: emoji, NUL, newlines, 1024 code points', async () => {
      const descriptions = ['\u{1F600}'.repeat(1024), 'a\0b', 'line\r\nline', '\u200f\u0301e', '"\\\'`'];
      for (const [index, description] of descriptions.entries()) {
        await store.baseCreate(acme, base('docs', `base-${index}`, description));
      }
      await reopen();
      expect((await store.baseList(acme, 'docs')).map((b) => b.description)).toEqual(descriptions);
    });
  });

  describe('tokens', () => {
    it('authenticates a token by its hash, naming the organization', async () => {
      const token = generateToken();
      const info = await store.createToken('initech', token.id, token.hash);
      expect(info).toMatchObject({ id: token.id, org: 'initech', revokedAt: null });
      expect(Number.isNaN(Date.parse(info.createdAt))).toBe(false);
      const principal = await store.authenticate(token.hash);
      expect(principal).toMatchObject({ org: 'initech', tokenId: token.id });
      expect(principal?.orgId).not.toBe(acme);
      expect(principal?.orgId).not.toBe(globex);
    });

    it('gives two tokens of one organization the same organization id', async () => {
      const token = generateToken();
      await store.createToken('acme', token.id, token.hash);
      expect((await store.authenticate(token.hash))?.orgId).toBe(acme);
    });

    it('does not authenticate an unknown hash', async () => {
      expect(await store.authenticate(randomBytes(32))).toBeNull();
      expect(await store.authenticate(Buffer.alloc(0))).toBeNull();
    });

    it('no longer authenticates a revoked token; other tokens still work', async () => {
      const revoked = generateToken();
      const kept = generateToken();
      await store.createToken('acme', revoked.id, revoked.hash);
      await store.createToken('acme', kept.id, kept.hash);
      const info = await store.revokeToken(revoked.id);
      expect(info).toMatchObject({ id: revoked.id, org: 'acme' });
      expect(info?.revokedAt).toEqual(expect.any(String));
      expect(await store.authenticate(revoked.hash)).toBeNull();
      expect(await store.authenticate(kept.hash)).toMatchObject({ org: 'acme', tokenId: kept.id });
      await reopen();
      expect(await store.authenticate(revoked.hash)).toBeNull();
    });

    it('revoking twice keeps the first revocation time; revoking an unknown id gives null', async () => {
      const token = generateToken();
      await store.createToken('acme', token.id, token.hash);
      const first = await store.revokeToken(token.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await store.revokeToken(token.id);
      expect(second?.revokedAt).toBe(first?.revokedAt);
      expect(await store.revokeToken('tok_doesnotexist')).toBeNull();
    });

    it('lists every token with its organization and state', async () => {
      const token = generateToken();
      await store.createToken('initech', token.id, token.hash);
      await store.revokeToken(token.id);
      const tokens = await store.listTokens();
      expect(tokens).toHaveLength(3);
      expect(tokens.map((t) => t.org).sort()).toEqual(['acme', 'globex', 'initech']);
      expect(tokens.find((t) => t.id === token.id)?.revokedAt).toEqual(expect.any(String));
      expect(tokens.filter((t) => t.revokedAt === null)).toHaveLength(2);
    });

    it('never writes the raw token to disk, only its hash', async () => {
      const canary = generateToken();
      await store.createToken('canary-org', canary.id, canary.hash);
      await store.nsCreate(acme, ns('docs', 'x'.repeat(100)));
      const onDisk = () => Buffer.concat(readdirSync(dir).map((file) => readFileSync(join(dir, file))));
      const secret = canary.token.slice('kbt_'.length);
      const check = (bytes: Buffer) => {
        // The hash must be there (proves these bytes hold the write), the token in no encoding.
        expect(bytes.includes(canary.hash)).toBe(true);
        expect(bytes.includes(Buffer.from(canary.token, 'utf8'))).toBe(false);
        expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false);
        expect(bytes.includes(Buffer.from(secret, 'base64url'))).toBe(false);
        expect(bytes.includes(Buffer.from(canary.token, 'utf16le'))).toBe(false);
      };
      // While open, the write sits in the -wal file; after close it is checkpointed into the database.
      expect(readdirSync(dir)).toContain(`${DATABASE_FILE}-wal`);
      check(onDisk());
      await store.close();
      check(onDisk());
      store = SqliteStore.open(dir);
    });
  });

  describe('durability and group commit', () => {
    it('keeps everything across close and reopen', async () => {
      await store.nsCreate(acme, ns('docs', 'Documents'));
      await store.baseCreate(acme, base('docs', 'manual', 'The manual'));
      await store.baseCreate(globex, base('other', 'guide'));
      const token = generateToken();
      await store.createToken('acme', token.id, token.hash);
      await reopen();
      expect(await store.nsList(acme)).toEqual([{ key: 'docs', description: 'Documents' }]);
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', 'The manual')]);
      expect(await store.baseList(globex, 'other')).toEqual([base('other', 'guide')]);
      expect(await store.authenticate(token.hash)).toMatchObject({ org: 'acme', orgId: acme });
    });

    it('resolves 200 concurrent creates, all present after reopen', async () => {
      const keys = Array.from({ length: 200 }, (_, i) => `ns-${String(i).padStart(3, '0')}`);
      const created = await Promise.all(keys.map((key) => store.nsCreate(acme, ns(key, `d${key}`))));
      expect(created.map((n) => n.key)).toEqual(keys);
      const bases = await Promise.all(keys.map((key) => store.baseCreate(acme, base('many', key))));
      expect(bases).toHaveLength(200);
      await reopen();
      expect(await store.nsList(acme)).toEqual([
        { key: 'many', description: null },
        ...keys.map((key) => ({ key, description: `d${key}` })),
      ]);
      expect((await store.baseList(acme, 'many')).map((b) => b.key)).toEqual(keys);
    });

    it('a failing write in a batch does not undo its neighbours', async () => {
      await store.nsCreate(acme, ns('taken'));
      // All issued in one turn of the event loop, so they share one transaction.
      const results = await Promise.allSettled([
        store.nsCreate(acme, ns('first')),
        store.nsCreate(acme, ns('taken')),
        store.baseCreate(acme, base('docs', 'manual')),
        store.nsUpdate(acme, 'missing', { description: 'x' }),
        store.baseCreate(acme, { namespace: 'ghost', key: null } as unknown as Base),
        store.baseCreate(acme, base('docs', 'manual')),
        store.nsCreate(acme, ns('last', 'kept')),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled',
      ]);
      const reasons = results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok'));
      expect(reasons[1]).toBe('conflict');
      expect(reasons[3]).toBe('not_found');
      expect(reasons[5]).toBe('conflict');
      await reopen();
      expect(await store.nsList(acme)).toEqual([
        { key: 'docs', description: null },
        { key: 'first', description: null },
        { key: 'last', description: 'kept' },
        { key: 'taken', description: null },
      ]);
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual')]);
    });

    it('close() commits writes still queued, and later writes are refused with 503', async () => {
      const pending = store.nsCreate(acme, ns('queued'));
      await store.close();
      await expect(pending).resolves.toEqual({ key: 'queued', description: null });
      const refused = await apiError(store.nsCreate(acme, ns('late')));
      expect(refused.code).toBe('unavailable');
      expect(refused.status).toBe(503);
      store = SqliteStore.open(dir);
      expect(await store.nsList(acme)).toEqual([{ key: 'queued', description: null }]);
    });

    it('refuses reads after close() with 503 as well', async () => {
      await store.close();
      for (const read of [() => store.nsList(acme), () => store.baseList(acme, 'docs'), () => store.authenticate(randomBytes(32)), () => store.listTokens()]) {
        const error = await apiError(read());
        expect(error.code).toBe('unavailable');
      }
      store = SqliteStore.open(dir);
    });

    it('closing twice is harmless', async () => {
      await store.close();
      await store.close();
      store = SqliteStore.open(dir);
    });
  });
});

describe('SqliteStore.open', () => {
  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const sidecars = (dir: string) => readdirSync(dir).filter((file) => file !== DATABASE_FILE);

  /** Opening must throw StoreOpenError matching `message`, and leave the file byte-identical with no -wal/-shm. */
  function expectRefusal(dir: string, message: RegExp, file = join(dir, DATABASE_FILE)): StoreOpenError {
    const before = sha256(file);
    const filesBefore = readdirSync(dir).sort();
    let thrown: unknown;
    try {
      SqliteStore.open(dir).close().catch(() => undefined);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoreOpenError);
    const error = thrown as StoreOpenError;
    expect(error.message).toMatch(message);
    expect(error.message).toContain(file);
    expect(sha256(file)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(filesBefore);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    return error;
  }

  /** A closed kb database with enough rows to span many pages. */
  async function populatedDatabase(): Promise<string> {
    const dir = newDir();
    const store = SqliteStore.open(dir);
    const org = await orgId(store, 'acme');
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.baseCreate(org, base(`ns-${i % 10}`, `base-${i}`, 'x'.repeat(400)))),
    );
    await store.close();
    expect(sidecars(dir)).toEqual([]);
    return dir;
  }

  it('creates a new database in a missing data dir, and reopens it', async () => {
    const dir = join(newDir(), 'nested', 'data');
    const store = SqliteStore.open(dir);
    await store.close();
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(true);
    const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
    expect(db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    await SqliteStore.open(dir).close();
  });

  it('accepts an empty database file and makes it a kb database', async () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), '');
    const store = SqliteStore.open(dir);
    const org = await orgId(store, 'acme');
    await store.nsCreate(org, ns('docs'));
    await store.close();
  });

  it('refuses a file of random bytes', () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), randomBytes(8192));
    expectRefusal(dir, /not a kb database/);
  });

  it('refuses a file shorter than an SQLite header', () => {
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), 'SQLite format 3\0');
    expectRefusal(dir, /not a kb database/);
  });

  it('refuses a kb database truncated to half its size', async () => {
    const source = await populatedDatabase();
    const full = readFileSync(join(source, DATABASE_FILE));
    expect(full.length).toBeGreaterThan(16 * 4096);
    const dir = newDir();
    writeFileSync(join(dir, DATABASE_FILE), full.subarray(0, Math.floor(full.length / 2)));
    expectRefusal(dir, /truncated/);
  });

  it('refuses a kb database with a corrupted page', async () => {
    const dir = await populatedDatabase();
    const file = join(dir, DATABASE_FILE);
    const bytes = readFileSync(file);
    // Overwrite the middle pages (leaving page 1 and the header intact) with garbage.
    const pageSize = bytes.readUInt16BE(16);
    randomBytes(pageSize * 4).copy(bytes, pageSize * 4);
    writeFileSync(file, bytes);
    expectRefusal(dir, /corrupt/);
  });

  it('refuses a foreign SQLite database', () => {
    const dir = newDir();
    const db = new Database(join(dir, DATABASE_FILE));
    db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);");
    db.close();
    expectRefusal(dir, /SQLite database, but not a kb one/);
  });

  it('refuses a foreign SQLite database in WAL mode', () => {
    const dir = newDir();
    const db = new Database(join(dir, DATABASE_FILE));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    expect(sidecars(dir)).toEqual([]);
    expectRefusal(dir, /not a kb one/);
  });

  it('refuses a kb database whose schema version is newer than this kb', async () => {
    const dir = await populatedDatabase();
    const db = new Database(join(dir, DATABASE_FILE));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(sidecars(dir)).toEqual([]);
    const error = expectRefusal(dir, /newer than this kb supports/);
    expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
  });

  it('refuses a data dir path that is a regular file', () => {
    const dir = newDir();
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'precious');
    const before = sha256(file);
    expect(() => SqliteStore.open(file)).toThrow(StoreOpenError);
    expect(() => SqliteStore.open(file)).toThrow(/cannot create data dir/);
    expect(sha256(file)).toBe(before);
    expect(readdirSync(dir)).toEqual(['not-a-dir']);
  });

  it('refuses a data dir whose kb.db is a directory', () => {
    const dir = newDir();
    mkdirSync(join(dir, DATABASE_FILE));
    expect(() => SqliteStore.open(dir)).toThrow(StoreOpenError);
    expect(readdirSync(dir)).toEqual([DATABASE_FILE]);
  });

  // Root bypasses file permissions, so this cannot fail as root: skipped there, and only there.
  it.skipIf(process.getuid?.() === 0)('refuses a data dir it may not read or write', async () => {
    const dir = await populatedDatabase();
    const before = sha256(join(dir, DATABASE_FILE));
    chmodSync(dir, 0o000);
    try {
      expect(() => SqliteStore.open(dir)).toThrow(StoreOpenError);
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(sha256(join(dir, DATABASE_FILE))).toBe(before);
    expect(sidecars(dir)).toEqual([]);
  });
});
