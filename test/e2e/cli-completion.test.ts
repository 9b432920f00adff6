import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, it, type ExpectStatic } from 'vitest';
import { isolatedEnv, KB_BIN, runProcess, startServe } from '../helpers/cli.js';
import { describeRun, kb, TEST_TIMEOUT_MS } from '../helpers/cli-e2e.js';
import { tempDir } from '../helpers/temp.js';

// Each test stops the kb serve it started: the tests run at once, so none may stop them all after it.
const running = new Set<{ child: { kill(signal: NodeJS.Signals): boolean } }>();
afterAll(() => {
  for (const serve of running) serve.child.kill('SIGKILL');
});

function installed(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
}

/** A config with profiles local and staging of a live kb serve, namespaces docs and guides, and base faq in docs. */
async function liveDeployment(expect: ExpectStatic): Promise<NodeJS.ProcessEnv> {
  const env = isolatedEnv();
  env.PATH = `${kbOnPath()}:${env.PATH ?? ''}`;
  // kb serve's first start saves its token as the default profile, "local".
  const serve = await startServe([], env);
  running.add(serve);
  for (const key of ['docs', 'guides']) expect((await kb(['ns', 'create', key], { env })).code).toBe(0);
  expect((await kb(['base', 'create', 'docs', 'faq'], { env })).code).toBe(0);
  const token = (await kb(['auth', 'token'], { env })).stdout.trim();
  const login = await kb(['auth', 'login', '--profile', 'staging', '--url', serve.url, '--with-token'], { env, input: token });
  expect(login.code, describeRun(login)).toBe(0);
  return env;
}

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
async function bashCompletions(expect: ExpectStatic, env: NodeJS.ProcessEnv, typed: string[][]): Promise<{ lines: string[]; registered: string }> {
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
  it('bash: commands, flags, namespace keys of a live kb serve and profile names complete', async ({ expect }) => {
    const env = await liveDeployment(expect);
    const { lines, registered } = await bashCompletions(expect, env, [
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
      'kb base list --j=>--jq --json',
      'kb auth switch s=>staging',
      'kb completion =>bash fish zsh',
      'kb ser=>serve',
      'kb help exit=>exit-codes',
    ]);
  });

  it.skipIf(!installed('zsh'))('zsh: the script, evaluated, completes commands, namespace keys and profile names (needs zsh installed)', async ({ expect }) => {
    const env = await liveDeployment(expect);
    // Outside zle, compdef and compadd are stand-ins that print what they are given.
    const script = `compdef() { :; }; compadd() { shift 2; print -r -- "$*"; }; _files() { print FILES; }
eval "$(kb completion zsh)"
words=(kb ns v); CURRENT=3; _kb_complete
words=(kb ns view ''); CURRENT=4; _kb_complete
words=(kb auth switch ''); CURRENT=4; _kb_complete
words=(kb apply -f ''); CURRENT=4; _kb_complete`;
    const result = await runProcess('zsh', ['-f', '-c', script], { env, timeoutMs: 60_000 });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('view\ndocs guides\nlocal staging\nFILES\n');
  });

  it.skipIf(!installed('fish'))('fish: the script, sourced, completes commands, namespace keys and profile names (needs fish installed)', async ({ expect }) => {
    const env = await liveDeployment(expect);
    const script = 'kb completion fish | source; complete -C"kb ns v"; complete -C"kb ns view "; complete -C"kb auth switch "';
    const result = await runProcess('fish', ['--no-config', '-c', script], { env, timeoutMs: 60_000 });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe('view\ndocs\nguides\nlocal\nstaging\n');
  });

  it('a deployment that does not answer, or no config, completes nothing from them, quietly and at once', async ({ expect }) => {
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

  it('zsh and fish scripts call kb __complete, and __complete is hidden from the help', async ({ expect }) => {
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
