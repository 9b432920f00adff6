import { readSync } from 'node:fs';

/**
 * Reads kb's meta row (lineage and generation) straight from the pages of a database file and its write-ahead log, as
 * SQLite would see them with the log replayed up to a given frame, reading only the pages on the way to the row: the
 * first page (the schema's root), the schema's and the meta table's b-tree pages. The check of a -wal (sqlite-open.ts)
 * then costs a few pages, not the size of the database. Anything this small reader does not expect (an overflowing
 * record, a page of an unknown kind, a cycle) gives undefined, and the caller reads the database whole instead.
 */

/** Where a page of the database comes from: the log's last copy of it among the frames replayed, else the file. */
export interface PageSource {
  pageSize: number;
  page(number: number): Buffer | undefined;
}

export interface LogFrame {
  page: number;
  /** Where the frame starts in the log (its 24-byte header, then the page). */
  at: number;
}

/** The pages of the file `fd`, with the first `frames` of `log` replayed over them. */
export function pagesOf(fd: number, pageSize: number, log?: Buffer, frames: readonly LogFrame[] = []): PageSource {
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

/** A SQLite varint at `at`: its value and its length in bytes. */
function varint(data: Buffer, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = data[at + i] as number;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  return [value * 256 + (data[at + 8] as number), 9];
}

type Value = null | number | bigint | string | Buffer;

/** The values of a record (SQLite's record format), or undefined when it is not one this reader knows. */
function record(payload: Buffer): Value[] | undefined {
  const [headerSize, first] = varint(payload, 0);
  const types: number[] = [];
  for (let at = first; at < headerSize; ) {
    const [type, length] = varint(payload, at);
    types.push(type);
    at += length;
  }
  const values: Value[] = [];
  let at = headerSize;
  for (const type of types) {
    if (type === 0) values.push(null);
    else if (type >= 1 && type <= 6) {
      const size = [1, 2, 3, 4, 6, 8][type - 1] as number;
      values.push(size === 8 ? payload.readBigInt64BE(at) : payload.readIntBE(at, size));
      at += size;
    } else if (type === 8 || type === 9) values.push(type - 8);
    else if (type >= 12) {
      const size = Math.floor((type - 12) / 2);
      const bytes = payload.subarray(at, at + size);
      values.push(type % 2 === 0 ? Buffer.from(bytes) : bytes.toString('utf8'));
      at += size;
    } else return undefined;
    if (at > payload.length) return undefined;
  }
  return values;
}

/**
 * Every record of a table b-tree, leaf by leaf, or undefined when a page is not what a table b-tree holds, a record
 * overflows its page, or a page is seen twice.
 */
function tableRecords(source: PageSource, root: number, usable: number): Value[][] | undefined {
  const rows: Value[][] = [];
  const seen = new Set<number>();
  const visit = (number: number): boolean => {
    if (seen.has(number) || seen.size > 64) return false;
    seen.add(number);
    const page = source.page(number);
    if (page === undefined) return false;
    const start = number === 1 ? 100 : 0;
    const kind = page[start];
    const cells = page.readUInt16BE(start + 3);
    if (kind === 0x05) {
      for (let i = 0; i < cells; i++) {
        const cell = page.readUInt16BE(start + 12 + 2 * i);
        if (!visit(page.readUInt32BE(cell))) return false;
      }
      return visit(page.readUInt32BE(start + 8));
    }
    if (kind !== 0x0d) return false;
    for (let i = 0; i < cells; i++) {
      let at = page.readUInt16BE(start + 8 + 2 * i);
      const [size, sizeLength] = varint(page, at);
      at += sizeLength;
      at += varint(page, at)[1];
      if (size > usable - 35 || at + size > page.length) return false;
      const values = record(page.subarray(at, at + size));
      if (values === undefined) return false;
      rows.push(values);
    }
    return true;
  };
  return visit(root) ? rows : undefined;
}

/** kb's lineage row as these pages hold it: undefined when there is no meta table, null when it cannot be read. */
export function metaRow(source: PageSource): { id: Buffer; generation: number } | undefined | null {
  const first = source.page(1);
  if (first === undefined) return null;
  const usable = source.pageSize - (first[20] as number);
  const schema = tableRecords(source, 1, usable);
  if (schema === undefined) return null;
  const meta = schema.find((row) => row[0] === 'table' && row[1] === 'meta');
  if (meta === undefined) return undefined;
  const root = meta[3];
  if (typeof root !== 'number' || root < 2) return null;
  const rows = tableRecords(source, root, usable);
  const row = rows?.[0];
  if (rows === undefined || row === undefined || !Buffer.isBuffer(row[1])) return null;
  const generation = row[2];
  return { id: row[1], generation: typeof generation === 'bigint' ? Number(generation) : typeof generation === 'number' ? generation : 0 };
}
