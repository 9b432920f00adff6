// Writes docs/openapi.json from the zod schemas of src/api: node --import tsx scripts/gen-openapi.ts
// With --check, writes nothing and exits 1 when the committed file is not current.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/api/openapi.js';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // A missing file is not current either.
  }
  if (committed !== text) {
    process.stderr.write('docs/openapi.json is not current: run node --import tsx scripts/gen-openapi.ts\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  process.stderr.write(`wrote ${target}\n`);
}
