import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configDir, dataDir } from '../../src/config/paths.js';

// Restored in place: env-paths keeps a reference to the process.env object it saw when it loaded.
const saved = { ...process.env };
afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

describe('configDir and dataDir', () => {
  it('follow KB_CONFIG_DIR and KB_DATA_DIR, read at call time', () => {
    process.env.KB_CONFIG_DIR = '/tmp/kb-one/config';
    process.env.KB_DATA_DIR = '/tmp/kb-one/data';
    expect(configDir()).toBe('/tmp/kb-one/config');
    expect(dataDir()).toBe('/tmp/kb-one/data');
    process.env.KB_CONFIG_DIR = '/tmp/kb-two/config';
    expect(configDir()).toBe('/tmp/kb-two/config');
  });

  it('make a relative override absolute', () => {
    process.env.KB_CONFIG_DIR = 'relative/config';
    expect(configDir()).toBe(join(process.cwd(), 'relative/config'));
  });

  it.runIf(process.platform === 'linux')('fall back to the XDG dirs, named kb without a suffix, when unset or empty (Linux only: other systems have other dirs)', () => {
    delete process.env.KB_CONFIG_DIR;
    process.env.KB_DATA_DIR = '';
    process.env.XDG_CONFIG_HOME = '/tmp/xdg-config';
    process.env.XDG_DATA_HOME = '/tmp/xdg-data';
    expect(configDir()).toBe('/tmp/xdg-config/kb');
    expect(dataDir()).toBe('/tmp/xdg-data/kb');
  });

  it('take an explicit environment', () => {
    expect(configDir({ KB_CONFIG_DIR: '/tmp/kb-env' })).toBe('/tmp/kb-env');
    expect(dataDir({ KB_DATA_DIR: '/tmp/kb-env-data' })).toBe('/tmp/kb-env-data');
  });
});
