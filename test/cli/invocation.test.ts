import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kbCommand } from '../../src/cli/invocation.js';
import { tempDir } from '../helpers/temp.js';

/** A kb install and PATH directories around it, in a directory of the test's own. */
function layout() {
  const root = tempDir('kb-invocation-');
  const script = join(root, 'my kb', 'bin', 'run.js');
  mkdirSync(join(root, 'my kb', 'bin'), { recursive: true });
  writeFileSync(script, '#!/usr/bin/env node\n');
  const bin = (name: string) => {
    const dir = join(root, name);
    mkdirSync(dir);
    return dir;
  };
  return { root, script, bin };
}

describe('kbCommand: how a hint names this kb', () => {
  it('is kb when the first kb on PATH is this one (through links, as ~/.local/bin/kb and npx make it)', () => {
    const { script, bin } = layout();
    const local = bin('local-bin');
    symlinkSync(script, join(local, 'kb'));
    expect(kbCommand([bin('empty'), local].join(delimiter), script)).toBe('kb');
    expect(kbCommand(local, join(local, 'kb'))).toBe('kb');
  });

  it('is the script\'s path, quoted for a shell, when kb is not on PATH or PATH finds another kb first', () => {
    const { script, bin } = layout();
    expect(kbCommand(undefined, script)).toBe(`'${script}'`);
    const other = bin('other');
    writeFileSync(join(other, 'kb'), '#!/bin/sh\n');
    const local = bin('local-bin');
    symlinkSync(script, join(local, 'kb'));
    expect(kbCommand([other, local].join(delimiter), script)).toBe(`'${script}'`);
  });
});
