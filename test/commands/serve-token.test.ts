import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.js';
import { freshEnv, kb } from './run.js';

const TOKEN_LINE = /^kbt_\S+$/;
const TOKEN_ID = /^tok_[0-9a-f]{12}$/;

/** The last line of stdout: the token alone. */
function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('kb serve token, against the SQLite store of a data dir', () => {
  it('create prints the token alone as the last line of stdout; list shows ids and organizations, never tokens', async () => {
    const env = freshEnv();
    const dataDir = ['--data-dir', tempDir('kb-cmd-serve-')];
    const created = await kb(['serve', 'token', 'create', '--org', 'acme', ...dataDir], { env });
    expect(created.code, created.stderr).toBe(0);
    const token = lastLine(created.stdout);
    expect(created.stdout).toBe(`${token}\n`);
    expect(token).toMatch(TOKEN_LINE);
    expect(created.stderr).toMatch(/^Created token tok_[0-9a-f]{12} for organization acme, shown only this once:\n$/);

    const listed = await kb(['serve', 'token', 'list', '--json', ...dataDir], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const tokens = JSON.parse(listed.stdout) as { id: string; org: string; revokedAt: string | null }[];
    expect(tokens.map(({ org, revokedAt }) => ({ org, revokedAt }))).toEqual([{ org: 'acme', revokedAt: null }]);
    expect(tokens[0]?.id).toMatch(TOKEN_ID);
    const table = await kb(['serve', 'token', 'list', ...dataDir], { env });
    expect(table.stdout.split('\n')[0]).toMatch(/^ID {16}NAME {2}ORGANIZATION {2}SCOPE {2}CREATED {11}EXPIRES {2}LAST USED {2}STATUS$/);
    expect(table.stdout).toContain(`${tokens[0]?.id}  -     acme          full   `);
    expect(table.stdout).toMatch(/ {2}never {4}never {6}active\n$/);
    expect(`${listed.stdout}${table.stdout}${table.stderr}`).not.toContain(token);
  });

  it('--json prints {org, token}', async () => {
    const result = await kb(['serve', 'token', 'create', '--org', 'acme', '--json', '--data-dir', tempDir('kb-cmd-serve-')], { env: freshEnv() });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ org: 'acme', token: expect.stringMatching(TOKEN_LINE) });
  });

  it('--save saves the token as the profile "local" in the config dir of its environment', async () => {
    const env = freshEnv();
    const result = await kb(['serve', 'token', 'create', '--org', 'acme', '--save', '--url', 'http://127.0.0.1:9', '--data-dir', tempDir('kb-cmd-serve-')], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n').at(-2)).toBe('Saved as CLI profile "local" for http://127.0.0.1:9 (the default).');
    expect(await kb(['auth', 'token'], { env })).toMatchObject({ code: 0, stdout: `${lastLine(result.stdout)}\n` });
  });

  it('revoke takes an id, or the token itself on stdin; an unknown id exits 3 and a token in argv exits 2', async () => {
    const env = freshEnv();
    const dataDir = ['--data-dir', tempDir('kb-cmd-serve-')];
    const first = lastLine((await kb(['serve', 'token', 'create', '--org', 'acme', ...dataDir], { env })).stdout);
    const second = lastLine((await kb(['serve', 'token', 'create', '--org', 'beta', ...dataDir], { env })).stdout);
    const ids = (JSON.parse((await kb(['serve', 'token', 'list', '--json', ...dataDir], { env })).stdout) as { id: string; org: string }[]);
    const acme = ids.find((info) => info.org === 'acme')?.id as string;

    expect(await kb(['serve', 'token', 'revoke', acme, ...dataDir], { env })).toEqual({
      code: 0, stdout: '', stderr: `Revoked token ${acme} of organization acme.\n`, asked: [],
    });
    const byStdin = await kb(['serve', 'token', 'revoke', '-', ...dataDir], { env, stdin: `${second}\n` });
    expect(byStdin.code, byStdin.stderr).toBe(0);
    expect(byStdin.stderr).toMatch(/^Revoked token tok_[0-9a-f]{12} of organization beta\.\n$/);
    const revoked = JSON.parse((await kb(['serve', 'token', 'list', '--json', ...dataDir], { env })).stdout) as { revokedAt: string | null }[];
    expect(revoked.every((info) => info.revokedAt !== null)).toBe(true);

    expect(await kb(['serve', 'token', 'revoke', 'tok_000000000000', ...dataDir], { env })).toEqual({
      code: 3, stdout: '', stderr: 'Error: No token with id tok_000000000000\nList the ids with `kb serve token list`.\n', asked: [],
    });
    const inArgv = await kb(['serve', 'token', 'revoke', first, ...dataDir], { env });
    expect(inArgv).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Error: That is neither a token id (tok_ and 12 hex digits) nor a token name: nothing was revoked.\nFind the id or name with `kb serve token list`, or pass "-" and the token itself on stdin.\n',
      asked: [],
    });
  });

  it('create refuses an organization that is not a valid key with exit 2', async () => {
    const result = await kb(['serve', 'token', 'create', '--org', 'a b', '--data-dir', tempDir('kb-cmd-serve-')], { env: freshEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Error: Invalid --org "a b": /);
  });
});
