import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KbApiError } from '../../src/api/errors.js';
import type { Base, Namespace } from '../../src/api/schemas.js';
import { generateToken } from '../../src/server/tokens.js';
import { type IdempotencyCapture, type KeyedResult, type Store, type StoredReply, type WriteOutcome } from '../../src/store/store.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/database.js';
import { rejection } from '../helpers/rejection.js';
import { orgIdOf } from '../helpers/store.js';

/**
 * What every engine of the Store interface must do, run once per engine (the vitest projects of vitest.config.ts):
 * a fresh database for each test, "reopen" being a close and a new store over the same database.
 */

const orgId = orgIdOf;

/** Resolves to the KbApiError a promise rejects with. */
async function apiError(promise: Promise<unknown>): Promise<KbApiError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(KbApiError);
  return error as KbApiError;
}

/** A capture that keeps what `keep` says for an outcome, and records the outcomes it saw. */
function capture(orgId: number, key: string, fingerprint: string, keep: (outcome: WriteOutcome) => StoredReply | undefined) {
  const seen: WriteOutcome[] = [];
  const value: IdempotencyCapture = {
    orgId,
    key,
    fingerprint,
    reply: (outcome) => {
      seen.push(outcome);
      return keep(outcome);
    },
  };
  return { capture: value, seen };
}

const ns = (key: string, description: string | null = null): Namespace => ({ key, description });
const base = (namespace: string, key: string, description: string | null = null): Base => ({ namespace, key, description });

describe(`the Store contract (${ENGINE})`, () => {
  let database: TestDatabase;
  let store: Store;
  let acme: number;
  let globex: number;

  beforeEach(async () => {
    database = await createTestDatabase();
    store = await database.open();
    acme = await orgId(store, 'acme');
    globex = await orgId(store, 'globex');
  });

  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  async function reopen(): Promise<void> {
    await store.close();
    store = await database.open();
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

  describe('deleting a namespace (nsDelete, the ns_delete extension)', () => {
    const nsDelete = (orgId: number, key: string, cascade = false) => store.perform({ op: 'nsDelete', orgId, key, cascade });

    it('deletes an empty namespace and returns it; again is not_found; the key can be reused', async () => {
      await store.nsCreate(acme, ns('empty', 'Nothing yet'));
      await store.nsCreate(acme, ns('kept'));
      expect(await nsDelete(acme, 'empty')).toEqual({ key: 'empty', description: 'Nothing yet' });
      expect(await store.nsList(acme)).toEqual([ns('kept')]);
      expect((await apiError(nsDelete(acme, 'empty'))).code).toBe('not_found');
      expect(await store.nsCreate(acme, ns('empty'))).toEqual(ns('empty'));
    });

    it('refuses a namespace with bases with a conflict naming how many, changing nothing, unless cascade', async () => {
      await store.baseCreate(acme, base('docs', 'faq'));
      await store.baseCreate(acme, base('docs', 'guide', 'text'));
      await store.baseCreate(acme, base('other', 'faq'));
      const error = await apiError(nsDelete(acme, 'docs'));
      expect(error.status).toBe(409);
      expect(error.message).toBe('Namespace docs holds 2 bases');
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'faq'), base('docs', 'guide', 'text')]);
      expect(await nsDelete(acme, 'docs', true)).toEqual(ns('docs'));
      expect(await store.nsList(acme)).toEqual([ns('other')]);
      expect((await apiError(store.baseList(acme, 'docs'))).code).toBe('not_found');
      expect(await store.baseListAll(acme)).toEqual([base('other', 'faq')]);
      // A namespace of the same key made again starts empty.
      await store.nsCreate(acme, ns('docs'));
      expect(await store.baseList(acme, 'docs')).toEqual([]);
      await reopen();
      expect(await store.baseListAll(acme)).toEqual([base('other', 'faq')]);
    });

    it("is not_found for an unknown namespace and for another organization's, which stays", async () => {
      await store.baseCreate(acme, base('docs', 'faq'));
      for (const cascade of [false, true]) {
        expect((await apiError(nsDelete(globex, 'docs', cascade))).code).toBe('not_found');
        expect((await apiError(nsDelete(acme, 'nope', cascade))).code).toBe('not_found');
      }
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'faq')]);
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

  });

  describe('durability and concurrent writes', () => {
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

    it('a failing write does not undo concurrent ones', async () => {
      await store.nsCreate(acme, ns('taken'));
      const results = await Promise.allSettled([
        store.nsCreate(acme, ns('first')),
        store.nsCreate(acme, ns('taken')),
        store.baseCreate(acme, base('docs', 'manual', 'one')),
        store.nsUpdate(acme, 'missing', { description: 'x' }),
        store.baseCreate(acme, { namespace: 'ghost', key: null } as unknown as Base),
        store.baseCreate(acme, base('docs', 'manual', 'two')),
        store.nsCreate(acme, ns('last', 'kept')),
      ]);
      const reasons = results.map((r) => (r.status === 'fulfilled' ? 'ok' : r.reason instanceof KbApiError ? r.reason.code : 'error'));
      expect([reasons[0], reasons[1], reasons[3], reasons[4], reasons[6]]).toEqual(['ok', 'conflict', 'not_found', 'error', 'ok']);
      // Of the two creates of docs/manual, whichever the engine ran first wins and the other is a conflict.
      expect([reasons[2], reasons[5]].sort()).toEqual(['conflict', 'ok']);
      const winner = reasons[2] === 'ok' ? 'one' : 'two';
      await reopen();
      expect(await store.nsList(acme)).toEqual([
        { key: 'docs', description: null },
        { key: 'first', description: null },
        { key: 'last', description: 'kept' },
        { key: 'taken', description: null },
      ]);
      expect(await store.baseList(acme, 'docs')).toEqual([base('docs', 'manual', winner)]);
    });

    it('close() commits writes still queued, and later writes are refused with 503', async () => {
      const pending = store.nsCreate(acme, ns('queued'));
      await store.close();
      await expect(pending).resolves.toEqual({ key: 'queued', description: null });
      const refused = await apiError(store.nsCreate(acme, ns('late')));
      expect(refused.code).toBe('unavailable');
      expect(refused.status).toBe(503);
      store = await database.open();
      expect(await store.nsList(acme)).toEqual([{ key: 'queued', description: null }]);
    });

    it('refuses reads after close() with 503 as well', async () => {
      await store.close();
      for (const read of [() => store.nsList(acme), () => store.baseList(acme, 'docs'), () => store.authenticate(randomBytes(32)), () => store.listTokens()]) {
        const error = await apiError(read());
        expect(error.code).toBe('unavailable');
      }
      store = await database.open();
    });

    it('closing twice is harmless, and the data is there on reopening', async () => {
      await store.nsCreate(acme, { key: 'before-close', description: null });
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
      store = await database.open();
      expect((await store.nsList(acme)).map((ns) => ns.key)).toContain('before-close');
    });
  });
  describe('the first token', () => {
    it('is created only when there is no token at all', async () => {
      const first = generateToken();
      expect(await store.createFirstToken('local', first.id, first.hash)).toBeNull();
      expect(await store.authenticate(first.hash)).toBeNull();

      const empty = await createTestDatabase();
      const fresh = await empty.open();
      try {
        const info = await fresh.createFirstToken('local', first.id, first.hash);
        expect(info).toMatchObject({ id: first.id, org: 'local', revokedAt: null });
        expect(await fresh.authenticate(first.hash)).toMatchObject({ org: 'local', tokenId: first.id });
        const second = generateToken();
        expect(await fresh.createFirstToken('local', second.id, second.hash)).toBeNull();
        expect(await fresh.listTokens()).toHaveLength(1);
      } finally {
        await fresh.close();
        await empty.drop();
      }
    });

    it('is created once by several stores starting together on an empty database', async () => {
      const empty = await createTestDatabase();
      const stores = await Promise.all(Array.from({ length: 4 }, () => empty.open()));
      try {
        const results = await Promise.all(
          stores.flatMap((each) => Array.from({ length: 5 }, () => {
            const token = generateToken();
            return each.createFirstToken('local', token.id, token.hash);
          })),
        );
        expect(results.filter((info) => info !== null)).toHaveLength(1);
        expect(await stores[0]?.listTokens()).toHaveLength(1);
      } finally {
        await Promise.all(stores.map((each) => each.close()));
        await empty.drop();
      }
    });
  });

  describe('replies kept under an Idempotency-Key', () => {
    const ok = (outcome: WriteOutcome): StoredReply | undefined =>
      outcome.ok ? { status: 200, body: JSON.stringify(outcome.value) } : outcome.error instanceof KbApiError ? { status: outcome.error.status, body: outcome.error.message } : undefined;

    /** The value of a keyed write that ran and succeeded; fails the test otherwise. */
    const ranValue = (result: KeyedResult): unknown => {
      expect(result.kind).toBe('ran');
      const outcome = (result as Extract<KeyedResult, { kind: 'ran' }>).outcome;
      expect(outcome.ok).toBe(true);
      return (outcome as { value: unknown }).value;
    };
    /** The error of a keyed write that ran and failed on its own (a 404, a 409). */
    const ranError = (result: KeyedResult): KbApiError => {
      expect(result.kind).toBe('ran');
      const outcome = (result as Extract<KeyedResult, { kind: 'ran' }>).outcome as { ok: false; error: unknown };
      expect(outcome.error).toBeInstanceOf(KbApiError);
      return outcome.error as KbApiError;
    };

    it('keeps the reply of a write with it, and a repeat finds it instead of writing again', async () => {
      const first = capture(acme, 'key-a', 'print-a', ok);
      const made = await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('idem', 'one') }, first.capture);
      expect(ranValue(made)).toEqual({ key: 'idem', description: 'one' });
      expect(made).toMatchObject({ reply: { status: 200, body: '{"key":"idem","description":"one"}' } });
      expect(first.seen).toEqual([{ ok: true, value: { key: 'idem', description: 'one' } }]);
      const kept = await store.idempotencyGet(acme, 'key-a');
      expect(kept).toMatchObject({ fingerprint: 'print-a', status: 200, body: '{"key":"idem","description":"one"}' });
      expect(Number.isNaN(Date.parse(kept?.createdAt ?? ''))).toBe(false);

      const repeat = capture(acme, 'key-a', 'print-a', ok);
      const replayed = await store.performKeyed({ op: 'nsUpdate', orgId: acme, key: 'idem', patch: { description: 'two' } }, repeat.capture);
      expect(replayed).toEqual({ kind: 'replayed', record: kept });
      expect(repeat.seen).toEqual([]);
      expect(await store.nsList(acme)).toEqual([{ key: 'idem', description: 'one' }]);
      expect(await store.idempotencyGet(globex, 'key-a')).toBeNull();
    });

    it('replays the first copy of a key to a second copy in the same batch', async () => {
      const write = { op: 'nsCreate', orgId: acme, ns: ns('twice', 'first') } as const;
      const [first, second, third] = await Promise.all([
        store.performKeyed(write, capture(acme, 'key-twice', 'print-twice', ok).capture),
        store.performKeyed({ ...write, ns: ns('twice-2') }, capture(acme, 'key-twice', 'print-twice', ok).capture),
        store.performKeyed(write, capture(acme, 'key-twice', 'print-twice', ok).capture),
      ]);
      expect(ranValue(first)).toEqual({ key: 'twice', description: 'first' });
      for (const copy of [second, third]) {
        expect(copy).toMatchObject({ kind: 'replayed', record: { fingerprint: 'print-twice', status: 200, body: '{"key":"twice","description":"first"}' } });
      }
      expect(await store.nsList(acme)).toEqual([{ key: 'twice', description: 'first' }]);
    });

    it('keeps the reply of a write that was refused (409, 404) in the same transaction, having written nothing', async () => {
      await store.nsCreate(acme, ns('taken'));
      const taken = capture(acme, 'key-b', 'print-b', ok);
      expect(ranError(await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('taken', 'again') }, taken.capture)).code).toBe('conflict');
      expect(await store.idempotencyGet(acme, 'key-b')).toMatchObject({ status: 409, body: 'Namespace taken already exists' });
      const missing = capture(acme, 'key-c', 'print-c', ok);
      expect(ranError(await store.performKeyed({ op: 'baseDelete', orgId: acme, namespace: 'docs', key: 'nope' }, missing.capture)).code).toBe('not_found');
      expect(await store.idempotencyGet(acme, 'key-c')).toMatchObject({ status: 404, body: 'Namespace docs not found' });
      await store.baseCreate(acme, base('full', 'faq'));
      const full = capture(acme, 'key-full', 'print-full', ok);
      expect(ranError(await store.performKeyed({ op: 'nsDelete', orgId: acme, key: 'full', cascade: false }, full.capture)).code).toBe('conflict');
      expect(await store.idempotencyGet(acme, 'key-full')).toMatchObject({ status: 409, body: 'Namespace full holds 1 base' });
      expect(await store.nsList(acme)).toEqual([{ key: 'full', description: null }, { key: 'taken', description: null }]);
    });

    it('keeps the reply of a namespace deleted with its bases, and replays it to a repeat', async () => {
      await store.baseCreate(acme, base('full', 'faq'));
      const deleted = await store.performKeyed({ op: 'nsDelete', orgId: acme, key: 'full', cascade: true }, capture(acme, 'key-cascade', 'print-cascade', ok).capture);
      expect(ranValue(deleted)).toEqual(ns('full'));
      const again = await store.performKeyed({ op: 'nsDelete', orgId: acme, key: 'full', cascade: true }, capture(acme, 'key-cascade', 'print-cascade', ok).capture);
      expect(again).toMatchObject({ kind: 'replayed', record: { status: 200, body: '{"key":"full","description":null}' } });
      expect(await store.nsList(acme)).toEqual([]);
    });

    it('keeps no reply for a write that failed unexpectedly, and leaves nothing of it behind', async () => {
      const broken = capture(acme, 'key-g', 'print-g', ok);
      const result = await store.performKeyed({ op: 'baseCreate', orgId: acme, base: { namespace: 'ghost', key: null } as unknown as Base }, broken.capture);
      expect(result).toMatchObject({ kind: 'ran', outcome: { ok: false }, reply: undefined });
      expect(broken.seen.map((outcome) => outcome.ok)).toEqual([false]);
      expect(await store.idempotencyGet(acme, 'key-g')).toBeNull();
      expect(await store.nsList(acme)).toEqual([]);
    });

    it('keeps nothing when the reply says so, and lets a retry run', async () => {
      const nothing = capture(acme, 'key-d', 'print-d', () => undefined);
      await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('unkept') }, nothing.capture);
      expect(await store.idempotencyGet(acme, 'key-d')).toBeNull();
      const retry = await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('unkept-2') }, capture(acme, 'key-d', 'print-d', ok).capture);
      expect(ranValue(retry)).toEqual({ key: 'unkept-2', description: null });
    });

    it('forgets replies older than 24 hours, and purges them', async () => {
      await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('aged') }, capture(acme, 'key-e', 'print-e', ok).capture);
      await store.performKeyed({ op: 'nsCreate', orgId: acme, ns: ns('young') }, capture(acme, 'key-f', 'print-f', ok).capture);
      await database.sql("UPDATE idempotency SET created_at = ? WHERE key = 'key-e'", [new Date(Date.now() - 25 * 3600 * 1000).toISOString()]);
      expect(await store.idempotencyGet(acme, 'key-e')).toBeNull();
      expect(await store.idempotencyGet(acme, 'key-f')).not.toBeNull();
      expect(await store.idempotencyPurge()).toBe(1);
      expect(await store.idempotencyPurge()).toBe(0);
      expect(await store.idempotencyGet(acme, 'key-f')).not.toBeNull();
    });
  });

  it('reads the change log after any cursor with any limit, across commits and organizations, in cursor order', async () => {
    const log = store.changeLog;
    if (log === undefined) throw new Error('both engines keep a change log');
    // Three commits (one batch of five writes of two organizations interleaved, then two alone).
    await Promise.all([
      store.nsCreate(acme, ns('a')),
      store.nsCreate(globex, ns('g')),
      store.baseCreate(acme, base('b', 'one')),
      store.nsUpdate(acme, 'a', { description: 'x' }),
    ]);
    await store.baseUpdate(acme, 'b', 'one', { description: 'y' });
    await store.perform({ op: 'nsDelete', orgId: acme, key: 'b', cascade: true });
    const all = [
      [1, 'created', ns('a')],
      [2, 'created', ns('b')],
      [3, 'created', base('b', 'one')],
      [4, 'updated', ns('a', 'x')],
      [5, 'updated', base('b', 'one', 'y')],
      [6, 'deleted', base('b', 'one', 'y')],
      [7, 'deleted', ns('b')],
    ];
    expect(await log.head(acme)).toBe(7);
    for (let after = 0; after <= 7; after++) {
      for (const limit of [0, 1, 2, 3, 100]) {
        const read = await log.read(acme, after, limit);
        expect(read.gone ? 'gone' : read.changes.map(({ seq, type, object }) => [seq, type, object])).toEqual(all.slice(after, after + limit));
      }
    }
    expect(await log.read(acme, 8, 10)).toEqual({ gone: true });
    const other = await log.read(globex, 0, 10);
    expect(other.gone ? 'gone' : other.changes.map(({ seq, type, object }) => [seq, type, object])).toEqual([[1, 'created', ns('g')]]);
  });
});
