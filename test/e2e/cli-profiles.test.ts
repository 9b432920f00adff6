import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runKb } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ org: 'org-profiles' });
});
afterAll(async () => {
  await server?.close();
});

function config(env: NodeJS.ProcessEnv): { defaultProfile?: string; profiles: Record<string, { url: string; token?: string }> } {
  return JSON.parse(readFileSync(join(env.KB_CONFIG_DIR as string, 'config.json'), 'utf8'));
}

async function loggedIn(env: NodeJS.ProcessEnv, profile: string): Promise<void> {
  const result = await runKb(['auth', 'login', '--url', server.url, '--with-token', '--profile', profile], { env, input: `${server.token}\n` });
  expect(result.code, result.stderr).toBe(0);
}

describe('kb auth remove and rename, through the built kb', () => {
  it('renames the default profile, which stays the default and keeps working; a name taken is refused', async () => {
    const env = isolatedEnv();
    await loggedIn(env, 'local-8081');
    await loggedIn(env, 'other');
    expect(config(env).defaultProfile).toBe('local-8081');

    const renamed = await runKb(['auth', 'rename', 'local-8081', 'dev'], { env });
    expect(renamed).toMatchObject({ code: 0, stdout: '', stderr: '✓ Renamed profile "local-8081" to "dev" (the default).\n' });
    expect(config(env)).toEqual({ defaultProfile: 'dev', profiles: { dev: { url: server.url, token: server.token }, other: { url: server.url, token: server.token } } });
    expect(await runKb(['auth', 'token'], { env })).toMatchObject({ code: 0, stdout: `${server.token}\n` });

    const taken = await runKb(['auth', 'rename', 'dev', 'other'], { env });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('a profile named "other" exists already; nothing was renamed');
    const missing = await runKb(['auth', 'rename', 'nope', 'fresh'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no profile named "nope"');
    expect(Object.keys(config(env).profiles).sort()).toEqual(['dev', 'other']);
  });

  it('removes a profile with rm, and the default one too, leaving no default', async () => {
    const env = isolatedEnv();
    await loggedIn(env, 'main');
    await loggedIn(env, 'spare');
    const path = join(env.KB_CONFIG_DIR as string, 'config.json');

    expect(await runKb(['auth', 'rm', 'spare'], { env })).toMatchObject({
      code: 0, stdout: '', stderr: `✓ Removed profile "spare" (${server.url}) and its token from ${path}.\n`,
    });
    const removed = await runKb(['auth', 'remove', 'main'], { env });
    expect(removed).toMatchObject({ code: 0, stdout: '' });
    expect(removed.stderr).toBe(
      `✓ Removed profile "main" (${server.url}) and its token from ${path}.\nIt was the default: there is none now. Pick one with \`kb auth switch NAME\`.\n`,
    );
    expect(config(env)).toEqual({ profiles: {} });
    expect(readFileSync(path, 'utf8')).not.toContain(server.token);
    const again = await runKb(['auth', 'remove', 'main'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('no profile named "main"');
  });

  it('logout says what it kept and how to remove it', async () => {
    const env = isolatedEnv();
    await loggedIn(env, 'work');
    const result = await runKb(['auth', 'logout'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Kept: the profile "work" and its URL (${server.url}). To remove them too: \`kb auth remove work\`.`);
    expect(config(env).profiles.work).toEqual({ url: server.url });
  });

  it('a refused token is named by where it came from: KB_TOKEN, or the profile, with the next step for each', async () => {
    const env = isolatedEnv();
    const doomed = await server.newToken('org-profiles');
    const result = await runKb(['auth', 'login', '--url', server.url, '--with-token', '--profile', 'work'], { env, input: `${doomed}\n` });
    expect(result.code, result.stderr).toBe(0);
    const { hashToken } = await import('../../src/server/tokens.js');
    const principal = await server.store.authenticate(hashToken(doomed));
    await server.store.revokeToken(principal?.tokenId as string);

    const fromProfile = await runKb(['ns', 'list'], { env });
    expect(fromProfile.code).toBe(4);
    expect(fromProfile.stderr.split('\n').at(-2)).toBe(
      `The token came from profile "work" (${server.url}): log in again with \`kb auth login --profile work\`, or remove the profile with \`kb auth remove work\`.`,
    );
    const fromEnv = await runKb(['ns', 'list'], { env: { ...env, KB_TOKEN: `kbt_${'x'.repeat(43)}` } });
    expect(fromEnv.code).toBe(4);
    expect(fromEnv.stderr.split('\n').at(-2)).toBe('The token came from KB_TOKEN (it overrides the token of profile "work"): set KB_TOKEN to a valid token, or unset it.');
    expect(fromEnv.stderr).not.toContain('x'.repeat(10));
  });
});
