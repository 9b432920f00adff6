import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { shellQuote } from '../os/shell.js';

/**
 * How to run this kb in a hint it prints ("try `kb ns list`"): `kb` when that name on PATH is this very kb, else the
 * path of the script that runs it (`./bin/run.js` in a clone that is not on PATH, say), so that the hint works as
 * printed: a bare `kb` there could run another program of that name, or none.
 */
export function kbCommand(searchPath: string | undefined, script: string | undefined = process.argv[1]): string {
  if (script === undefined) return 'kb';
  let self: string;
  try {
    self = realpathSync(script);
  } catch {
    return 'kb';
  }
  // The first `kb` on PATH is the one a shell runs.
  for (const dir of (searchPath ?? '').split(delimiter)) {
    if (dir === '') continue;
    let found: string;
    try {
      found = realpathSync(join(dir, 'kb'));
    } catch {
      continue;
    }
    if (found === self) return 'kb';
    break;
  }
  return shellQuote(self);
}
