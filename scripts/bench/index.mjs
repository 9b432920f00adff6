#!/usr/bin/env node
// The benchmark of issue #5: kb's start times, TUI, server throughput and scale, each beside a baseline measured
// in the same run. Not a test: CI never runs it. Usage: see lib/options.mjs, or --help.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine } from './lib/engines.mjs';
import { isolatedHome } from './lib/env.mjs';
import { ApiClient, pool } from './lib/http.mjs';
import { cleanup, installSignalHandlers, isAborted, tempDir } from './lib/lifecycle.mjs';
import { parseOptions, USAGE } from './lib/options.mjs';
import { machine, renderHeader, renderSection } from './lib/report.mjs';
import { cliSection } from './sections/cli.mjs';
import { exportScaleSection } from './sections/export-scale.mjs';
import { nodeVersionsSection } from './sections/node-versions.mjs';
import { profileSection } from './sections/profile.mjs';
import { replicasSection } from './sections/replicas.mjs';
import { scaleSection } from './sections/scale.mjs';
import { serverSection } from './sections/server.mjs';
import { tuiSection } from './sections/tui.mjs';
import { watchersSection } from './sections/watchers.mjs';
import { writesSection } from './sections/writes.mjs';

const RUNNERS = {
  cli: cliSection,
  'node-versions': nodeVersionsSection,
  tui: tuiSection,
  server: serverSection,
  profile: profileSection,
  'export-scale': exportScaleSection,
  scale: scaleSection,
  replicas: replicasSection,
  writes: writesSection,
  watchers: watchersSection,
};
/** Sections that start servers of their own: the main one would only add noise. */
const OWN_SERVERS = new Set(['scale', 'replicas', 'profile', 'writes', 'watchers']);
const SMALL = 100;

const kb = {
  root: fileURLToPath(new URL('../..', import.meta.url)),
  bin: fileURLToPath(new URL('../../bin/run.js', import.meta.url)),
  benchDir: fileURLToPath(new URL('.', import.meta.url)),
};

function progress(message) {
  process.stderr.write(`${process.stderr.isTTY ? '\r\u001B[K' : ''}bench: ${message}${process.stderr.isTTY ? '' : '\n'}`);
}

function tick(done, total) {
  if (process.stderr.isTTY) process.stderr.write(`\r\u001B[Kbench: ${done}/${total}`);
}

function endProgress() {
  if (process.stderr.isTTY) process.stderr.write('\r\u001B[K');
}

/** The 100 namespaces of organization `local` that sections 1 to 3 list. */
async function seedSmall(ctx) {
  const keys = Array.from({ length: SMALL }, (_, i) => `bench-ns-${String(i).padStart(3, '0')}`);
  const client = new ApiClient(ctx.main.urls, ctx.tokens.small);
  await pool(keys, 16, (key) => client.post('/ns_create', { key, description: `Namespace ${key.slice(9)} of the benchmark` }));
  client.close();
  ctx.seed = { smallKeys: keys, smallCount: keys.length };
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  installSignalHandlers();
  const root = tempDir();
  const home = isolatedHome(root);
  const info = machine(kb.root);
  process.stdout.write(renderHeader(info, options));

  const sections = [];
  const failures = [];
  const ctx = { options, kb, root, home, progress, tick, shared: {}, tokens: {} };
  try {
    ctx.engine = createEngine(options.engine, kb, root);
    ctx.engine.check(options);
    progress(`starting the ${options.engine} engine`);
    await ctx.engine.start(home);
    if (options.only.some((s) => !OWN_SERVERS.has(s))) {
      progress('starting kb serve and seeding 100 namespaces');
      ctx.main = await ctx.engine.group('main', home, options.replicas);
      ctx.tokens.small = ctx.main.firstToken;
      await seedSmall(ctx);
    }
    for (const name of options.only) {
      if (OWN_SERVERS.has(name) && ctx.main) {
        await ctx.main.stop();
        ctx.main = undefined;
      }
      try {
        const section = await RUNNERS[name](ctx);
        endProgress();
        sections.push({ name, ...section });
        process.stdout.write(`\n${renderSection(section)}`);
      } catch (error) {
        endProgress();
        if (isAborted()) throw error;
        failures.push({ section: name, message: error.message });
        process.stdout.write(`\n## ${name}: FAILED TO RUN\n\n${error.stack ?? error.message}\n`);
      }
    }
  } catch (error) {
    endProgress();
    if (isAborted()) return 130;
    failures.push({ section: 'setup', message: error.message });
    process.stdout.write(`\nbench: ${error.message}\n`);
  } finally {
    progress('cleaning up');
    await cleanup();
    endProgress();
  }

  const figures = sections.flatMap((s) => s.figures);
  const missed = figures.filter((f) => f.result === 'FAIL');
  const passed = figures.filter((f) => f.result === 'PASS');
  process.stdout.write(
    `\n## Summary\n\n${passed.length} budgets PASS, ${missed.length} FAIL${failures.length > 0 ? `, ${failures.length} section(s) failed to run` : ''}.` +
      `${missed.map((f) => `\n- FAIL: ${f.name}`).join('')}${failures.map((f) => `\n- ERROR: ${f.section}: ${f.message.split('\n')[0]}`).join('')}\n` +
      `Load average at the end: ${machine(kb.root).loadavg}.\n`,
  );
  if (options.json) {
    const result = {
      machine: info,
      options,
      sections: sections.map(({ name, title, figures: f, raw }) => ({ name, title, figures: f, raw })),
      passed: passed.length,
      failed: missed.map((f) => f.name),
      errors: failures,
    };
    writeFileSync(options.json, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`Results written to ${options.json}.\n`);
  }
  if (failures.length > 0) return 2;
  return options.check && missed.length > 0 ? 1 : 0;
}

// An explicit exit: an open handle must not keep the benchmark alive, nor may a library's exit hook choose the code.
process.exit(await main());
