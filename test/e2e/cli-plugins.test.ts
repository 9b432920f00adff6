import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { isolatedEnv, runKb } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

it('never runs a plugin that a package.json in the data dir names (oclif takes KB_DATA_DIR for its own data dir)', async () => {
  const dataDir = tempDir('kb-plugin-data-');
  const evil = join(dataDir, 'evil');
  mkdirSync(evil);
  const marker = join(dataDir, 'ran');
  writeFileSync(join(evil, 'index.js'), `import { writeFileSync } from 'node:fs';\nexport default async function () { writeFileSync(${JSON.stringify(marker)}, 'x'); process.stderr.write('PLUGIN RAN\\n'); }\n`);
  writeFileSync(join(evil, 'package.json'), JSON.stringify({ name: 'evil', version: '1.0.0', type: 'module', oclif: { hooks: { init: './index.js' } } }));
  writeFileSync(join(dataDir, 'package.json'), JSON.stringify({ oclif: { plugins: [{ type: 'link', name: 'evil', root: evil }, { type: 'user', name: 'evil' }] } }));
  const result = await runKb(['health'], { env: isolatedEnv({ KB_DATA_DIR: dataDir, KB_URL: 'http://127.0.0.1:1' }) });
  expect(result.code).toBe(6);
  expect(result.stderr).not.toContain('PLUGIN RAN');
  expect(result.stderr).not.toMatch(/evil/);
});
