// The vendor bundles: the packages every command loads (oclif, undici, conf), bundled as one CommonJS script,
// dist/vendor/vendor.cjs, the TUI's (React, Ink) as another, dist/vendor/vendor-tui.cjs, and kb serve's (fastify,
// pino) as a third, dist/vendor/vendor-server.cjs, which scripts/vendor-load.mjs compiles with V8 code caches made at
// build time (scripts/vendor-cache.mjs). Node 20 keeps no compiled code between runs for ES modules, and compiling these
// packages was half of what a `kb ns list` cost to start (docs/performance.md).
//
// kb's own code stays ES modules (scripts/build.mjs); where it imports one of VENDORED, the import resolves to a
// stand-in module that takes the package from the vendor bundle, so the process holds one copy of each.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { runInThisContext } from 'node:vm';
import { build } from 'esbuild';
import { CONF_UNUSED, confLean, confLeanApplied } from './conf-lean.mjs';
import { inkUnknownKeyName } from './ink-input.mjs';

/**
 * How often each patch of the vendor bundles changed something, by rule name. A package update that moves what a patch
 * looks for would otherwise leave the patch silently unapplied (and kb slower, or broken only at run time), so the build
 * fails when a rule of PATCH_RULES changed nothing: see checkPatches.
 */
const applied = new Map();
const tally = (rule) => applied.set(rule, (applied.get(rule) ?? 0) + 1);

/**
 * What kb's sources import from the vendor bundles, each module run the first time it is asked for. Three bundles,
 * each with its own code cache: what every command runs (`vendor`), the TUI's React and Ink (`vendor-tui`), which
 * a `kb ns list` would otherwise read and deserialize too (some 3% of all it does), and kb serve's fastify and pino
 * (`vendor-server`: loading them from node_modules was a fifth of the CPU a start takes, 0.12 s of 0.6).
 */
export const BUNDLES = {
  vendor: ['@oclif/core', 'undici', 'undici/lib/dispatcher/agent.js', 'conf'],
  'vendor-tui': ['react', 'react/jsx-runtime', 'react-reconciler', 'react-reconciler/constants.js', 'scheduler', 'ink'],
  'vendor-server': ['fastify', 'pino'],
};

export const VENDORED = Object.values(BUNDLES).flat();

/** The bundle that holds a package. */
const bundleOf = (name) => Object.keys(BUNDLES).find((bundle) => BUNDLES[bundle].includes(name));

/**
 * ES modules with top-level await cannot be bundled as CommonJS: yoga-layout, Ink's layout engine, awaits its
 * WebAssembly as it loads. It stays an ES module, which the stand-in for Ink imports and hands to the vendor bundle
 * (`provide`) before Ink runs; inside the bundle, `yoga-layout` is what was handed in.
 */
const PROVIDED = { ink: ['yoga-layout'] };

/**
 * Modules that packages require when they load but use only on paths `kb` rarely takes: undici's HTTP/2 client
 * (which loads node:http2; kb speaks HTTP/1.1), oclif's plugin globbing (used only without a manifest), its spinner
 * frames, its text wrapping (help and oclif's own error output), the Node built-ins oclif needs only for a WSL
 * shell check, flags read from stdin and performance tracing (off unless asked for), and the semver that conf needs
 * only for migrations. Each is replaced by a stand-in that requires the real module on first use, so a plain
 * `kb ns list` never runs them. The stand-in answers `__esModule` itself (these modules do not set it), so import
 * helpers do not load the module early.
 */
const LAZY_MODULES = [
  { importer: /undici\/lib\/dispatcher\/client\.js$/, specifier: './client-h2.js' },
  { importer: /@oclif\/core\/lib\/config\/plugin\.js$/, specifier: 'tinyglobby' },
  { importer: /@oclif\/core\/lib\/ux\/action\/spinner\.js$/, specifier: 'cli-spinners' },
  { importer: /@oclif\/core\/lib\/(errors\/errors\/(pretty-print|cli)|help\/formatter)\.js$/, specifier: 'wrap-ansi' },
  { importer: /@oclif\/core\/lib\/util\/os\.js$/, specifier: 'node:child_process' },
  { importer: /@oclif\/core\/lib\/parser\/parse\.js$/, specifier: 'node:readline' },
  { importer: /@oclif\/core\/lib\/performance\.js$/, specifier: 'node:perf_hooks' },
  { importer: /conf\/dist\/source\/index\.js$/, specifier: 'semver' },
];

const lazyModules = {
  name: 'lazy-modules',
  setup(pluginBuild) {
    const specifiers = new RegExp(`^(${LAZY_MODULES.map(({ specifier }) => specifier.replace(/[.]/g, '\\.')).join('|')})$`);
    pluginBuild.onResolve({ filter: specifiers }, async (args) => {
      if (args.pluginData?.lazy) return undefined;
      const rule = LAZY_MODULES.findIndex(({ importer, specifier }) => specifier === args.path && importer.test(args.importer));
      if (rule < 0) return undefined;
      tally(`LAZY_MODULES[${rule}]`);
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
    pluginBuild.onResolve({ filter: /^wsl-utils$/ }, (args) => {
      if (!/[\\/]@oclif[\\/]core[\\/]/.test(args.importer)) return undefined;
      tally('wslLean');
      return { path: 'wsl-utils', namespace: 'wsl-lean', pluginData: { resolveDir: args.resolveDir } };
    });
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
function plainSort(path, source) {
  if (!/[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/.test(path)) return source;
  if (!source.includes(OCLIF_SORT)) throw new Error(`${path} no longer sorts commands as scripts/vendor.mjs expects: review plainSort`);
  tally('plainSort');
  return source.replace(OCLIF_SORT, '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));');
}

/**
 * undici parses HTTP with llhttp, compiled to WebAssembly on the first connection. V8 would also optimise that code on
 * background threads, and a process that has made a request then waits ~100 ms at exit for that work to finish: far
 * more than a command ever spends parsing HTTP. So llhttp is compiled by the baseline compiler alone (`--liftoff-only`,
 * which V8 reads when it compiles a module, and which decides its tiers for good).
 *
 * The flag is set for that compile only, with every function compiled at once (V8 would otherwise compile each on its
 * first call, after the flags are back, and tier it up), and the flags are put back at once, with the two that
 * `--liftoff-only` turns off (`node --print-flag-values` shows them): while V8's flags differ from Node's start, V8
 * refuses the code caches made under other flags (Node's own for its built-in modules, and the vendor bundle's), and
 * each module loaded meanwhile would be compiled from source. The start-up test checks that nothing else loads in
 * between, and that the vendor's cache is still taken.
 * `kb tui` sets the flag for good before it loads the UI (src/tui/load.ts), and says so: then it is left alone.
 */
const LLHTTP = 'function lazyllhttp () {';
function baselineLlhttp(path, source) {
  if (!/[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/.test(path)) return source;
  if (!source.includes(LLHTTP)) throw new Error(`${path} no longer compiles llhttp as scripts/vendor.mjs expects: review baselineLlhttp`);
  tally('baselineLlhttp');
  return `${source.replace(LLHTTP, 'function lazyllhttpCompile () {')}
function lazyllhttp () {
  if (globalThis[Symbol.for('kb.wasm.baselineOnly')] === true) return lazyllhttpCompile()
  const { setFlagsFromString } = require('node:v8')
  setFlagsFromString('--liftoff-only --no-wasm-lazy-compilation')
  try {
    return lazyllhttpCompile()
  } finally {
    setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering --wasm-lazy-compilation')
  }
}`;
}

/**
 * Ink awaits, at the top level of its reconciler, React DevTools and its own package.json, when DEV=true: a development
 * aid kb does not offer (react-devtools-core is not installed), and top-level await, which a CommonJS bundle cannot
 * hold. Both go; DEV=true does nothing.
 */
const INK_DEVTOOLS = ["await import('./devtools.js');", 'await loadPackageJson()'];
function inkWithoutDevtools(path, source) {
  if (!/[\\/]ink[\\/]build[\\/]reconciler\.js$/.test(path)) return source;
  if (INK_DEVTOOLS.some((text) => !source.includes(text))) throw new Error(`${path} no longer loads its devtools as scripts/vendor.mjs expects: review inkWithoutDevtools`);
  tally('inkWithoutDevtools');
  return source.replace(INK_DEVTOOLS[0], 'void 0;').replace(INK_DEVTOOLS[1], '{ name: undefined, version: undefined }');
}

/** Ink's key parser, fixed so that no input ends kb tui: scripts/ink-input.mjs. */
function inkKeyNames(path, source) {
  const patched = inkUnknownKeyName(path, source);
  if (patched !== source) tally('inkUnknownKeyName');
  return patched;
}

const providedModules = {
  name: 'provided-modules',
  setup(pluginBuild) {
    const names = [...new Set(Object.values(PROVIDED).flat())];
    const filter = new RegExp(`^(${names.map((name) => name.replace(/[./-]/g, (c) => `\\${c}`)).join('|')})$`);
    pluginBuild.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'provided' }));
    pluginBuild.onLoad({ filter: /.*/, namespace: 'provided' }, (args) => ({ contents: `module.exports = __kbProvided(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * `import(url)` with a computed URL (oclif loading kb's commands, hooks and help class) cannot run in a script
 * compiled by `vm.Script` without an experimental Node option; it calls `__kbImport`, which the loader passes in and
 * which imports as the loader's own module would. (An `import('literal')` is bundled by esbuild and left alone.)
 */
const DYNAMIC_IMPORT = /(?<![\w$.'"`])import\((?![)'"`])/g;

/** The modules whose computed `import()` DYNAMIC_IMPORT must rewrite: oclif's loader of commands, hooks and help. */
const DYNAMIC_IMPORTERS = ['@oclif/core/lib/module-loader.js'];

/**
 * Every module of the bundle, as it finishes loading, calls `globalThis[Symbol.for('kb.loaded')]` with its path, if
 * that is set: test/fixtures/record-imports.mjs sets it, so that the start-up test sees what a command ran.
 */
function vendorSources(root) {
  return {
    name: 'vendor-sources',
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
        const patched = [plainSort, baselineLlhttp, inkWithoutDevtools, inkKeyNames].reduce((text, patch) => patch(args.path, text), await readFile(args.path, 'utf8'));
        const source = patched.replace(DYNAMIC_IMPORT, () => {
          const importer = DYNAMIC_IMPORTERS.find((name) => args.path.endsWith(`/node_modules/${name}`));
          if (importer) tally(`DYNAMIC_IMPORT ${importer}`);
          return '__kbImport(';
        });
        const loaded = `globalThis[Symbol.for('kb.loaded')]?.(${JSON.stringify(relative(root, args.path))});`;
        return { contents: `${source}\n;${loaded}\n`, loader: 'js' };
      });
    },
  };
}

/**
 * Builds dist/vendor/vendor.cjs and dist/vendor/vendor-tui.cjs, and returns the names each of VENDORED exports and the
 * sources of each bundle.
 */
export async function buildVendor(root, dist) {
  const names = {};
  const inputs = {};
  applied.clear();
  confLeanApplied.clear();
  for (const [bundle, packages] of Object.entries(BUNDLES)) {
    const built = await buildBundle(root, join(dist, `vendor/${bundle}.cjs`), packages);
    Object.assign(names, built.names);
    inputs[`vendor/${bundle}.cjs`] = built.inputs;
  }
  for (const [name, count] of confLeanApplied) applied.set(`confLean ${name}`, count);
  checkPatches(applied);
  return { names, inputs, applied: Object.fromEntries(applied) };
}

/** Every patch rule of the vendor bundles, by the name it is counted under. */
export const PATCH_RULES = [
  ...LAZY_MODULES.map((_, i) => `LAZY_MODULES[${i}]`),
  'wslLean',
  ...Object.keys(CONF_UNUSED).map((name) => `confLean ${name}`),
  'plainSort',
  'baselineLlhttp',
  'inkWithoutDevtools',
  'inkUnknownKeyName',
  ...DYNAMIC_IMPORTERS.map((name) => `DYNAMIC_IMPORT ${name}`),
];

/** Fails the build when a patch rule changed nothing: its target has moved, and the rule needs a review. */
export function checkPatches(counts) {
  const missed = PATCH_RULES.filter((rule) => !((counts.get?.(rule) ?? counts[rule]) > 0));
  if (missed.length > 0) {
    const describe = (rule) => {
      const lazy = /^LAZY_MODULES\[(\d+)\]$/.exec(rule);
      return lazy ? `${rule} (${LAZY_MODULES[Number(lazy[1])].specifier} from ${LAZY_MODULES[Number(lazy[1])].importer})` : rule;
    };
    throw new Error(`scripts/vendor.mjs: these patches of the vendor bundles changed nothing, so their target has moved (a package update?): ${missed.map(describe).join('; ')}. Review each rule against the package's new code.`);
  }
}

async function buildBundle(root, file, packages) {
  const result = await build({
    absWorkingDir: root,
    stdin: {
      contents: packages.map((name) => `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => require(${JSON.stringify(name)}) });`).join('\n'),
      resolveDir: root,
      sourcefile: 'vendor-entry.cjs',
      loader: 'js',
    },
    outfile: file,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    // Functions keep their names (`__name(fn, "name")` where each is made) only where something reads them: not in kb
    // serve's bundle, where fastify makes functions for every request and naming each cost about a sixth more CPU a
    // write (docs/performance.md, "Names in the server's bundle").
    keepNames: !file.endsWith('vendor-server.cjs'),
    sourcemap: 'linked',
    legalComments: 'linked',
    metafile: true,
    // Optional peers of oclif (for TypeScript plugins) that are never used here; and fastify's schema compilers (ajv,
    // fast-json-stringify), which kb never loads (src/server/app.ts gives fastify none to use): left to node_modules.
    external: ['typescript', 'ts-node', 'tsx', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
    // oclif, as the CLI of an installed package: under NODE_ENV=development or test it would look for TypeScript
    // sources of kb's commands and load tsx to run them.
    define: { 'process.env.NODE_ENV': '"production"' },
    // The file is one function expression, which scripts/vendor-load.mjs compiles and calls as Node calls a module.
    banner: { js: '(function (exports, require, module, __filename, __dirname, __kbImport, __kbProvided) {' },
    footer: { js: '\n})' },
    logLevel: 'warning',
    plugins: [lazyModules, wslLean, confLean, providedModules, vendorSources(root)],
  });
  // The names are read off the bundle itself, run here once.
  const vendor = { exports: {} };
  const provided = { 'yoga-layout': (await import('yoga-layout')).default };
  runInThisContext(await readFile(file, 'utf8'), { filename: file })(vendor.exports, createRequire(file), vendor, file, dirname(file), (specifier) => import(specifier), (name) => provided[name]);
  const names = Object.fromEntries(packages.map((name) => [name, Object.keys(vendor.exports[name]).filter((key) => key !== 'default' && key !== '__esModule')]));
  const output = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith('.cjs'))[1];
  return { names, inputs: Object.keys(output.inputs) };
}

/**
 * For scripts/build.mjs: inside kb's own modules, each of VENDORED resolves to a stand-in that exports what the vendor
 * bundle holds under that name. Its default export is what `import x from` gives in Node: the package's own default
 * for an ES module (which the bundle marks `__esModule`), `module.exports` for CommonJS.
 */
export function vendorStandIns(root, names) {
  return {
    name: 'vendor-stand-ins',
    setup(pluginBuild) {
      const filter = new RegExp(`^(${VENDORED.map((name) => name.replace(/[./]/g, (c) => `\\${c}`)).join('|')})$`);
      pluginBuild.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'vendor' }));
      pluginBuild.onLoad({ filter: /.*/, namespace: 'vendor' }, (args) => {
        const exported = names[args.path];
        return {
          resolveDir: join(root, 'scripts'),
          loader: 'js',
          contents: `${(PROVIDED[args.path] ?? []).map((name, i) => `import provided${i} from ${JSON.stringify(name)};`).join('\n')}
import { provide, vendored } from './vendor-load.mjs';
${(PROVIDED[args.path] ?? []).map((name, i) => `provide(${JSON.stringify(name)}, provided${i});`).join('\n')}
const m = vendored(${JSON.stringify(bundleOf(args.path))}, ${JSON.stringify(args.path)});
${exported.map((name, i) => `const $${i} = m[${JSON.stringify(name)}];`).join('\n')}
export { ${exported.map((name, i) => `$${i} as ${JSON.stringify(name)}`).join(', ')} };
export default m.__esModule ? m.default : m;`,
        };
      });
    },
  };
}
