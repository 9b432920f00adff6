import { closeSync, copyFileSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { committedFrames, logMismatch, metaRow, pagesOf, type PageSource } from '../../src/store/sqlite-wal.js';
import { tempDir } from '../helpers/temp.js';
import { orgIdOf } from '../helpers/store.js';

/**
 * The WAL reader (src/store/sqlite-wal.ts) against files SQLite wrote: the meta row read from a few pages, the frames
 * SQLite's recovery replays (torn frames, salts changed by a restarted log), and the one decision, whether a -wal
 * continues a kb.db, which never throws where it says it returns.
 */

/** The meta row as SQLite reads it. */
function sqliteMeta(path: string): { lineage: Buffer; commitId: Buffer } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT lineage, commit_id FROM meta WHERE id = 1').get() as { lineage: Buffer; commit_id: Buffer };
    return { lineage: row.lineage, commitId: row.commit_id };
  } finally {
    db.close();
  }
}

/** The file's pages, counting those read. */
function counted(path: string): { source: PageSource; reads: () => number; close: () => void } {
  const fd = openSync(path, 'r');
  const pages = pagesOf(fd, 4096);
  let reads = 0;
  return {
    source: { pageSize: pages.pageSize, page: (n) => (reads++, pages.page(n)) },
    reads: () => reads,
    close: () => closeSync(fd),
  };
}

/**
 * A crashed data dir, as a kill -9 leaves it: kb.db with `checkpointed` namespaces in it, and a -wal (copied while the
 * store still held it) with `logged` more commits after them. Returns the dir and the files' bytes.
 */
async function crashed(checkpointed: number, logged: number): Promise<{ dir: string; db: Buffer; wal: Buffer }> {
  const live = tempDir('kb-wal-live-');
  const store = SqliteStore.open(live);
  const org = await orgIdOf(store, 'acme');
  for (let i = 0; i < checkpointed; i++) await store.nsCreate(org, { key: `in-db-${i}`, description: null });
  const reader = new Database(join(live, 'kb.db'));
  reader.pragma('wal_checkpoint(TRUNCATE)');
  for (let i = 0; i < logged; i++) await store.nsCreate(org, { key: `in-log-${i}`, description: null });
  const dir = tempDir('kb-wal-');
  copyFileSync(join(live, 'kb.db'), join(dir, 'kb.db'));
  copyFileSync(join(live, 'kb.db-wal'), join(dir, 'kb.db-wal'));
  reader.close();
  await store.close();
  return { dir, db: readFileSync(join(dir, 'kb.db')), wal: readFileSync(join(dir, 'kb.db-wal')) };
}

describe('reading the meta row from the pages of a database file', () => {
  it('reads what SQLite reads, in a few pages of a database of thousands, however many tables its schema holds', async () => {
    const dir = tempDir('kb-pages-');
    const store = SqliteStore.open(dir);
    const org = await orgIdOf(store, 'acme');
    for (let i = 0; i < 40; i++) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => store.nsCreate(org, { key: `ns-${i}-${j}`, description: 'x'.repeat(200) })));
    }
    await store.close();
    const path = join(dir, 'kb.db');
    // A schema over several pages (an interior root on page 1), as a database with more tables would have.
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    for (let i = 0; i < 120; i++) db.exec(`CREATE TABLE extra_${i} (id INTEGER PRIMARY KEY, note TEXT DEFAULT '${'n'.repeat(60)}')`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();

    const { source, reads, close } = counted(path);
    try {
      const row = metaRow(source);
      const expected = sqliteMeta(path);
      expect(row?.lineage.equals(expected.lineage)).toBe(true);
      expect(row?.commitId?.equals(expected.commitId)).toBe(true);
      expect(row?.clean).toBe(true);
      // The schema's pages and the meta table's leaf: a handful, of a file of hundreds.
      expect(reads()).toBeLessThan(12);
    } finally {
      close();
    }
  });

  it('says undefined for a database without a meta table, and null for pages that are no database', () => {
    const dir = tempDir('kb-pages-');
    const path = join(dir, 'plain.db');
    const db = new Database(path);
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    const fd = openSync(path, 'r');
    try {
      expect(metaRow(pagesOf(fd, 4096))).toBeUndefined();
      expect(metaRow({ pageSize: 4096, page: () => Buffer.alloc(4096, 0xff) })).toBeNull();
      expect(metaRow({ pageSize: 4096, page: () => undefined })).toBeNull();
    } finally {
      closeSync(fd);
    }
  });

  it('says null, never throws, for a cell pointer past its page or any damage to the pages on the way to the row', async () => {
    const { dir } = await crashed(3, 0);
    const file = readFileSync(join(dir, 'kb.db'));
    const page = (bytes: Buffer) => (n: number) => (n * 4096 <= bytes.length ? bytes.subarray((n - 1) * 4096, n * 4096) : undefined);
    // Page 1's first cell pointer (after the 100-byte header and the 8-byte leaf header) pointing past the page.
    const pastEnd = Buffer.from(file);
    pastEnd.writeUInt16BE(0xfffe, 108);
    expect(metaRow({ pageSize: 4096, page: page(pastEnd) })).toBeNull();
    // Page 1 made an interior page whose right-most child is page 0, read from a file as at start (fast-check found it).
    const toPageZero = Buffer.from(file);
    toPageZero[100] = 0x05;
    toPageZero.writeUInt16BE(0, 103);
    toPageZero.writeUInt32BE(0, 108);
    // The meta table's root page shorter than a page header (a source that hands out a torn page).
    const torn = (n: number) => (n === 1 ? file.subarray(0, 4096) : Buffer.alloc(2));
    expect(metaRow({ pageSize: 4096, page: torn })).toBeNull();
    const damagedPath = join(dir, 'page-zero.db');
    writeFileSync(damagedPath, toPageZero);
    const fd = openSync(damagedPath, 'r');
    try {
      expect(metaRow(pagesOf(fd, 4096))).toBeNull();
    } finally {
      closeSync(fd);
    }
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(3 * 4096 - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 16 }), (flips) => {
        const damaged = Buffer.from(file);
        for (const [at, byte] of flips) damaged[at] = byte;
        const row = metaRow({ pageSize: 4096, page: page(damaged) });
        expect(row === null || row === undefined || Buffer.isBuffer(row.lineage)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the frames SQLite replays', () => {
  it('stops at a torn frame, keeps only whole transactions, and reads no frame of a log restarted under new salts', async () => {
    const { wal } = await crashed(0, 4);
    const whole = committedFrames(wal);
    expect(whole?.pageSize).toBe(4096);
    const frames = whole?.frames ?? [];
    expect(frames.length).toBeGreaterThan(4);
    // Torn: the last frame's page cut short, or its bytes changed: the transaction it ends is not replayed.
    const last = frames[frames.length - 1] as { at: number };
    const commits = frames.filter((frame) => frame.commit !== 0).length;
    const cut = committedFrames(wal.subarray(0, last.at + 24 + 100));
    expect(cut?.frames.filter((frame) => frame.commit !== 0)).toHaveLength(commits - 1);
    const flipped = Buffer.from(wal);
    flipped[last.at + 74] = (flipped[last.at + 74] as number) ^ 0xff;
    expect(committedFrames(flipped)?.frames.filter((frame) => frame.commit !== 0)).toHaveLength(commits - 1);
    // A new header's salts (a log SQLite restarted after a checkpoint): the old frames after it are not this log's.
    const restarted = Buffer.from(wal);
    restarted.writeUInt32BE(restarted.readUInt32BE(16) + 1, 16);
    expect(committedFrames(restarted)).toBeUndefined();
    expect(committedFrames(Buffer.alloc(10))).toBeUndefined();
  });

  it('reads only the new frames of a log SQLite restarted after a checkpoint, with the old ones still past them', async () => {
    const dir = tempDir('kb-wal-restart-');
    const store = SqliteStore.open(dir);
    const org = await orgIdOf(store, 'acme');
    for (let i = 0; i < 6; i++) await store.nsCreate(org, { key: `first-${i}`, description: 'x'.repeat(500) });
    const before = committedFrames(readFileSync(join(dir, 'kb.db-wal')))?.frames.length ?? 0;
    const reader = new Database(join(dir, 'kb.db'));
    reader.pragma('wal_checkpoint(PASSIVE)');
    reader.close();
    await store.nsCreate(org, { key: 'after-restart', description: null });
    const log = readFileSync(join(dir, 'kb.db-wal'));
    const after = committedFrames(log)?.frames ?? [];
    // The file still holds the old frames, under the old salts: they are not read.
    expect(log.length).toBeGreaterThan(32 + after.length * (24 + 4096));
    expect(after.length).toBeGreaterThan(0);
    expect(after.length).toBeLessThan(before);
    expect(logMismatch(join(dir, 'kb.db'))).toBeUndefined();
    await store.close();
  });

  it('decides on a log whose database shrank (frames of pages past its new end), as SQLite replays it', async () => {
    const dir = tempDir('kb-wal-shrunk-');
    const store = SqliteStore.open(dir);
    const org = await orgIdOf(store, 'acme');
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.nsCreate(org, { key: `big-${i}`, description: 'y'.repeat(900) })));
    await store.close();
    const db = new Database(join(dir, 'kb.db'));
    db.pragma('journal_mode = WAL');
    // The change log's rows too: the store wrote them after the namespaces, at the end of the file.
    db.exec("DELETE FROM namespaces; DELETE FROM change_log; UPDATE meta SET prev_id = commit_id, commit_id = randomblob(16)");
    db.exec('UPDATE meta SET prev_id = commit_id, commit_id = randomblob(16)');
    db.exec('VACUUM');
    const log = readFileSync(join(dir, 'kb.db-wal'));
    const file = readFileSync(join(dir, 'kb.db'));
    db.close();
    const copy = tempDir('kb-wal-shrunk-copy-');
    writeFileSync(join(copy, 'kb.db'), file);
    writeFileSync(join(copy, 'kb.db-wal'), log);
    const frames = committedFrames(log)?.frames ?? [];
    const last = frames[frames.length - 1];
    expect(frames.some((frame) => last !== undefined && frame.page > last.commit)).toBe(true);
    expect(logMismatch(join(copy, 'kb.db'))).toBeUndefined();
  });

});

describe('whether a -wal continues kb.db', () => {
  it("accepts its own database's log, whole or checkpointed up to any of its commits", async () => {
    const { dir, db, wal } = await crashed(2, 3);
    expect(logMismatch(join(dir, 'kb.db'))).toBeUndefined();
    // The same log beside the kb.db a checkpoint made of it (replayed again, it changes nothing).
    const copy = new Database(join(dir, 'kb.db'));
    copy.pragma('wal_checkpoint(PASSIVE)');
    copy.close();
    writeFileSync(join(dir, 'kb.db-wal'), wal);
    expect(readFileSync(join(dir, 'kb.db')).equals(db)).toBe(false);
    expect(logMismatch(join(dir, 'kb.db'))).toBeUndefined();
  });

  it('refuses the log of a fork: two copies of one kb.db, each written, one stopped cleanly, the other\'s -wal beside it', async () => {
    const { dir, db } = await crashed(1, 0);
    const fork = async (key: string) => {
      const copy = tempDir('kb-wal-fork-');
      writeFileSync(join(copy, 'kb.db'), db);
      writeFileSync(join(copy, 'kb.db-wal'), readFileSync(join(dir, 'kb.db-wal')));
      const store = SqliteStore.open(copy);
      await store.nsCreate(await orgIdOf(store, 'acme'), { key, description: null });
      // The log as a crash would leave it; kb.db as a clean stop leaves it, with the fork's write checkpointed in.
      const wal = readFileSync(join(copy, 'kb.db-wal'));
      await store.close();
      return { db: readFileSync(join(copy, 'kb.db')), wal };
    };
    const a = await fork('only-a');
    const b = await fork('only-b');
    const mixed = tempDir('kb-wal-mixed-');
    writeFileSync(join(mixed, 'kb.db'), a.db);
    writeFileSync(join(mixed, 'kb.db-wal'), b.wal);
    expect(logMismatch(join(mixed, 'kb.db'))).toMatch(/continues another copy of this database/);
  });

  it("refuses another database's log, and an older log of its own", async () => {
    const one = await crashed(1, 2);
    const other = await crashed(1, 2);
    writeFileSync(join(one.dir, 'kb.db-wal'), other.wal);
    expect(logMismatch(join(one.dir, 'kb.db'))).toBe('it was written by another database');
    // kb.db checkpointed past the log: the log is older.
    const db = new Database(join(other.dir, 'kb.db'));
    db.pragma('journal_mode = WAL');
    db.exec('UPDATE meta SET prev_id = commit_id, commit_id = randomblob(16), generation = generation + 1');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    writeFileSync(join(other.dir, 'kb.db-wal'), other.wal);
    expect(logMismatch(join(other.dir, 'kb.db'))).toBe('it is older than kb.db');
  });

  it("refuses a log that never writes kb.db's meta page (another database, laid out otherwise), though kb.db's own row reads through it", async () => {
    const { dir } = await crashed(1, 0);
    const path = join(dir, 'kb.db');
    const metaPage = (new Database(path, { readonly: true }).prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'meta'").get() as { rootpage: number }).rootpage;
    // Another database, of kb.db's page size, whose one transaction rewrites a page that is neither page 1 nor
    // kb.db's meta page: its log, copied while its connection holds it.
    const otherDir = tempDir('kb-wal-other-');
    const other = new Database(join(otherDir, 'other.db'));
    other.pragma('page_size = 4096');
    other.pragma('journal_mode = WAL');
    other.exec(`CREATE TABLE pad (v TEXT); CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('${'a'.repeat(100)}')`);
    other.pragma('wal_checkpoint(TRUNCATE)');
    const tPage = (other.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 't'").get() as { rootpage: number }).rootpage;
    expect([1, metaPage]).not.toContain(tPage);
    other.exec(`UPDATE t SET v = '${'b'.repeat(100)}'`);
    const log = readFileSync(join(otherDir, 'other.db-wal'));
    other.close();
    expect(committedFrames(log)?.frames.map((frame) => frame.page)).toEqual([tPage]);
    writeFileSync(`${path}-wal`, log);
    expect(logMismatch(path)).toBe("its commits do not write kb.db's meta row, as every commit of kb does");
  });

  it('never throws on a damaged log or kb.db: it answers with a reason or undefined', async () => {
    const { dir, db, wal } = await crashed(1, 3);
    const path = join(dir, 'kb.db');
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        (inLog, flips, cut) => {
          const target = Buffer.from(inLog ? wal : db);
          for (const [at, byte] of flips) target[at % target.length] = byte;
          writeFileSync(inLog ? `${path}-wal` : path, cut === undefined ? target : target.subarray(0, cut % target.length));
          writeFileSync(inLog ? path : `${path}-wal`, inLog ? db : wal);
          const verdict = logMismatch(path);
          expect(verdict === undefined || typeof verdict === 'string').toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
