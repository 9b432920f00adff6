// `oclif manifest` lists commands in the order the file system yields them, which differs between clones;
// sorting makes the committed manifest reproducible, so CI can fail on any real difference.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../oclif.manifest.json', import.meta.url);
const manifest = JSON.parse(readFileSync(path, 'utf8'));
manifest.commands = Object.fromEntries(Object.entries(manifest.commands).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
