import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Whose write-ahead log is it? SQLite replays any -wal whose header and frame checksums are valid onto whatever kb.db
 * sits beside it; kb can tell, by its meta row (docs/contract.md, Files and start-up). Every write transaction gives the
 * row a new random commit id and keeps the one before as prev_id, so a log's commits form a chain: the log continues
 * kb.db exactly when kb.db's own commit id is in that chain (the log's first commit follows it, or a checkpoint copied
 * the log into kb.db up to one of its commits). This module makes that one decision, `logMismatch`.
 *
 * Everything is read in memory, so that a refusal leaves every file as it was (SQLite's first connection would rebuild
 * the -shm from the log). Of kb.db only the pages on the way to the meta row are read: the first page (the schema's
 * root), the schema's and the meta table's b-tree pages; what this small reader does not expect (an overflowing record,
 * a page of an unknown kind, a pointer past its page, a cycle) reads as "cannot read", and the database is then read
 * whole through SQLite instead.
 */

/** The two magic numbers of a -wal header (big- and little-endian checksums). */
const WAL_MAGIC = [0x377f0682, 0x377f0683];

/** kb's meta row. `commitId` and `clean` are undefined in a database from before kb kept commit chains. */
export interface Meta {
  lineage: Buffer;
  generation: number;
  commitId: Buffer | undefined;
  prevId: Buffer | undefined;
  /** Whether the database was closed by its last connection with everything in kb.db (no -wal needed). */
  clean: boolean | undefined;
  /** The kb serve that has it open (JSON: pid, data dir, the -wal's and -shm's device and inode), or undefined. */
  holder: string | undefined;
}

/** Where a page of the database comes from: the log's last copy of it among the frames replayed, else the file. */
export interface PageSource {
  pageSize: number;
  page(number: number): Buffer | undefined;
}

export interface Frame {
  page: number;
  /** The database's size in pages after this frame, on the last frame of a transaction; else 0. */
  commit: number;
  /** Where the frame starts in the log (its 24-byte header, then the page). */
  at: number;
}

/** The pages of the file `fd`, with `frames` of `log` replayed over them. */
export function pagesOf(fd: number, pageSize: number, log?: Buffer, frames: readonly Frame[] = []): PageSource {
  const latest = new Map<number, number>();
  for (const frame of frames) latest.set(frame.page, frame.at);
  return {
    pageSize,
    page(number) {
      const at = latest.get(number);
      if (at !== undefined && log !== undefined) return log.subarray(at + 24, at + 24 + pageSize);
      const page = Buffer.alloc(pageSize);
      const read = readSync(fd, page, 0, pageSize, (number - 1) * pageSize);
      return read === pageSize ? page : undefined;
    },
  };
}

/** A SQLite varint at `at`: its value and its length in bytes, or undefined past the end of `data`. */
function varint(data: Buffer, at: number): [number, number] | undefined {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = data[at + i];
    if (byte === undefined) return undefined;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  const last = data[at + 8];
  return last === undefined ? undefined : [value * 256 + last, 9];
}

type Value = null | number | bigint | string | Buffer;

/** The values of a record (SQLite's record format), or undefined when it is not one this reader knows. */
function record(payload: Buffer): Value[] | undefined {
  const head = varint(payload, 0);
  if (head === undefined) return undefined;
  const [headerSize, first] = head;
  const types: number[] = [];
  for (let at = first; at < headerSize; ) {
    const type = varint(payload, at);
    if (type === undefined) return undefined;
    types.push(type[0]);
    at += type[1];
  }
  const values: Value[] = [];
  let at = headerSize;
  for (const type of types) {
    if (type === 0) values.push(null);
    else if (type >= 1 && type <= 6) {
      const size = [1, 2, 3, 4, 6, 8][type - 1] as number;
      if (at + size > payload.length) return undefined;
      values.push(size === 8 ? payload.readBigInt64BE(at) : payload.readIntBE(at, size));
      at += size;
    } else if (type === 8 || type === 9) values.push(type - 8);
    else if (type >= 12) {
      const size = Math.floor((type - 12) / 2);
      if (at + size > payload.length) return undefined;
      const bytes = payload.subarray(at, at + size);
      values.push(type % 2 === 0 ? Buffer.from(bytes) : bytes.toString('utf8'));
      at += size;
    } else return undefined;
  }
  return values;
}

/**
 * Every record of a table b-tree, leaf by leaf, or undefined when a page is not what a table b-tree holds, a pointer
 * leads past its page, a record overflows its page, or a page is seen twice.
 */
function tableRecords(source: PageSource, root: number, usable: number): Value[][] | undefined {
  const rows: Value[][] = [];
  const seen = new Set<number>();
  const visit = (number: number): boolean => {
    // Page numbers start at 1: a damaged pointer to page 0 would read before the file's start.
    if (number < 1 || seen.has(number) || seen.size > 64) return false;
    seen.add(number);
    const page = source.page(number);
    const start = number === 1 ? 100 : 0;
    if (page === undefined || page.length < start + 12) return false;
    const kind = page[start];
    const cells = page.readUInt16BE(start + 3);
    const pointers = start + (kind === 0x05 ? 12 : 8);
    if (pointers + 2 * cells > page.length) return false;
    const cell = (i: number): number | undefined => {
      const at = page.readUInt16BE(pointers + 2 * i);
      return at < pointers + 2 * cells || at + 4 > page.length ? undefined : at;
    };
    if (kind === 0x05) {
      for (let i = 0; i < cells; i++) {
        const at = cell(i);
        if (at === undefined || !visit(page.readUInt32BE(at))) return false;
      }
      return visit(page.readUInt32BE(start + 8));
    }
    if (kind !== 0x0d) return false;
    for (let i = 0; i < cells; i++) {
      let at = cell(i);
      if (at === undefined) return false;
      const size = varint(page, at);
      if (size === undefined) return false;
      at += size[1];
      const rowid = varint(page, at);
      if (rowid === undefined) return false;
      at += rowid[1];
      if (size[0] > usable - 35 || at + size[0] > page.length) return false;
      const values = record(page.subarray(at, at + size[0]));
      if (values === undefined) return false;
      rows.push(values);
    }
    return true;
  };
  return visit(root) ? rows : undefined;
}

function blob(value: Value | undefined): Buffer | undefined {
  return Buffer.isBuffer(value) ? value : undefined;
}

function integer(value: Value | undefined): number | undefined {
  return typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : undefined;
}

/** The meta row from its columns in table order (id, lineage, generation, commit_id, prev_id, clean, holder). */
function metaOf(row: readonly Value[]): Meta | null {
  const lineage = blob(row[1]);
  if (lineage === undefined) return null;
  // A row written before the chain's columns were added has fewer values: they read as their defaults.
  const hasChain = row.length > 3;
  return {
    lineage,
    generation: integer(row[2]) ?? 0,
    commitId: blob(row[3]),
    prevId: blob(row[4]),
    clean: hasChain ? integer(row[5]) === 1 : undefined,
    holder: typeof row[6] === 'string' ? row[6] : undefined,
  };
}

/** The meta row and the page it is on (the meta table's root: its one row never needs a second page). */
interface MetaAt {
  meta: Meta;
  page: number;
}

/** kb's meta row as these pages hold it: undefined when there is no meta table, null when it cannot be read. */
export function metaRow(source: PageSource): Meta | undefined | null {
  const at = metaRowAt(source);
  return at && (at.meta ?? null);
}

function metaRowAt(source: PageSource): { meta: Meta | null; page: number } | undefined | null {
  const first = source.page(1);
  if (first === undefined || first.length < 108) return null;
  const usable = source.pageSize - (first[20] as number);
  const schema = tableRecords(source, 1, usable);
  if (schema === undefined) return null;
  const meta = schema.find((row) => row[0] === 'table' && row[1] === 'meta');
  if (meta === undefined) return undefined;
  const root = meta[3];
  if (typeof root !== 'number' || root < 2) return null;
  const row = tableRecords(source, root, usable)?.[0];
  return row === undefined ? null : { meta: metaOf(row), page: root };
}

/** The meta row of a database image, read by SQLite in memory: undefined without a meta table, null when unreadable. */
function metaOfImage(image: Buffer): Meta | undefined | null {
  const at = metaAtOfImage(image);
  return at && at.meta;
}

function metaAtOfImage(image: Buffer): MetaAt | undefined | null {
  let db: Database.Database | undefined;
  try {
    // An image is read as a database in rollback mode: SQLite opens no in-memory database in WAL mode.
    image[18] = 1;
    image[19] = 1;
    db = new Database(image);
    const table = db.prepare("SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get() as { rootpage: number } | undefined;
    if (table === undefined) return undefined;
    const row = db.prepare('SELECT * FROM meta WHERE id = 1').raw().get() as Value[] | undefined;
    const meta = row === undefined ? null : metaOf(row);
    return meta === null ? null : { meta, page: table.rootpage };
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

/** SQLite's -wal checksum: pairs of 32-bit words, in the byte order the log's magic number names. */
function walChecksum(data: Buffer, start: number, end: number, bigEndian: boolean, seed: [number, number]): [number, number] {
  let [s0, s1] = seed;
  for (let i = start; i < end; i += 8) {
    s0 = (s0 + (bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i)) + s1) >>> 0;
    s1 = (s1 + (bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4)) + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * The frames of a -wal that SQLite's recovery replays: those after a valid header that carry its salts and keep its
 * checksum chain, up to the last one that ends a transaction (wal.c, walIndexRecover). Undefined for no valid header.
 */
export function committedFrames(log: Buffer): { pageSize: number; frames: Frame[] } | undefined {
  if (log.length < 32 || !WAL_MAGIC.includes(log.readUInt32BE(0))) return undefined;
  const bigEndian = (log.readUInt32BE(0) & 1) === 1;
  const pageSize = log.readUInt32BE(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  let sum = walChecksum(log, 0, 24, bigEndian, [0, 0]);
  if (sum[0] !== log.readUInt32BE(24) || sum[1] !== log.readUInt32BE(28)) return undefined;
  const frames: Frame[] = [];
  let committed = 0;
  for (let at = 32; at + 24 + pageSize <= log.length; at += 24 + pageSize) {
    const page = log.readUInt32BE(at);
    if (page === 0 || !log.subarray(at + 8, at + 16).equals(log.subarray(16, 24))) break;
    sum = walChecksum(log, at, at + 8, bigEndian, sum);
    sum = walChecksum(log, at + 24, at + 24 + pageSize, bigEndian, sum);
    if (sum[0] !== log.readUInt32BE(at + 16) || sum[1] !== log.readUInt32BE(at + 20)) break;
    const commit = log.readUInt32BE(at + 4);
    frames.push({ page, commit, at });
    if (commit !== 0) committed = frames.length;
  }
  return { pageSize, frames: frames.slice(0, committed) };
}

/** The database as SQLite reads it with `frames` of its log replayed (the last one ends a transaction). */
function replayed(file: Buffer, log: Buffer, pageSize: number, frames: readonly Frame[]): Buffer {
  const pages = frames[frames.length - 1]?.commit ?? 0;
  const image = Buffer.alloc(pages * pageSize);
  file.copy(image, 0, 0, Math.min(file.length, image.length));
  for (const { page, at } of frames) {
    if (page <= pages) log.copy(image, (page - 1) * pageSize, at + 24, at + 24 + pageSize);
  }
  return image;
}

function pageSizeOf(header: Buffer): number {
  const raw = header.readUInt16BE(16);
  return raw === 1 ? 65536 : raw;
}

/** The frames up to the end of each transaction of the log, in order. */
function transactions(frames: readonly Frame[]): Frame[][] {
  const ends: Frame[][] = [];
  frames.forEach((frame, i) => {
    if (frame.commit !== 0) ends.push(frames.slice(0, i + 1));
  });
  return ends;
}

/**
 * The one decision: whether the log's chain of commits holds kb.db's own commit id. `metaAfter(frames)` reads the meta
 * row, and the page it is on, with those frames replayed (null: cannot be read, and the caller reads the database
 * whole). Only a meta row the log itself holds counts: every transaction kb writes rewrites the row, and a row read
 * from kb.db's own page (the log never wrote it, as a log of a database laid out otherwise would not) proves nothing.
 */
function decide(own: Meta, pageSize: number, filePageSize: number, log: Frame[][], metaAfter: (frames: Frame[]) => MetaAt | undefined | null): string | undefined | null {
  if (own.commitId === undefined) return undefined;
  if (pageSize !== filePageSize) return 'its pages are of another size';
  let last: Meta | undefined;
  for (const frames of log) {
    const at = metaAfter(frames);
    if (at === null) return null;
    if (at === undefined) return 'kb.db does not read with it as a kb database';
    if (!frames.some((frame) => frame.page === at.page)) continue;
    const { meta } = at;
    if ((last === undefined && meta.prevId?.equals(own.commitId)) || meta.commitId?.equals(own.commitId)) return undefined;
    last = meta;
  }
  if (last === undefined) return 'its commits do not write kb.db\'s meta row, as every commit of kb does';
  if (!last.lineage.equals(own.lineage)) return 'it was written by another database';
  if (last.generation < own.generation) return 'it is older than kb.db';
  return 'it continues another copy of this database (a later state of it, or a fork), not this kb.db';
}

/** kb.db's meta row as the file alone holds it (no log): undefined without a meta table, null when unreadable. */
export function fileMeta(path: string): Meta | undefined | null {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) < 100) return null;
    const meta = metaRow(pagesOf(fd, pageSizeOf(header)));
    return meta === null ? metaOfImage(readFileSync(path)) : meta;
  } finally {
    closeSync(fd);
  }
}

/**
 * Why the -wal beside kb.db at `path` is not kb.db's own, or undefined when it is, holds no commit, or cannot be told
 * (a database from before kb kept commit chains).
 */
export function logMismatch(path: string): string | undefined {
  const log = readFileSync(`${path}-wal`);
  const parsed = committedFrames(log);
  if (!parsed || parsed.frames.length === 0) return undefined;
  const { pageSize, frames } = parsed;
  const fd = openSync(path, 'r');
  let verdict: string | undefined | null = null;
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) === 100) {
      const own = metaRow(pagesOf(fd, pageSizeOf(header)));
      if (own === undefined) return undefined;
      if (own !== null) verdict = decide(own, pageSize, pageSizeOf(header), transactions(frames), (replay) => {
        const at = metaRowAt(pagesOf(fd, pageSize, log, replay));
        return at && (at.meta === null ? null : { meta: at.meta, page: at.page });
      });
    }
  } finally {
    closeSync(fd);
  }
  if (verdict !== null) return verdict;
  // What the page reader cannot read, SQLite reads: the database whole, replayed in memory commit by commit.
  const file = readFileSync(path);
  if (file.length < 100) return undefined;
  const own = metaOfImage(Buffer.from(file));
  if (!own) return undefined;
  return decide(own, pageSize, pageSizeOf(file), transactions(frames), (replay) => metaAtOfImage(replayed(file, log, pageSize, replay)) ?? undefined) ?? undefined;
}
