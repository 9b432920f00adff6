// Bundles the CLI with esbuild: one file per command (oclif loads only the one in hand, through the manifest),
// code shared between commands in chunks, and what only some commands need (the server, the store, the TUI)
// in chunks of their own, loaded by `await import` when such a command runs. Fewer, smaller files to resolve
// and compile is most of what `kb`'s start-up costs (README, "Performance").
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { confLean } from './conf-lean.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const entryPoints = [
  ...sources(join(root, 'src/commands')),
  join(root, 'src/cli/run.ts'),
  join(root, 'src/cli/help.ts'),
  join(root, 'src/cli/hooks/not-found.ts'),
];

/**
 * Modules that packages require when they load but use only on paths `kb` rarely takes: undici's HTTP/2 client
 * (which loads node:http2; kb speaks HTTP/1.1), oclif's plugin globbing (used only without a manifest), its spinner
 * frames, its text wrapping (help and oclif's own error output), and the Node built-ins oclif needs only for a WSL
 * shell check, flags read from stdin and performance tracing (off unless asked for). Each is replaced by a stand-in that
 * requires the real module on first use, so a plain `kb ns list` never loads them. The stand-in answers
 * `__esModule` itself (these modules do not set it), so TypeScript's import helpers do not load the module early.
 */
const LAZY_MODULES = [
  { importer: /undici\/lib\/dispatcher\/client\.js$/, specifier: './client-h2.js' },
  { importer: /@oclif\/core\/lib\/config\/plugin\.js$/, specifier: 'tinyglobby' },
  { importer: /@oclif\/core\/lib\/ux\/action\/spinner\.js$/, specifier: 'cli-spinners' },
  { importer: /@oclif\/core\/lib\/(errors\/errors\/(pretty-print|cli)|help\/formatter)\.js$/, specifier: 'wrap-ansi' },
  { importer: /@oclif\/core\/lib\/util\/os\.js$/, specifier: 'node:child_process' },
  { importer: /@oclif\/core\/lib\/parser\/parse\.js$/, specifier: 'node:readline' },
  { importer: /@oclif\/core\/lib\/performance\.js$/, specifier: 'node:perf_hooks' },
];

const lazyModules = {
  name: 'lazy-modules',
  setup(pluginBuild) {
    const specifiers = new RegExp(`^(${LAZY_MODULES.map(({ specifier }) => specifier.replace(/[.]/g, '\\.')).join('|')})$`);
    pluginBuild.onResolve({ filter: specifiers }, async (args) => {
      if (args.pluginData?.lazy || !LAZY_MODULES.some(({ importer, specifier }) => specifier === args.path && importer.test(args.importer))) return undefined;
      const real = await pluginBuild.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: { lazy: true } });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy', pluginData: { real: real.path } };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: 'lazy' }, (args) => ({
      resolveDir: dirname(args.pluginData.real),
      loader: 'js',
      contents: `let real;
const load = () => (real ??= require(${JSON.stringify(args.pluginData.real)}));
module.exports = new Proxy(function lazy() {}, {
  get: (_, key) => (key === '__esModule' ? undefined : load()[key]),
  has: (_, key) => key in load(),
  apply: (_, self, args) => load().apply(self, args),
});`,
    }));
  },
};

/**
 * oclif asks `wsl-utils` whether this is WSL on every start (to name the platform), and wsl-utils loads
 * node:child_process, node:fs/promises and its PowerShell helpers with it. Inside oclif, `wsl-utils` resolves to this:
 * `is-wsl` (the answer wsl-utils gives) and its PowerShell path, loaded only if ever asked (on Windows).
 */
const wslLean = {
  name: 'wsl-lean',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^wsl-utils$/ }, (args) =>
      /[\\/]@oclif[\\/]core[\\/]/.test(args.importer) ? { path: 'wsl-utils', namespace: 'wsl-lean', pluginData: { resolveDir: args.resolveDir } } : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'wsl-lean' }, (args) => ({
      resolveDir: args.pluginData.resolveDir,
      loader: 'js',
      contents: `export { default as isWsl } from 'is-wsl';
export const powerShellPath = async () => (await import('wsl-utils')).powerShellPath();`,
    }));
  },
};

/**
 * oclif sorts a plugin's commands with `localeCompare` as it loads them, on every start. The first `localeCompare` of a
 * process builds ICU's collator and its list of locales, some 9% of all a `kb ns list` does. Command ids are ASCII
 * (lowercase words and colons), which a code-unit comparison orders the same way.
 */
const OCLIF_SORT = '.sort((a, b) => a.id.localeCompare(b.id));';
const oclifPlainSort = {
  name: 'oclif-plain-sort',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(OCLIF_SORT)) throw new Error(`${args.path} no longer sorts commands as scripts/build.mjs expects: review oclifPlainSort`);
      return { contents: source.replace(OCLIF_SORT, '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));'), loader: 'js' };
    });
  },
};

rmSync(dist, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir: dist,
  outbase: join(root, 'src'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  keepNames: true,
  sourcemap: 'linked',
  metafile: true,
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'linked',
  external: [
    // Native addons and the database drivers stay packages; so does fastify, which loads plugins by path.
    'better-sqlite3',
    'pg',
    'fastify',
    // fastify's own logger, which the server configures (an asynchronous destination): one copy, fastify's.
    'pino',
    // Optional peers that are never used here but would otherwise be bundled (typescript alone is 3.5 MB).
    'typescript',
    'ts-node',
    'tsx',
    'react-devtools-core',
  ],
  // React and Ink pick their production builds, as they would with NODE_ENV=production.
  define: { 'process.env.NODE_ENV': '"production"' },
  // Bundled CommonJS packages (oclif, undici) call require(); ESM output has none of its own.
  banner: { js: "import { createRequire as __kbRequire } from 'node:module'; const require = __kbRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [lazyModules, confLean, wslLean, oclifPlainSort],
});

// Which sources each output file holds: the start-up test reads it to tell what a command loaded.
const outputs = Object.fromEntries(
  Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, output]) => [relative(dist, join(root, file)), Object.keys(output.inputs)]),
);
writeFileSync(join(dist, 'bundle-inputs.json'), `${JSON.stringify(outputs, null, 1)}\n`);
