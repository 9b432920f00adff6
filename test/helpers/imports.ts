import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, runKb, type RunResult } from './cli.js';
import { tempDir } from './temp.js';

/**
 * Runs the built kb and lists the sources it loaded. dist/ is bundled (scripts/build.mjs), so a loaded dist file
 * stands for the sources it holds, as listed in dist/bundle-inputs.json (Ink, for one, is inside a
 * dist/chunks/tui-*.js); a module of the vendor bundle (scripts/vendor.mjs) is listed as it runs, by its source path;
 * anything else (an unbundled package, `vendor-cache:vendor:accepted`) is listed as itself.
 */
export async function runRecordingSources(
  args: string[],
  env: NodeJS.ProcessEnv,
  /** More of Node's options for the run, e.g. --cpu-prof. */
  nodeOptions = '',
): Promise<{ result: RunResult; sources: string[] }> {
  const log = join(tempDir('kb-imports-'), 'imports.log');
  const result = await runKb(args, {
    env: { ...env, KB_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/record-imports.mjs')} ${nodeOptions}`.trim() },
  });
  const bundles = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
  const dist = join(ROOT, 'dist') + '/';
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((entry) => (entry.startsWith('file:') ? fileURLToPath(entry) : entry.startsWith('bundled:') ? entry.slice('bundled:'.length) : entry));
  const sources = files.flatMap((file) => {
    if (!file.startsWith(dist)) return [file];
    const inputs = bundles[file.slice(dist.length)];
    if (inputs === undefined) throw new Error(`${file} is not in dist/bundle-inputs.json: is the build stale?`);
    return inputs;
  });
  return { result, sources: [...new Set(sources)] };
}
