import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { KB_BIN, ROOT, type RunResult } from '../helpers/cli.js';
import { apiData, closedPortUrl, describeRun, orgEnv, runShell, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const MARKER = '<!-- script-example -->';

/** The ```sh block that follows the marker line in README.md (blank lines between allowed), or why there is none. */
function readmeScript(): { script: string } | { missing: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').split(/\r?\n/);
  const marker = readme.findIndex((line) => line.trim() === MARKER);
  if (marker < 0) return { missing: `README.md has no line ${MARKER}` };
  let open = marker + 1;
  while (open < readme.length && readme[open]?.trim() === '') open++;
  if (readme[open]?.trim() !== '```sh') return { missing: `README.md has no \`\`\`sh block right after the line ${MARKER}` };
  const close = readme.findIndex((line, i) => i > open && line.trim() === '```');
  if (close < 0) return { missing: `the \`\`\`sh block after ${MARKER} in README.md is not closed` };
  const script = `${readme.slice(open + 1, close).join('\n')}\n`;
  if (!/(^|[\s;&|(])kb\s/m.test(script)) return { missing: `the \`\`\`sh block after ${MARKER} in README.md runs no kb command (a placeholder?)` };
  return { script };
}

let server: TestServer;
let dir: string;
let binDir: string;
let runs = 0;
beforeAll(async () => {
  server = await startTestServer({ org: 'cli-script' });
  dir = tempDir('kb-script-');
  // `kb` on PATH, as after `npm link`: a shim that runs the built CLI.
  binDir = join(dir, 'bin');
  mkdirSync(binDir);
  writeFileSync(join(binDir, 'kb'), `#!/bin/sh\nexec '${process.execPath}' '${KB_BIN}' "$@"\n`);
  chmodSync(join(binDir, 'kb'), 0o755);
});
afterAll(async () => {
  await server?.close();
});

/** Writes the README's script (failing the test, with the reason, when README.md lacks it) and runs it with sh. */
function runReadmeScript(expect: ExpectStatic, env: NodeJS.ProcessEnv): Promise<RunResult> {
  const found = readmeScript();
  if ('missing' in found) expect.fail(`${found.missing}: paste the POSIX sh script example (see the CLI e2e test report) there.`);
  const scriptPath = join(dir, `example-${++runs}.sh`);
  writeFileSync(scriptPath, found.script);
  return runShell('exec sh "$1"', [scriptPath], { env: { ...env, PATH: `${binDir}:${process.env.PATH ?? ''}` } });
}

describe.concurrent('the README shell-script example', { timeout: TEST_TIMEOUT_MS }, () => {
  it('creates namespace docs and base faq, and succeeds again on a second run, leaving exactly one of each', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'script-twice');
    const first = await runReadmeScript(expect, env);
    expect(first.code, describeRun(first)).toBe(0);
    const second = await runReadmeScript(expect, env);
    expect(second.code, describeRun(second)).toBe(0);

    const namespaces = (await apiData(expect, server.url, token, 'GET', '/ns_list')) as { key: string }[];
    expect(namespaces.map((ns) => ns.key)).toEqual(['docs']);
    const bases = (await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')) as { key: string }[];
    expect(bases.map((base) => base.key)).toEqual(['faq']);
  });

  it('also succeeds when the namespace already exists and only the base is missing', async ({ expect }) => {
    const { env, token } = await orgEnv(server, 'script-half');
    await apiData(expect, server.url, token, 'POST', '/ns_create', { key: 'docs', description: 'Made by hand' });
    const run = await runReadmeScript(expect, env);
    expect(run.code, describeRun(run)).toBe(0);
    expect(await apiData(expect, server.url, token, 'GET', '/ns_list')).toEqual([{ key: 'docs', description: 'Made by hand' }]);
    const bases = (await apiData(expect, server.url, token, 'GET', '/base_list?namespace=docs')) as { key: string }[];
    expect(bases.map((base) => base.key)).toEqual(['faq']);
  });

  it('fails loudly (non-zero exit, a message on stderr) on any other exit code of kb', async ({ expect }) => {
    const { env } = await orgEnv(server, 'script-fails');
    const [rejected, unreachable] = await Promise.all([
      runReadmeScript(expect, { ...env, KB_TOKEN: `kbt_${'W'.repeat(43)}` }),
      runReadmeScript(expect, { ...env, KB_URL: await closedPortUrl() }),
    ]);
    for (const run of [rejected, unreachable]) {
      expect(run.code, describeRun(run)).not.toBe(0);
      expect(run.code, describeRun(run)).not.toBeNull();
      expect(run.stderr.trim(), describeRun(run)).not.toBe('');
    }
  });
});

/** The commands of README.md's ```sh blocks, in the order a reader meets them, one a line (comments and `kb tui` left out). */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((block) =>
    (block[1] ?? '')
      .split('\n')
      .map((line) => line.replace(/\s+# .*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#') && !/^kb tui\b/.test(line)),
  );
}

describe('the README read in order', { timeout: TEST_TIMEOUT_MS }, () => {
  it('the quick start\'s second terminal, then the `kb api` examples: each command as printed exits 0', async ({ expect }) => {
    const { env } = await orgEnv(server, 'readme-in-order');
    const blocks = readmeCommands();
    const quick = blocks.find((lines) => lines.includes('kb ns create docs --description "Product docs"'));
    const api = blocks.find((lines) => lines[0] === 'kb api ns_list');
    expect(quick, 'the quick start block with `kb ns create docs`').toBeDefined();
    expect(api, 'the `kb api` examples block').toBeDefined();
    for (const line of [...(quick ?? []), ...(api ?? [])]) {
      const run = await runShell(line, [], { env: { ...env, PATH: `${binDir}:${process.env.PATH ?? ''}` }, cwd: dir });
      expect(run.code, `${line}\n${describeRun(run)}`).toBe(0);
    }
  });
});
