/** What the operating system's errors mean, in words: the config's files and the CLI's output say it alike. */

/** The errno code of a system error (`ENOSPC`), or undefined for anything else. */
export function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : undefined;
}

const PHRASES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the filesystem is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  ENOTDIR: 'a part of the path is not a directory',
  EEXIST: 'it exists and is not a directory',
  EISDIR: 'it is a directory',
  EIO: 'an I/O error',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long',
  EPIPE: 'the reader has gone',
  EBADF: 'it is not open',
  EAGAIN: 'it would block',
};

/** A system error in words, with its code; never the raw message, which repeats the path and says little more. */
export function describeSystemError(error: unknown): string {
  const code = errno(error);
  if (code === undefined) return (error as Error).message;
  return `${PHRASES[code] ?? (error as Error).message.split(',')[0]} (${code})`;
}
