import { describe, expect, it } from 'vitest';
import { readEnv, type KbEnvironment } from '../../src/config/index.js';

const NOTHING: KbEnvironment = {
  profile: undefined,
  url: undefined,
  token: undefined,
  caCert: undefined,
  nodeExtraCaCerts: undefined,
  configDir: undefined,
  dataDir: undefined,
  databaseUrl: undefined,
  timeout: undefined,
  maxResponse: undefined,
  debug: false,
  noColor: false,
  ci: undefined,
  inkCi: undefined,
  proxy: undefined,
  editor: undefined,
  searchPath: undefined,
};

describe('readEnv: every environment variable kb reads, in one place', () => {
  it('reads nothing from an empty environment', () => {
    expect(readEnv({})).toEqual(NOTHING);
  });

  it('reads each KB_ variable as text', () => {
    expect(
      readEnv({
        KB_PROFILE: 'work',
        KB_URL: 'http://127.0.0.1:8080',
        KB_TOKEN: 'kbt_x',
        KB_CA_CERT: 'ca.pem',
        KB_CONFIG_DIR: 'conf',
        KB_DATA_DIR: '/data',
        KB_DATABASE_URL: 'postgres://db/kb',
        KB_TIMEOUT: '10s',
        KB_MAX_RESPONSE: '1048576',
        KB_DEBUG: '1',
        NODE_EXTRA_CA_CERTS: 'extra.pem',
      }),
    ).toEqual({
      ...NOTHING,
      profile: 'work',
      url: 'http://127.0.0.1:8080',
      token: 'kbt_x',
      caCert: 'ca.pem',
      configDir: 'conf',
      dataDir: '/data',
      databaseUrl: 'postgres://db/kb',
      timeout: '10s',
      maxResponse: '1048576',
      debug: true,
      nodeExtraCaCerts: 'extra.pem',
    });
  });

  it('takes an empty variable as unset', () => {
    const empty = Object.fromEntries(
      ['KB_PROFILE', 'KB_URL', 'KB_TOKEN', 'KB_CA_CERT', 'KB_CONFIG_DIR', 'KB_DATA_DIR', 'KB_DATABASE_URL', 'KB_TIMEOUT', 'KB_MAX_RESPONSE', 'KB_DEBUG', 'NODE_EXTRA_CA_CERTS', 'NO_COLOR', 'CI', 'HTTPS_PROXY', 'VISUAL', 'EDITOR'].map(
        (name) => [name, ''],
      ),
    );
    // All but Ink's rule, for which a CI variable set at all is CI.
    expect(readEnv(empty)).toEqual({ ...NOTHING, inkCi: 'CI' });
  });

  it.each([
    ['1', true],
    ['true', false],
    ['0', false],
  ])('takes KB_DEBUG=%s as debug: %s (only 1 turns it on, as the help says)', (value, debug) => {
    expect(readEnv({ KB_DEBUG: value }).debug).toBe(debug);
  });

  it.each([
    [{ NO_COLOR: '1' }, true],
    [{ NO_COLOR: '0' }, true],
    [{ TERM: 'dumb' }, true],
    [{ TERM: 'xterm-256color' }, false],
  ])('takes %j as noColor: %s (NO_COLOR set to anything, or a dumb terminal)', (env, noColor) => {
    expect(readEnv(env).noColor).toBe(noColor);
  });

  it.each([
    [{ CI: 'true' }, 'CI'],
    [{ CI: '1' }, 'CI'],
    [{ CONTINUOUS_INTEGRATION: 'yes' }, 'CONTINUOUS_INTEGRATION'],
    [{ CI: 'false' }, undefined],
    [{ CI: 'FALSE' }, undefined],
    [{ CI: '0' }, undefined],
    [{ CI: '0', CONTINUOUS_INTEGRATION: '1' }, 'CONTINUOUS_INTEGRATION'],
  ])('takes %j as ci: %s, naming the variable', (env, ci) => {
    expect(readEnv(env).ci).toBe(ci);
  });

  it.each([
    [{ CI: '' }, 'CI'],
    [{ CI: 'FALSE' }, 'CI'],
    [{ CI: 'false' }, undefined],
    [{ CI: '0' }, undefined],
    [{ CI: '0', CONTINUOUS_INTEGRATION: '' }, 'CONTINUOUS_INTEGRATION'],
    [{}, undefined],
  ])('takes %j as inkCi: %s, by is-in-ci\'s rule (any value but 0 and false, even empty)', (env, inkCi) => {
    expect(readEnv(env).inkCi).toBe(inkCi);
  });

  it.each([
    ['HTTPS_PROXY', 'https'],
    ['https_proxy', 'https'],
    ['HTTP_PROXY', 'http'],
    ['http_proxy', 'http'],
  ] as const)('reads %s as the %s proxy, by its name', (name, scheme) => {
    expect(readEnv({ [name]: 'http://proxy:3128', NO_PROXY: 'localhost' }).proxy).toEqual({
      http: undefined,
      https: undefined,
      [scheme]: { name, value: 'http://proxy:3128' },
      noProxy: 'localhost',
    });
  });

  it('takes the lower-case name first, as curl and undici do; an empty one counts as unset', () => {
    const proxy = readEnv({ http_proxy: 'http://lower:1', HTTP_PROXY: 'http://upper:1', https_proxy: '', HTTPS_PROXY: 'http://upper:2', no_proxy: 'a', NO_PROXY: 'b' }).proxy;
    expect(proxy).toEqual({ http: { name: 'http_proxy', value: 'http://lower:1' }, https: { name: 'HTTPS_PROXY', value: 'http://upper:2' }, noProxy: 'a' });
  });

  it.each(['ALL_PROXY', 'all_proxy'])('reads %s, for either scheme', (name) => {
    expect(readEnv({ [name]: 'http://proxy:3128' }).proxy).toEqual({
      http: undefined,
      https: undefined,
      all: { name, value: 'http://proxy:3128' },
      noProxy: undefined,
    });
    expect(readEnv({ all_proxy: 'http://lower:1', ALL_PROXY: 'http://upper:1' }).proxy?.all?.name).toBe('all_proxy');
  });

  it('does not count NO_PROXY alone as a proxy', () => {
    expect(readEnv({ NO_PROXY: 'localhost' }).proxy).toBeUndefined();
  });

  it('takes VISUAL over EDITOR', () => {
    expect(readEnv({ VISUAL: 'code -w', EDITOR: 'vi' }).editor).toBe('code -w');
    expect(readEnv({ EDITOR: 'vi' }).editor).toBe('vi');
  });

  it('reads process.env when no environment is given', () => {
    const saved = process.env.KB_PROFILE;
    process.env.KB_PROFILE = 'from-process';
    try {
      expect(readEnv().profile).toBe('from-process');
    } finally {
      if (saved === undefined) delete process.env.KB_PROFILE;
      else process.env.KB_PROFILE = saved;
    }
  });
});
