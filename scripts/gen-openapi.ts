// Writes docs/openapi.json from the zod schemas of src/api, and docs/api.md from it: node --import tsx scripts/gen-openapi.ts
// With --check, writes nothing and exits 1 when a committed file is not current.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/api/openapi.js';
import { apiMarkdown } from './api-markdown.js';

const doc = buildOpenApiDocument();
const files = [
  { target: fileURLToPath(new URL('../docs/openapi.json', import.meta.url)), text: `${JSON.stringify(doc, null, 2)}\n` },
  { target: fileURLToPath(new URL('../docs/api.md', import.meta.url)), text: apiMarkdown(JSON.parse(JSON.stringify(doc))) },
];

for (const { target, text } of files) {
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(target, 'utf8');
    } catch {
      // A missing file is not current either.
    }
    if (committed !== text) {
      process.stderr.write(`${target} is not current: run npm run openapi\n`);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(target, text);
    process.stderr.write(`wrote ${target}\n`);
  }
}
