import type { Stats } from 'node:fs';
import { ConfigTrustError } from './errors.js';

const GROUP_WRITE = 0o020;
const OTHER_WRITE = 0o002;
const GROUP_READ = 0o040;
const OTHER_READ = 0o004;

/** The mode each kind is created with, and what `chmod` restores. */
const SAFE_MODE = { file: '600', directory: '700' } as const;

export type Kind = keyof typeof SAFE_MODE;

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/** Who besides the owner the bits name: "group", "others" or "group and others". */
function whom(mode: number, groupBit: number, otherBit: number): string | undefined {
  const who = [(mode & groupBit) !== 0 ? 'group' : undefined, (mode & otherBit) !== 0 ? 'others' : undefined].filter(Boolean);
  return who.length === 0 ? undefined : who.join(' and ');
}

/** A path as a shell word, so the command in a message can be pasted as it is. */
export function shellWord(path: string): string {
  return /^[\w./@%+:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

const WHY = 'Whoever can change it could point a profile at their own server and collect your token.';

/**
 * ssh's StrictModes for the config: a file or directory owned by another user (root aside), or writable by group
 * or others, throws ConfigTrustError. Returns a warning when a file is readable by group or others. Where there
 * are no uids (Windows), there is nothing to check.
 */
export function checkTrust(path: string, stats: Stats, kind: Kind, uid: number | undefined = process.getuid?.()): string | undefined {
  if (uid === undefined) return undefined;
  const word = shellWord(path);
  if (stats.uid !== uid && stats.uid !== 0) {
    throw new ConfigTrustError(
      path,
      `the config ${kind} ${path} belongs to uid ${stats.uid}, not to you (uid ${uid}): kb does not use it`,
      `${WHY} Remove it, or set KB_CONFIG_DIR to a directory of your own; if it is yours, take it back with ` +
        `\`sudo chown ${uid} ${word} && chmod ${SAFE_MODE[kind]} ${word}\`.`,
    );
  }
  const writers = whom(stats.mode, GROUP_WRITE, OTHER_WRITE);
  if (writers !== undefined) {
    throw new ConfigTrustError(
      path,
      `the config ${kind} ${path} is writable by ${writers} (mode ${octal(stats.mode)}): kb does not use it until you run \`chmod ${SAFE_MODE[kind]} ${word}\``,
      WHY,
    );
  }
  const readers = kind === 'file' ? whom(stats.mode, GROUP_READ, OTHER_READ) : undefined;
  if (readers !== undefined) {
    return `the config file ${path} is readable by ${readers} (mode ${octal(stats.mode)}) and holds tokens: run \`chmod 600 ${word}\``;
  }
  return undefined;
}
