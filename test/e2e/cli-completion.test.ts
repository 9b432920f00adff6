import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, KB_BIN, killedAfterEach, runProcess, startServe } from '../helpers/cli.js';
import { describeRun, kb, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { tempDir } from '../helpers/temp.js';

const running = killedAfterEach();

/** A directory holding `kb`, the built CLI, for a shell's PATH: the completion script calls kb by its name. */
function kbOnPath(): string {
  const dir = tempDir('kb-path-');
  const shim = join(dir, 'kb');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(KB_BIN)} "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

/**
 * The bash script sourced in a non-interactive bash, its completion function called as bash calls it on Tab: COMP_WORDS
 * and COMP_CWORD set, the candidates read from COMPREPLY. Each line typed gives one line `line=>candidates`.
 */
async function bashCompletions(env: NodeJS.ProcessEnv, typed: string[][]): Promise<{ lines: string[]; registered: string }> {
  const calls = typed.map((words) => `comp kb ${words.map((word) => `'${word}'`).join(' ')}`).join('\n');
  const script = `set -e
eval "$(kb completion bash)"
complete -p kb
comp() {
  COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=()
  local function_name
  function_name=$(complete -p kb | sed -E 's/.* -F ([^ ]+) .*/\\1/')
  "$function_name" kb "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
  echo "$*=>\${COMPREPLY[*]}"
}
${calls}
`;
  const result = await runProcess('bash', ['--noprofile', '--norc', '-c', script], { env, timeoutMs: 60_000 });
  expect(result.code, describeRun(result)).toBe(0);
  const [registered = '', ...lines] = result.stdout.trimEnd().split('\n');
  return { lines, registered };
}

describe.concurrent('kb completion', { timeout: TEST_TIMEOUT_MS }, () => {
  it('bash: commands, flags, namespace keys of a live kb serve and profile names complete', async () => {
    const env = isolatedEnv();
    env.PATH = `${kbOnPath()}:${env.PATH ?? ''}`;
    // kb serve's first start saves its token as the default profile, "local".
    const serve = await startServe([], env);
    running.push(serve);
    for (const key of ['docs', 'guides']) expect((await kb(['ns', 'create', key], { env })).code).toBe(0);
    expect((await kb(['base', 'create', 'docs', 'faq'], { env })).code).toBe(0);
    const token = (await kb(['auth', 'token'], { env })).stdout.trim();
    const login = await kb(['auth', 'login', '--profile', 'staging', '--url', serve.url, '--with-token'], { env, input: token });
    expect(login.code, describeRun(login)).toBe(0);

    const { lines, registered } = await bashCompletions(env, [
      ['ns', 'v'],
      ['ns', 'view', ''],
      ['ns', 'view', 'g'],
      ['ns', 'list', '--profile', ''],
      ['base', 'view', 'docs', ''],
      ['base', 'list', '--j'],
      ['auth', 'switch', 's'],
      ['completion', ''],
      ['ser'],
      ['help', 'exit'],
    ]);
    expect(registered).toMatch(/^complete -o default -F \S+ kb$/);
    expect(lines).toEqual([
      'kb ns v=>view',
      'kb ns view =>docs guides',
      'kb ns view g=>guides',
      'kb ns list --profile =>local staging',
      'kb base view docs =>faq',
      'kb base list --j=>--json',
      'kb auth switch s=>staging',
      'kb completion =>bash fish zsh',
      'kb ser=>serve',
      'kb help exit=>exit-codes',
    ]);
  });

  it('a deployment that does not answer, or no config, completes nothing from them, quietly and at once', async () => {
    const env = isolatedEnv({ KB_URL: 'http://127.0.0.1:9', KB_TOKEN: 'kbt_0123456789abcdefghij' });
    const [namespaces, profiles, commands] = await Promise.all([
      kb(['__complete', '--', 'ns', 'view', ''], { env }),
      kb(['__complete', '--', 'auth', 'switch', ''], { env }),
      kb(['__complete', '--', 'ns', 'l'], { env }),
    ]);
    for (const result of [namespaces, profiles, commands]) {
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(namespaces.stdout).toBe('');
    expect(profiles.stdout).toBe('');
    expect(commands.stdout).toBe('list\nls\n');
  });

  it('zsh and fish scripts call kb __complete, and __complete is hidden from the help', async () => {
    const env = isolatedEnv();
    const [zsh, fish, help, bad] = await Promise.all([
      kb(['completion', 'zsh'], { env }),
      kb(['completion', 'fish'], { env }),
      kb(['--help'], { env }),
      kb(['completion', 'powershell'], { env }),
    ]);
    expect(zsh.stdout).toMatch(/^compdef \S+ kb$/m);
    expect(zsh.stdout).toContain('kb __complete -- ');
    expect(fish.stdout).toMatch(/^complete -c kb -f -a /m);
    expect(fish.stdout).toContain('kb __complete -- ');
    expect(help.stdout).toMatch(/^ {2}completion +Print a shell completion script/m);
    expect(help.stdout).not.toContain('__complete');
    expect(help.stdout).not.toContain('autocomplete');
    expect(bad.code, describeRun(bad)).toBe(2);
  });
});
