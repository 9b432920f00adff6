/**
 * Input kb reads whole (a file to apply, a body for `kb api`, a token on stdin): at most MAX_INPUT_BYTES, and UTF-8
 * text. Without the limit `kb apply -f /dev/zero` or `yes | kb apply -f -` filled memory until V8 gave up; without
 * the check, a Latin-1 file's accented letters were sent as U+FFFD, changing descriptions without a word.
 */
import { createReadStream } from 'node:fs';
import { formatBytes } from '../client/errors.js';
import { UsageError } from './errors.js';

/** 64 MiB: far above any body the server takes (1 MiB) or a resources file of 100,000 namespaces (~10 MiB). */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** The bytes of a stream, or undefined as soon as there are more than `limit` (the rest is not read). */
async function readAtMost(stream: AsyncIterable<Uint8Array | string>, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    length += bytes.length;
    // Leaving the loop destroys the stream: nothing more is read.
    if (length > limit) return undefined;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, length);
}

function text(bytes: Buffer | undefined, what: string, limit: number): string {
  if (bytes === undefined) {
    throw new UsageError(`${what} is larger than ${formatBytes(limit)}: kb reads at most that much input`);
  }
  try {
    // A byte order mark, as some editors write one, is dropped.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${what} is not UTF-8 text`, 'Convert it first, e.g. with `iconv -f LATIN1 -t UTF-8`.');
  }
}

/** All of stdin as text; a usage error past the limit or for bytes that are not UTF-8. */
export async function readStdinText(limit = MAX_INPUT_BYTES): Promise<string> {
  return text(await readAtMost(process.stdin, limit), 'stdin', limit);
}

/** A file as text, for `flag`: a usage error naming the flag and the file when it cannot be read, is too large or is not UTF-8. */
export async function readFileText(path: string, flag: string, limit = MAX_INPUT_BYTES): Promise<string> {
  let bytes: Buffer | undefined;
  try {
    bytes = await readAtMost(createReadStream(path), limit);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new UsageError(`Cannot read ${flag} ${path}: ${reason}`);
  }
  return text(bytes, `${flag} ${path}`, limit);
}
