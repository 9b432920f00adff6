// Timing whole processes: from spawn() to exit, interleaved A B A B so that drift on a noisy machine hits all sides.
import { performance } from 'node:perf_hooks';
import { descendants, spawnTracked, trackGrandchild, untrackGrandchild } from './lifecycle.mjs';
import { summarize } from './stats.mjs';

/**
 * Runs `command` once with stdin closed; resolves with the milliseconds from spawn to exit and what it printed.
 * A non-zero exit is an error: a failing command has nothing to measure.
 */
export function timeProcess(command, args, { env, cwd, timeoutMs = 30_000 }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawnTracked(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let end = 0;
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => (end = performance.now()));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`${[command, ...args].join(' ')} exited ${code ?? signal}:\n${stderr || stdout}`.trimEnd()));
      } else {
        resolve({ ms: end - start, stdout, stderr });
      }
    });
  });
}

/**
 * Runs each subject `warmup` times, then `runs` rounds of one run each in a fixed order (A B C A B C ...).
 * A subject is { name, run: () => Promise<number (ms)> }. Resolves with name -> samples.
 */
export async function interleave(subjects, { runs, warmup, progress }) {
  const samples = new Map(subjects.map((s) => [s.name, []]));
  for (let i = 0; i < warmup; i++) for (const subject of subjects) await subject.run();
  for (let i = 0; i < runs; i++) {
    for (const subject of subjects) samples.get(subject.name).push(await subject.run());
    progress?.(i + 1, runs);
  }
  return new Map([...samples].map(([name, list]) => [name, { samples: list, stats: summarize(list) }]));
}

// CSI and OSC sequences and two-character escapes: what a terminal interprets rather than shows.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[[0-?]*[ -/]*[@-~]|\u001B\][^\u0007\u001B]*(?:\u0007|\u001B\\)|\u001B[@-Z\\-_]/g;

export function stripAnsi(text) {
  return text.replace(ANSI, '');
}

/**
 * Starts `shellCommand` in a pseudo-terminal of rows x cols (util-linux `script`) and watches what it draws.
 * `until(text)` is checked on the output so far, escapes removed; resolves with the milliseconds from spawn to
 * the first moment it holds, and the output (`settleMs` more of it, for a look at the whole screen). Then each of
 * `steps` ({ name, keys, until }) in turn: its keys are written to the terminal, and `stepMs[name]` is the time from
 * that write to the first moment its `until` holds on what was drawn since. Then sends `quit` and waits for the exit,
 * ending the processes after 5 s.
 */
export function timeTerminal(shellCommand, { env, cwd, rows, cols, until, steps = [], quit = 'q', timeoutMs = 30_000, settleMs = 0 }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const inner = `stty rows ${rows} cols ${cols}; exec ${shellCommand}`;
    const child = spawnTracked('script', ['-qfec', inner, '/dev/null'], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const closed = new Promise((done) => child.once('close', done));
    let raw = '';
    let seenAt = 0;
    let inside = [];
    const stepMs = {};
    // The step under way: its index in `steps`, where what it drew starts in `raw`, and when its keys were sent.
    let step = -1;
    let stepFrom = 0;
    let stepAt = 0;
    const nextStep = () => {
      step++;
      if (step >= steps.length) {
        setTimeout(() => void finish(), settleMs);
        return;
      }
      stepFrom = raw.length;
      stepAt = performance.now();
      child.stdin.write(steps[step].keys);
    };
    const kill = (pid) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const finish = async () => {
      clearTimeout(timer);
      if (child.stdin.writable) child.stdin.write(quit);
      const killer = setTimeout(() => {
        inside.forEach(kill);
        child.kill('SIGKILL');
      }, 5000);
      await closed;
      clearTimeout(killer);
      for (const pid of inside) untrackGrandchild(pid);
      resolve({ ms: seenAt - start, stepMs, output: stripAnsi(raw) });
    };
    const timer = setTimeout(() => {
      inside.forEach(kill);
      child.kill('SIGKILL');
      const awaited = seenAt === 0 ? 'nothing awaited came' : `the step "${steps[step]?.name}" did not end`;
      reject(new Error(`${shellCommand}: ${awaited} in ${timeoutMs} ms; it drew:\n${stripAnsi(raw).slice(-2000)}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      if (inside.length === 0) {
        // The program under `script` (its shell exec'd it), remembered so that cleanup can end it whatever happens.
        inside = descendants(child.pid);
        for (const pid of inside) trackGrandchild(pid, 'run.js');
      }
      raw += chunk;
      if (seenAt === 0) {
        if (!until(stripAnsi(raw))) return;
        seenAt = performance.now();
        nextStep();
      } else if (step < steps.length && steps[step].until(stripAnsi(raw.slice(stepFrom)))) {
        stepMs[steps[step].name] = performance.now() - stepAt;
        nextStep();
      }
    });
    child.stdin.on('error', () => undefined);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      if (seenAt === 0) {
        clearTimeout(timer);
        reject(new Error(`${shellCommand} exited (${code ?? signal}) before drawing what was awaited; it drew:\n${stripAnsi(raw).slice(-2000)}`));
      }
    });
  });
}
