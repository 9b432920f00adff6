// `oclif manifest` lists commands in the order the file system yields them, which differs between clones;
// sorting makes the committed manifest reproducible, so CI can fail on any real difference. scripts/build.mjs sorts the
// manifest it makes; run directly, this sorts oclif.manifest.json in place.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Sorts the commands of the manifest at `path` by id, in code-unit order; `place` may rewrite each command's path. */
export function sortManifest(path, place = (relativePath) => relativePath) {
  const manifest = JSON.parse(readFileSync(path, 'utf8'));
  for (const command of Object.values(manifest.commands)) command.relativePath = place(command.relativePath);
  manifest.commands = Object.fromEntries(Object.entries(manifest.commands).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) sortManifest(fileURLToPath(new URL('../oclif.manifest.json', import.meta.url)));
