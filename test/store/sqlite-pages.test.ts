import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { metaRow, pagesOf, type PageSource } from '../../src/store/sqlite-pages.js';
import { tempDir } from '../helpers/temp.js';

/** The meta row as SQLite reads it. */
function sqliteMeta(path: string): { id: Buffer; generation: number } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT lineage, generation FROM meta WHERE id = 1').get() as { lineage: Buffer; generation: number };
    return { id: row.lineage, generation: row.generation };
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

describe('reading the meta row from the pages of a database file', () => {
  it('reads what SQLite reads, in a few pages of a database of thousands, however many tables its schema holds', async () => {
    const dir = tempDir('kb-pages-');
    const store = SqliteStore.open(dir);
    const org = 1;
    await store.createToken('acme', 'tok_pages', Buffer.alloc(32, 1));
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
      expect(row).toEqual(sqliteMeta(path));
      expect((row as { generation: number }).generation).toBeGreaterThan(40);
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
});
