import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isolatedEnv, type RunResult } from '../helpers/cli.js';
import {
  closedPortUrl,
  describeRun,
  type FakeServer,
  kb,
  leakedPieces,
  runKbUmask022,
  startFixedServer,
  startSilentServer,
  TEST_TIMEOUT_MS,
} from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

let server: TestServer;
let broken: FakeServer;
let silent: FakeServer;
let closed: string;
beforeAll(async () => {
  [server, broken, silent, closed] = await Promise.all([
    startTestServer({ org: 'canary-org' }),
    startFixedServer(500, { success: false, message: 'Internal failure', help: 'Try again later.' }),
    startSilentServer(),
    closedPortUrl(),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), broken?.close(), silent?.close()]);
});

interface Run {
  label: string;
  result: RunResult;
  expectedCode: number;
  /** Run with --verbose or KB_DEBUG=1 by a command that sends a request. */
  traced: boolean;
}

/** A trace line: the method, the URL and the time (the status is checked in cli-commands.test.ts). */
const TRACE = /\b(GET|POST|DELETE)\b.*http:\/\/127\.0\.0\.1:\d+\/v1\/\S+.*\b\d+(\.\d+)? ?ms\b/;

describe.concurrent('the token is never printed (a canary through every command and error path)', { timeout: TEST_TIMEOUT_MS }, () => {
  it('appears in no stdout or stderr but `kb auth token`\'s stdout, with --verbose and KB_DEBUG=1 too; the credential file is 0600 in a 0700 directory', async ({ expect }) => {
    // The canary is the real token: the commands below must use it, or the test would prove nothing.
    const canary = server.token;
    const configDir = join(tempDir('kb-canary-'), 'fresh', 'kb');
    const env = isolatedEnv({ KB_CONFIG_DIR: configDir });
    const configFile = join(configDir, 'config.json');
    const runs: Run[] = [];
    const record = (label: string, expectedCode: number, result: RunResult, traced = false): RunResult => {
      runs.push({ label, result, expectedCode, traced });
      return result;
    };
    // auth status's tracing is checked in cli-commands.test.ts; here it only has to keep the secret.
    const sendsNoTrace = (args: string[]) => args[0] === '--help' || (args[0] === 'auth' && args[1] !== 'login');
    const step = (label: string, expectedCode: number, args: string[], extra: Record<string, string> = {}, input?: string) =>
      kb(args, { env: { ...env, ...extra }, ...(input === undefined ? {} : { input }) }).then((result) =>
        record(label, expectedCode, result, (args.includes('--verbose') || extra.KB_DEBUG === '1') && expectedCode !== 2 && !sendsNoTrace(args)),
      );

    // Under umask 022 the directory would be 0755 and the file 0644 unless kb sets their modes itself.
    // (auth login takes no --verbose flag yet: see cli-commands.test.ts; KB_DEBUG=1 traces it.)
    const firstLogin = await runKbUmask022(['auth', 'login', '--url', server.url, '--with-token'], {
      env: { ...env, KB_DEBUG: '1' },
      input: `${canary}\n`,
    });
    expect(firstLogin.code, describeRun(firstLogin)).toBe(0);
    record('auth login KB_DEBUG (umask 022)', 0, firstLogin, true);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(configFile, 'utf8')).toContain(canary);

    await step('ns create --verbose', 0, ['ns', 'create', 'docs', '--description', 'Docs', '--verbose']);
    await step('base create --json KB_DEBUG', 0, ['base', 'create', 'docs', 'faq', '--json'], { KB_DEBUG: '1' });

    await Promise.all([
      step('health', 0, ['health']),
      step('health --json --verbose', 0, ['health', '--json', '--verbose']),
      step('auth status', 0, ['auth', 'status']),
      step('auth status --json KB_DEBUG', 0, ['auth', 'status', '--json'], { KB_DEBUG: '1' }),
      step('ns list', 0, ['ns', 'list']),
      step('ns list --json --verbose', 0, ['ns', 'list', '--json', '--verbose']),
      step('ns create generated KB_DEBUG', 0, ['ns', 'create'], { KB_DEBUG: '1' }),
      step('ns update --verbose', 0, ['ns', 'update', 'docs', '--description', 'All docs', '--verbose']),
      step('base list KB_DEBUG', 0, ['base', 'list', 'docs'], { KB_DEBUG: '1' }),
      step('base list --json --verbose', 0, ['base', 'list', 'docs', '--json', '--verbose']),
      step('base create generated --verbose', 0, ['base', 'create', 'docs', '--verbose']),
      step('base update --json --verbose', 0, ['base', 'update', 'docs', 'faq', '--clear-description', '--json', '--verbose']),
      step('auth switch', 0, ['auth', 'switch', 'default']),
      step('auth login again --json KB_DEBUG', 0, ['auth', 'login', '--url', server.url, '--with-token', '--json'], { KB_DEBUG: '1' }, `${canary}\n`),
      step('--help', 0, ['--help']),
      step('KB_TOKEN: auth status', 0, ['auth', 'status'], { KB_URL: server.url, KB_TOKEN: canary }),
      step('KB_TOKEN: ns list --verbose', 0, ['ns', 'list', '--verbose'], { KB_URL: server.url, KB_TOKEN: canary }),
    ]);

    await Promise.all([
      step('404 ns update --verbose', 3, ['ns', 'update', 'nope', '--description', 'x', '--verbose']),
      step('404 base list --verbose', 3, ['base', 'list', 'nope', '--verbose']),
      step('404 base delete KB_DEBUG', 3, ['base', 'delete', 'docs', 'nope', '--yes'], { KB_DEBUG: '1' }),
      step('409 ns create --verbose', 5, ['ns', 'create', 'docs', '--verbose']),
      step('409 base create KB_DEBUG', 5, ['base', 'create', 'docs', 'faq'], { KB_DEBUG: '1' }),
      step('400 local --verbose', 2, ['ns', 'create', 'bad key', '--verbose']),
      step('400 local description KB_DEBUG', 2, ['base', 'update', 'docs', 'faq', '--description', 'x'.repeat(1025)], { KB_DEBUG: '1' }),
      step('no --yes --verbose', 2, ['base', 'delete', 'docs', 'faq', '--verbose']),
      step('unknown flag', 2, ['ns', 'list', '--bogus']),
      step('missing profile --verbose', 2, ['ns', 'list', '--profile', 'missing', '--verbose']),
      step('401 other token --verbose', 4, ['ns', 'list', '--verbose'], { KB_TOKEN: `kbt_${'W'.repeat(43)}` }),
      step('401 login rejected KB_DEBUG', 4, ['auth', 'login', '--url', server.url, '--with-token', '--profile', 'bad'], { KB_DEBUG: '1' }, `kbt_${'W'.repeat(43)}\n`),
      step('500 --verbose', 1, ['ns', 'list', '--verbose'], { KB_URL: broken.url }),
      step('500 KB_DEBUG', 1, ['ns', 'create', 'docs'], { KB_URL: broken.url, KB_DEBUG: '1' }),
      step('refused --verbose', 6, ['ns', 'list', '--verbose'], { KB_URL: closed }),
      step('timeout KB_DEBUG', 6, ['ns', 'list', '--timeout', '300ms'], { KB_URL: silent.url, KB_DEBUG: '1' }),
      step('auth status against a 500 server', 1, ['auth', 'status'], { KB_URL: broken.url }),
    ]);

    await step('base delete --yes --verbose', 0, ['base', 'delete', 'docs', 'faq', '--yes', '--verbose']);

    const token = await kb(['auth', 'token'], { env });
    expect(token.code, describeRun(token)).toBe(0);
    expect(token.stdout).toBe(`${canary}\n`);
    runs.push({ label: 'auth token (stderr only)', result: { ...token, stdout: '' }, expectedCode: 0, traced: false });

    await step('auth logout', 0, ['auth', 'logout']);
    expect(readFileSync(configFile, 'utf8')).not.toContain(canary);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);

    const leaks = runs
      .map(({ label, result }) => ({ label, pieces: leakedPieces(`${result.stdout}\n${result.stderr}`, canary), output: describeRun(result) }))
      .filter(({ pieces }) => pieces.length > 0);
    expect(leaks, leaks.map(({ label, output }) => `${label}:\n${output}`).join('\n\n')).toEqual([]);

    // Each path really ran: its exit code says so, and the traced ones (those that sent a request) traced.
    for (const { label, result, expectedCode } of runs) expect(result.code, `${label}\n${describeRun(result)}`).toBe(expectedCode);
    for (const { label, result } of runs.filter((run) => run.traced)) {
      expect(result.stderr, `${label} traces its requests\n${describeRun(result)}`).toMatch(TRACE);
    }
  });

  it('a config file broken by hand is reported without quoting any piece of the token', async ({ expect }) => {
    const canary = server.token;
    const dir = tempDir('kb-canary-broken-');
    // A token pasted without its quotes: the JSON is invalid right where the token starts.
    writeFileSync(
      join(dir, 'config.json'),
      `{\n  "defaultProfile": "default",\n  "profiles": {\n    "default": {\n      "url": "${server.url}",\n      "token": ${canary}\n    }\n  }\n}\n`,
      { mode: 0o600 },
    );
    const env = isolatedEnv({ KB_CONFIG_DIR: dir });
    const results = await Promise.all([
      kb(['ns', 'list'], { env }),
      kb(['auth', 'status', '--json'], { env }),
      kb(['ns', 'list', '--verbose'], { env: { ...env, KB_DEBUG: '1' } }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(1);
      expect(result.stderr).toContain(join(dir, 'config.json'));
      expect(leakedPieces(`${result.stdout}\n${result.stderr}`, canary), describeRun(result)).toEqual([]);
    }
  });
});
