import { UsageError } from './errors.js';

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, kib: 2 ** 10, mb: 1e6, mib: 2 ** 20, gb: 1e9, gib: 2 ** 30 };

/** Accepts a number of bytes, or one with a unit: 500000, 512KiB, 64MiB, 1GB (KB, MB, GB are powers of 1000). */
export function parseByteSize(text: string, source: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const factor = UNITS[(match?.[2] ?? '').toLowerCase()];
  const bytes = match && factor !== undefined ? Math.floor(Number(match[1]) * factor) : Number.NaN;
  if (!(bytes >= 1) || !Number.isSafeInteger(bytes)) {
    throw new UsageError(`Invalid ${source} ${JSON.stringify(text)}: expected a size in bytes such as 1048576, 512KiB or 64MiB`);
  }
  return bytes;
}
