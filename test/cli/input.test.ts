import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { readFileText } from '../../src/cli/input.js';
import { tempDir } from '../helpers/temp.js';

async function failure(promise: Promise<unknown>): Promise<UsageError> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(UsageError);
  return error as UsageError;
}

describe('readFileText: input read whole, bounded, and UTF-8', () => {
  it('reads a file as it is, dropping only a byte order mark', async () => {
    const dir = tempDir('kb-input-');
    writeFileSync(join(dir, 'plain.yaml'), 'key: café 日本\n');
    writeFileSync(join(dir, 'bom.yaml'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('key: x\n')]));
    expect(await readFileText(join(dir, 'plain.yaml'), '-f')).toBe('key: café 日本\n');
    expect(await readFileText(join(dir, 'bom.yaml'), '-f')).toBe('key: x\n');
  });

  it('refuses more than the limit, from a file or an endless device, without reading it all', async () => {
    const dir = tempDir('kb-input-');
    writeFileSync(join(dir, 'big.yaml'), 'x'.repeat(1025));
    writeFileSync(join(dir, 'exact.yaml'), 'x'.repeat(1024));
    expect((await failure(readFileText(join(dir, 'big.yaml'), '-f', 1024))).message).toBe(`-f ${join(dir, 'big.yaml')} is larger than 1 KiB: kb reads at most that much input`);
    expect(await readFileText(join(dir, 'exact.yaml'), '-f', 1024)).toHaveLength(1024);
    // Endless: this would never return if it read to the end.
    expect((await failure(readFileText('/dev/zero', '--input'))).message).toBe('--input /dev/zero is larger than 64 MiB: kb reads at most that much input');
  });

  it('refuses bytes that are not UTF-8, instead of turning them into U+FFFD', async () => {
    const dir = tempDir('kb-input-');
    writeFileSync(join(dir, 'latin1.yaml'), Buffer.from('key: caf\xe9\n', 'latin1'));
    const error = await failure(readFileText(join(dir, 'latin1.yaml'), '-f'));
    expect(error.message).toBe(`-f ${join(dir, 'latin1.yaml')} is not UTF-8 text`);
    expect(error.help).toBe('Convert it first, e.g. with `iconv -f LATIN1 -t UTF-8`.');
  });

  it('names what could not be read', async () => {
    const dir = tempDir('kb-input-');
    expect((await failure(readFileText(join(dir, 'missing.yaml'), '-f'))).message).toBe(`Cannot read -f ${join(dir, 'missing.yaml')}: no such file`);
    expect((await failure(readFileText(dir, 'FILE'))).message).toBe(`Cannot read FILE ${dir}: it is a directory`);
  });
});
