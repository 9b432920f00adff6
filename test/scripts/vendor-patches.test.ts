import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inkUnknownKeyName } from '../../scripts/ink-input.mjs';
import { buildVendor, checkPatches, PATCH_RULES } from '../../scripts/vendor.mjs';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('the patches of the vendor bundles (scripts/vendor.mjs) check themselves', () => {
  it('applies every rule to the installed packages, and says how often', async () => {
    const { applied } = await buildVendor(ROOT, join(tempDir('kb-vendor-'), 'dist'));
    expect(PATCH_RULES.filter((rule) => !((applied[rule] ?? 0) > 0))).toEqual([]);
    // Each kind of patch is counted: the lazy modules, oclif's WSL probe, conf's ajv, the sort, llhttp, Ink, import().
    for (const kind of ['LAZY_MODULES[', 'wslLean', 'confLean ', 'plainSort', 'baselineLlhttp', 'inkWithoutDevtools', 'inkUnknownKeyName', 'DYNAMIC_IMPORT ']) {
      expect(PATCH_RULES.some((rule) => rule.startsWith(kind)), kind).toBe(true);
    }
  }, 120_000);

  it('fails the build, naming each rule that changed nothing, when a target has moved', () => {
    const counts = new Map(PATCH_RULES.map((rule) => [rule, 1]));
    expect(() => checkPatches(counts)).not.toThrow();
    counts.set('wslLean', 0);
    counts.delete('LAZY_MODULES[0]');
    counts.delete('DYNAMIC_IMPORT @oclif/core/lib/module-loader.js');
    expect(() => checkPatches(counts)).toThrow(/changed nothing.*LAZY_MODULES\[0\] \(\.\/client-h2\.js from .*\); wslLean; DYNAMIC_IMPORT @oclif\/core\/lib\/module-loader\.js/);
  });

  it("fails the build when Ink's key parser no longer reads as the fix of unknown key names expects", () => {
    const path = '/x/node_modules/ink/build/parse-keypress.js';
    expect(inkUnknownKeyName(path, 'a; key.name = keyName[code]; b')).toBe("a; key.name = keyName[code] ?? ''; b");
    expect(() => inkUnknownKeyName(path, 'key.name = keyName[code] || "";')).toThrow(/no longer names keys as scripts\/ink-input\.mjs expects/);
    expect(inkUnknownKeyName('/x/node_modules/ink/build/other.js', 'anything')).toBe('anything');
  });
});
