#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { arch, platform, release } from 'node:os';
import { fileURLToPath } from 'node:url';

const RUN = new URL('../dist/cli/run.js', import.meta.url);

/**
 * dist/cli/run.js, the bundle of src/cli/run.ts: imported by its URL, so that the type check reads the source it is
 * built from rather than the bundle (tsconfig.json checks this file). A checkout that was never built (`npm ci
 * --ignore-scripts`) has none: one line says so and how to build it, and kb exits 1.
 *
 * `npm run build` puts a new dist/ in place by two renames (scripts/build.mjs): between them, for as long as the build
 * is kept off the CPU, there is no dist/, and a kb that starts then finds none of its files (test/e2e/build-swap.test.ts
 * met it on a loaded machine). A file not found is looked for again a few times, 50 ms apart; the import is asked under
 * another URL, since Node keeps a failed import's error for its URL (nothing of it ran: linking failed first).
 * @returns {Promise<typeof import('../src/cli/run.js')>}
 */
async function loadRun() {
  for (let attempt = 0; ; attempt++) {
    try {
      return await import(attempt === 0 ? RUN.href : `${RUN.href}?attempt=${attempt}`);
    } catch (error) {
      const notFound = ['ENOENT', 'ERR_MODULE_NOT_FOUND'].includes(/** @type {{ code?: string }} */ (error).code ?? '');
      if (!notFound || attempt >= 5) {
        if (existsSync(RUN)) throw error;
        const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
        process.stderr.write(`Error: kb is not built (${fileURLToPath(RUN)} is missing): run \`npm run build\` in ${root}\n`);
        process.exit(1);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** node:module, with what Node 22 added (@types/node is Node 20's). */
const nodeModule = /** @type {typeof module & { enableCompileCache?: () => unknown }} */ (module);

/** True under Windows Subsystem for Linux, as oclif decides it (through is-wsl), outside a container. */
function isWsl() {
  if (platform() !== 'linux') return false;
  /** @param {string} path */
  const read = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  const microsoft = release().toLowerCase().includes('microsoft') || read('/proc/version').toLowerCase().includes('microsoft');
  const container = existsSync('/.dockerenv') || existsSync('/run/.containerenv') || read('/proc/self/cgroup').includes('docker');
  return microsoft && !container;
}

// `kb --version` is the one answer that needs nothing but package.json, and scripts ask it often: it is printed
// here, exactly as oclif would print it (test/e2e/startup.test.ts compares them), without loading oclif.
if (process.argv[2] === '--version' || process.argv[2] === '-v') {
  const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const cpu = arch() === 'ia32' ? 'x86' : arch();
  // A full disk or a terminal gone: one line and exit 1, as every command says it; its words are loaded only then.
  process.stdout.on('error', (error) => {
    process.stderr.on('error', () => undefined);
    void loadRun().then(({ reportOutputError }) => reportOutputError(error));
  });
  process.stdout.write(`${name}/${version} ${isWsl() ? 'wsl' : platform()}-${cpu} node-${process.version}\n`);
} else {
  // oclif checks the Node version against its own package.json when it loads, loading semver to do so; bundled,
  // it cannot find that file and the check is skipped anyway, after semver has been loaded for nothing.
  // package.json's engines says which Node kb needs.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= 'true';
  // From Node 22.1, V8's compiled code is kept on disk between runs: most of what a start costs is compiling the
  // bundle. Node 20 has no such cache, and this is a no-op there.
  nodeModule.enableCompileCache?.();
  const { execute, takeOverOutputErrors } = await loadRun();
  // A full disk or a terminal gone: one line and exit 1, not a crash (src/cli/output-errors.ts).
  takeOverOutputErrors();
  // oclif would also load "user" and "link" plugins named in $KB_DATA_DIR/package.json (it takes KB_DATA_DIR for its
  // own data dir, which is kb serve's): whoever could write that file would run code in every kb command. kb has none.
  await execute({ loadOptions: { root: fileURLToPath(new URL('..', import.meta.url)), userPlugins: false } });
}
