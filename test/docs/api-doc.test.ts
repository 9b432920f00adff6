import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { apiMarkdown } from '../../scripts/api-markdown.js';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { ROOT } from '../helpers/cli.js';

it('docs/api.md is what `npm run openapi` writes from the OpenAPI document', () => {
  expect(readFileSync(`${ROOT}docs/api.md`, 'utf8')).toBe(apiMarkdown(JSON.parse(JSON.stringify(buildOpenApiDocument()))));
});

it('the README and the docs link only inside the repository', () => {
  for (const file of ['README.md', 'docs/api.md', 'docs/commands.md']) {
    const text = readFileSync(`${ROOT}${file}`, 'utf8');
    expect(text, file).not.toMatch(/\.\.\/shared|\]\(\.\.\//);
  }
});
