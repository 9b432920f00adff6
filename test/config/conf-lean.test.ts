import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { confLean } from '../../scripts/conf-lean.mjs';
import type * as ConfigModule from '../../src/config/index.js';
import { removeTempDirs, ROOT, tempDirFor } from './helpers.js';

afterAll(removeTempDirs);

/** src/config bundled as scripts/build.mjs bundles it, with or without the conf-lean plugin. */
async function bundleConfig(lean: boolean): Promise<{ module: typeof ConfigModule; inputs: string[] }> {
  const out = join(tempDirFor('kb-conf-lean-'), 'config.mjs');
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'src/config/index.ts')],
    outfile: out,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    logLevel: 'silent',
    banner: { js: "import { createRequire as __kbRequire } from 'node:module'; const require = __kbRequire(import.meta.url);" },
    plugins: lean ? [confLean] : [],
  });
  const inputs = Object.keys(result.metafile.inputs);
  return { module: (await import(pathToFileURL(out).href)) as typeof ConfigModule, inputs };
}

const packages = (inputs: string[], name: string) => inputs.filter((input) => input.startsWith(`node_modules/${name}/`));

describe('conf bundled without ajv (scripts/conf-lean.mjs), which kb never uses', () => {
  it('leaves ajv and ajv-formats out of the built CLI, and keeps conf', () => {
    const outputs = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-inputs.json'), 'utf8')) as Record<string, string[]>;
    const inputs = Object.values(outputs).flat();
    expect(packages(inputs, 'conf').length).toBeGreaterThan(0);
    expect([...packages(inputs, 'ajv'), ...packages(inputs, 'ajv-formats')]).toEqual([]);
  });

  it('bundles them without the plugin, so the first test can fail', async () => {
    const { inputs } = await bundleConfig(false);
    expect(packages(inputs, 'ajv').length).toBeGreaterThan(0);
    expect(packages(inputs, 'ajv-formats').length).toBeGreaterThan(0);
  });

  it('still reads, saves and refuses a broken file through conf when bundled lean', async () => {
    const { module, inputs } = await bundleConfig(true);
    expect([...packages(inputs, 'ajv'), ...packages(inputs, 'ajv-formats')]).toEqual([]);
    const dir = join(tempDirFor('kb-conf-lean-'), 'kb');
    const store = new module.ProfileStore({ dir });
    expect(await store.saveProfile('work', { url: 'http://w.example', token: 'kbt_work' })).toEqual({ isDefault: true, replaced: false });
    expect((await store.read()).profiles.get('work')).toEqual({ url: 'http://w.example', token: 'kbt_work' });
    await store.logout('work');
    expect((await store.read()).profiles.get('work')).toEqual({ url: 'http://w.example' });
    const broken = join(tempDirFor('kb-conf-lean-'), 'kb');
    await new module.ProfileStore({ dir: broken }).saveProfile('x', { url: 'http://x.example' });
    writeFileSync(join(broken, 'config.json'), '{"profiles": 3}');
    await expect(new module.ProfileStore({ dir: broken }).read()).rejects.toMatchObject({ code: 'config_invalid' });
  });
});
