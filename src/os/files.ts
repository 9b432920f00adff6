import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p`, one level at a time, each level it makes with `mode`; a directory that exists (or that another process
 * makes meanwhile) is left as it is. Node's own recursive mkdirSync never returns when a level cannot be made under a
 * parent that exists, with ENOENT (as under /proc): kb hung there, deaf to signals.
 */
export function makeDirectories(dir: string, mode: number): void {
  const parent = dirname(dir);
  if (parent !== dir && !existsSync(parent)) makeDirectories(parent, mode);
  try {
    mkdirSync(dir, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
  }
}
