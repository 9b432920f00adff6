import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runProcess, type RunResult } from '../helpers/cli.js';
import { describeRun } from '../helpers/cli-e2e.js';
import { freePort } from '../helpers/serve-with-log.js';
import { tempDir } from '../helpers/temp.js';
import { fences, kind, movePorts, portsNamed, serveFlags, servesDefaultDataDir, SHELL_LANGS, shownOutput, type Step, steps, withoutInstall } from './readme-blocks.js';

// README.md as a reader runs it: every ```sh and ```bash block, in order, each command as written, in a clone's
// layout with an empty HOME, against the real kb serve that the README itself starts. Blocks that are not meant to
// run (a synopsis, a file's contents, a screen) carry another language (`text`, `yaml`).
//
// What differs from a reader's machine, and why:
// - `npm ci` (and `npm test`) are not run: they would reinstall node_modules from the network (and run this suite
//   inside itself). The "clone" is a directory whose bin/ and node_modules/ are links to this checkout's, so the
//   README's own `ln -sf "$PWD/bin/run.js" ~/.local/bin/kb` links the built kb, which every later command runs.
// - Ports: each port the README names (8080, kb serve's default, and any other) becomes a free one, everywhere in
//   the blocks, and a `kb serve` without `--port` gets the one that stands for 8080.
// - `kb serve` runs until stopped, as in a terminal of its own: started in the background, waited for until
//   /v1/health answers, and stopped with Ctrl-C's SIGINT (exit 0 expected) when the README says to stop it: before a
//   block that starts kb serve on its default data dir again (the restore), and at the end.
// - `kb tui` runs in a tmux terminal (100x30); the test presses q, as the README says, and expects exit 0.

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const TMUX = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
const STEP_MS = 60_000;
const run = promisify(execFile);

/** A reader's environment: HOME empty, no kb settings, no proxies, not CI, this Node first on PATH. */
function readerEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const dropped = /^(KB_|XDG_|TMUX|CI$|CONTINUOUS_INTEGRATION$|NO_COLOR$|FORCE_COLOR$|(https?|no|all)_proxy$)/i;
  for (const [key, value] of Object.entries(process.env)) if (!dropped.test(key) && value !== undefined) env[key] = value;
  return { ...env, HOME: home, SHELL: '/bin/sh', PATH: `${home}/.local/bin:${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
}

interface Server {
  step: Step;
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) process.kill(-(server.child.pid as number), 'SIGKILL');
});

function where(step: Step): string {
  return `README.md:${step.line}: ${step.command}`;
}

/** Starts a step's kb serve as its own process group (so that SIGINT reaches it as Ctrl-C would); resolves once it answers. */
async function startServer(step: Step, command: string, port: number, env: NodeJS.ProcessEnv, cwd: string): Promise<Server> {
  // `trap : INT`: the shell outlives the Ctrl-C, as a reader's interactive shell does, and ends with kb serve's status
  // (a trapped signal is reset to its default in the commands it runs, so kb serve gets SIGINT as from a terminal).
  const child = spawn('sh', ['-c', `trap : INT\n${command}`], { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server: Server = { step, child, out: () => out, exited };
  servers.push(server);
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) expect.fail(`${where(step)}\nexited (${child.exitCode ?? child.signalCode}) before it answered:\n${out}`);
    const health = await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined);
    // As a reader does: the next command once the server says it listens (its first token is saved by then), not as
    // soon as its port answers.
    if (health?.status === 200 && /listening on /.test(out)) return server;
    if (Date.now() > deadline) expect.fail(`${where(step)}\ndid not answer on port ${port}:\n${out}`);
    await sleep(100);
  }
}

/** Ctrl-C in the server's terminal: SIGINT to its process group; the README promises exit 0. */
async function stopServer(server: Server): Promise<void> {
  process.kill(-(server.child.pid as number), 'SIGINT');
  const code = await Promise.race([server.exited, sleep(STEP_MS).then(() => 'still running')]);
  expect(code, `${where(server.step)}\nstopped with Ctrl-C (SIGINT):\n${server.out()}`).toBe(0);
}

/**
 * Runs steps in one shell, as typed one after another in a terminal (variables set by one are seen by the next), each
 * with its own stdout, stderr and exit status.
 */
async function runSteps(list: Array<{ step: Step; command: string }>, env: NodeJS.ProcessEnv, cwd: string): Promise<RunResult[]> {
  const dir = tempDir('kb-readme-steps-');
  const script = list
    .map(({ command }, i) => {
      const file = join(dir, `step-${i}.sh`);
      writeFileSync(file, `${command}\n`);
      // `.` runs the step in this shell; a script of its own (#!) runs as its own process, as the README says.
      const body = command.startsWith('#!') ? `sh '${file}'` : `. '${file}'`;
      return `{ ${body}\n} >'${dir}/${i}.out' 2>'${dir}/${i}.err' </dev/null; echo $? >'${dir}/${i}.status'`;
    })
    .join('\n');
  const shell = await runProcess('sh', ['-c', script], { env, cwd, timeoutMs: STEP_MS * Math.max(1, list.length) });
  expect(shell.code, `the shell running the README's steps:\n${describeRun(shell)}`).toBe(0);
  return list.map((_, i) => {
    const read = (name: string): string => {
      try {
        return readFileSync(join(dir, `${i}.${name}`), 'utf8');
      } catch {
        return '';
      }
    };
    const status = read('status').trim();
    return { code: status === '' ? null : Number(status), signal: null, stdout: read('out'), stderr: read('err') };
  });
}

/** `kb tui` in a tmux terminal of its own: waits for its key line, presses q, and gives its exit status. */
async function runTui(step: Step, command: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; screen: string }> {
  const dir = tempDir('kb-readme-tmux-');
  const tmux = (...args: string[]) => run('tmux', ['-S', join(dir, 'socket'), '-f', '/dev/null', ...args], { env, cwd });
  writeFileSync(join(dir, 'step.sh'), `${command}\necho $? >'${dir}/status'\n`);
  await tmux('new-session', '-d', '-s', 'readme', '-x', '100', '-y', '30', '-c', cwd, `sh '${dir}/step.sh'; sleep 60`);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', 'readme')).stdout;
  const status = () => {
    try {
      return readFileSync(join(dir, 'status'), 'utf8').trim();
    } catch {
      return '';
    }
  };
  try {
    const deadline = Date.now() + STEP_MS;
    let shown = await screen();
    while (!/q quit/.test(shown) && status() === '') {
      if (Date.now() > deadline) expect.fail(`${where(step)}\nkb tui showed no key line; the screen:\n${shown}`);
      await sleep(100);
      shown = await screen();
    }
    if (status() === '') await tmux('send-keys', '-t', 'readme', 'q');
    while (status() === '') {
      if (Date.now() > deadline) expect.fail(`${where(step)}\nkb tui did not quit on q; the screen:\n${await screen()}`);
      await sleep(100);
    }
    return { code: Number(status()), screen: shown };
  } finally {
    await tmux('kill-server').catch(() => undefined);
  }
}

describe('README.md', () => {
  it('marks every fenced block with its language, and has shell blocks to run', () => {
    const all = fences(README);
    expect(all.filter((fence) => fence.lang === '').map((fence) => `README.md:${fence.line}`), 'fences with no language').toEqual([]);
    expect(all.filter((fence) => SHELL_LANGS.has(fence.lang)).length).toBeGreaterThanOrEqual(5);
  });

  it('links only to files and headings that exist (the README and every page of docs/)', () => {
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
    const anchors = (file: string) =>
      new Set(
        readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => /^#{1,6} /.test(line))
          .map((line) => slug(line.replace(/^#+ /, ''))),
      );
    const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of readFileSync(join(ROOT, page), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [path, hash] = (target as string).split('#');
        const file = path === '' ? page : join(dirname(page), path as string);
        let exists = true;
        try {
          statSync(join(ROOT, file));
        } catch {
          exists = false;
        }
        if (!exists) broken.push(`${page}: ${target} (no such file)`);
        else if (hash !== undefined && file.endsWith('.md') && !anchors(file).has(hash)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('no line of the README, the docs or the source suggests npx kb (outside the clone, npx runs an unrelated registry package)', () => {
    const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];
    const walk = (dir: string): void => {
      for (const name of readdirSync(join(ROOT, dir))) {
        const path = `${dir}/${name}`;
        if (statSync(join(ROOT, path)).isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk('src');
    const found = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ at: `${file}:${i + 1}`, line }))
        .filter(({ line }) => /\bnpx\s+(--\S+\s+)*kb\b/.test(line)),
    );
    expect(found).toEqual([]);
  });

  it(`runs every command of its shell blocks as written, in a fresh clone with an empty HOME: each exits 0 and prints what the README shows${TMUX ? '' : ' [kb tui not run: tmux is not installed]'}`, { timeout: 600_000 }, async () => {
    const home = tempDir('kb-readme-home-');
    const clone = tempDir('kb-readme-clone-');
    for (const name of ['bin', 'node_modules']) symlinkSync(join(ROOT, name), join(clone, name));
    const env = readerEnv(home);

    const all = fences(README);
    const ports = new Map<number, number>();
    for (const port of portsNamed(all, 8080)) ports.set(port, await freePort());
    const blocks = all.filter((fence) => SHELL_LANGS.has(fence.lang)).map((fence) => ({ fence, list: steps(fence) }));

    const ran: string[] = [];
    const skipped: string[] = [];
    for (const { list } of blocks) {
      // The README says to stop kb serve before it serves its default data dir again (the restore, starting afresh).
      if (list.some((step) => kind(step) === 'serve' && servesDefaultDataDir(step))) {
        for (const server of servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null)) await stopServer(server);
      }
      let pending: Array<{ step: Step; command: string }> = [];
      const flush = async () => {
        const results = await runSteps(pending, env, clone);
        pending.forEach(({ step }, i) => {
          const result = results[i] as RunResult;
          expect(result.code, `${where(step)}\n${describeRun(result)}`).toBe(0);
          if (step.output !== undefined) {
            expect(shownOutput(movePorts(step.output, ports), result.stdout), `${where(step)}\nthe README shows: ${step.output}\nstdout:\n${result.stdout}`).toBe(true);
          }
          ran.push(step.command);
        });
        pending = [];
      };
      for (const step of list) {
        const command = movePorts(withoutInstall(step.command), ports);
        switch (kind(step)) {
          case 'install':
            skipped.push(step.command);
            break;
          case 'serve': {
            await flush();
            const flags = serveFlags(step);
            const port = flags.has('port') ? Number(movePorts(flags.get('port') as string, ports)) : (ports.get(8080) as number);
            await startServer(step, flags.has('port') ? command : `${command} --port ${port}`, port, env, clone);
            ran.push(step.command);
            break;
          }
          case 'tui': {
            await flush();
            if (!TMUX) {
              skipped.push(step.command);
              break;
            }
            const tui = await runTui(step, command, env, clone);
            expect(tui.code, `${where(step)}\nthe screen:\n${tui.screen}`).toBe(0);
            ran.push(step.command);
            break;
          }
          default:
            pending.push({ step, command });
        }
      }
      await flush();
    }
    for (const server of servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null)) await stopServer(server);

    // Only the installs (and the suite itself) are left out, and everything else ran.
    expect(skipped.every((command) => /\bnpm (ci|test)\b/.test(command) || (!TMUX && /^kb tui\b/.test(command))), skipped.join('\n')).toBe(true);
    expect(ran.length + skipped.length).toBe(blocks.reduce((sum, { list }) => sum + list.length, 0));
    expect(servers.length, 'the README starts kb serve').toBeGreaterThan(0);
  });
});
