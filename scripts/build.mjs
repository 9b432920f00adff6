// Bundles the CLI with esbuild: one file per command (oclif loads only the one in hand, through the manifest),
// code shared between commands in chunks, and what only some commands need (the server, the store, the TUI)
// in chunks of their own, loaded by `await import` when such a command runs. Fewer, smaller files to resolve
// and compile is most of what `kb`'s start-up costs (docs/performance.md). The packages every command loads
// (oclif, undici, conf), the TUI's React and Ink, and kb serve's fastify and pino are bundled apart, in three scripts
// compiled with V8 code caches: scripts/vendor.mjs.
//
// `npm run build` is this script, whole: the bundle, the oclif manifest, the vendor code caches. It never touches the
// dist/ that a running kb reads: it builds into dist.new-PID beside it, makes the manifest from a staged copy of the
// package (.build-PID: package.json, bin/, dist linked to dist.new-PID), and only then swaps the new build in whole
// (exchanged with dist in one step where it can be, else dist to dist.old-PID and dist.new-PID to dist; the manifest
// renamed over the old one), so a kb that starts meanwhile runs the old build or the new one, never half of either,
// and always finds a dist/. The code caches are made last, in dist/ itself, each file
// written whole and renamed in: V8 keeps in a cache the file name the bundle had when the cache was made, and a cache
// made in dist.new-PID named a directory that no longer exists in every stack trace and profile of oclif's and
// undici's code. Until they are in, a kb that starts compiles the bundles from their text: slower, not different.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { sortManifest } from './sort-manifest.mjs';
import { makeVendorCaches } from './vendor-cache.mjs';
import { buildVendor, vendorStandIns } from './vendor.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const live = join(root, 'dist');
const dist = join(root, `dist.new-${process.pid}`);
const stage = join(root, `.build-${process.pid}`);

/** Whether process `pid` runs (a build that was killed leaves its directories behind). */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Removes what builds that no longer run left behind: their new, old and staged directories. */
function removeAbandoned() {
  for (const name of readdirSync(root)) {
    const match = /^(?:dist\.(?:new|old)|\.build)-(\d+)(?:-\d+)?$/.exec(name);
    if (match && (Number(match[1]) === process.pid || !running(Number(match[1])))) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/**
 * Linux's renameat2 with RENAME_EXCHANGE, through python3's ctypes (Node has no binding for it): two paths swapped in
 * one step. Exits with the errno where the call fails.
 */
const EXCHANGE = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, os.fsencode(sys.argv[1]), AT_FDCWD, os.fsencode(sys.argv[2]), RENAME_EXCHANGE) != 0:
    sys.exit(ctypes.get_errno())`;

/** Swaps directories a and b in one step; false where that cannot be done here (no python3, not Linux, an old kernel). */
function exchange(a, b) {
  if (process.platform !== 'linux') return false;
  try {
    execFileSync('python3', ['-c', EXCHANGE, a, b], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Puts the new build in dist/'s place. Where it can, in one step (exchange): two renames leave an instant with no
 * dist/, in which a kb that loads a file finds none (test/e2e/build-swap.test.ts met it: bin/run.js looks again only
 * for its first file). Another build may swap at the same time: then the last one in place wins.
 */
function swapIn() {
  if (exchange(dist, live)) {
    rmSync(dist, { recursive: true, force: true });
    return;
  }
  for (let attempt = 0; ; attempt++) {
    const old = join(root, `dist.old-${process.pid}-${attempt}`);
    try {
      renameSync(live, old);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    try {
      renameSync(dist, live);
      return;
    } catch (error) {
      // Another build put its dist in place between the two renames: move it aside too, and try again.
      if ((error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') || attempt >= 10) throw error;
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  }
}

removeAbandoned();
mkdirSync(dist);

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
  // Not part of kb: what scripts/vendor-cache.mjs runs to warm the vendor code cache with the TUI's first screen.
  { in: join(root, 'scripts/vendor-warm-tui.mjs'), out: 'vendor/warm-tui' },
];

const vendor = await buildVendor(root, dist);
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
    // Native addons and the database drivers stay packages.
    'better-sqlite3',
    'pg',
    // jq compiled to WebAssembly, inlined in 1.4 MB of Emscripten's JavaScript: loaded as it ships, only for --jq.
    'jq-wasm',
    // Optional peers that are never used here but would otherwise be bundled (typescript alone is 3.5 MB).
    'typescript',
    'ts-node',
    'tsx',
    'react-devtools-core',
  ],
  // React and Ink pick their production builds, as they would with NODE_ENV=production.
  define: { 'process.env.NODE_ENV': '"production"' },
  // Bundled CommonJS modules call require(); ESM output has none of its own.
  banner: { js: "import { createRequire as __kbRequire } from 'node:module'; const require = __kbRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [vendorStandIns(root, vendor.names)],
});

// Which sources each output file holds: the start-up test reads it to tell what a command loaded.
const outputs = Object.fromEntries(
  Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, output]) => [relative(dist, join(root, file)), Object.keys(output.inputs)]),
);
const loaders = Object.keys(outputs).filter((file) => outputs[file].includes('scripts/vendor-load.mjs'));
if (loaders.length !== 1 || !loaders[0].startsWith('chunks/')) throw new Error(`scripts/vendor-load.mjs must be bundled into one chunk, not ${loaders.join(', ')}`);
Object.assign(outputs, vendor.inputs);
writeFileSync(join(dist, 'bundle-inputs.json'), `${JSON.stringify(outputs, null, 1)}\n`);

// The manifest and the code caches, made by running the new build as the installed package would run it.
mkdirSync(stage);
for (const entry of ['package.json', 'bin']) cpSync(join(root, entry), join(stage, entry), { recursive: true });
symlinkSync(relative(stage, dist), join(stage, 'dist'));
// In the stage's directory: oclif's manifest command first deletes the oclif.manifest.json of its working directory,
// which in the package's own would leave a kb that starts meanwhile without one.
// OCLIF_SKIP_NEW_VERSION_CHECK: the oclif tool would otherwise start a process that asks the npm registry for its
// own newer version, and print "oclif update available" into every build's output.
execFileSync(process.execPath, [join(root, 'node_modules/oclif/bin/run.js'), 'manifest', stage], {
  cwd: stage,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true' },
});
// oclif resolves dist/ to where it really is, dist.new-PID: the manifest names the place it will be in.
sortManifest(join(stage, 'oclif.manifest.json'), (path) => {
  const [up, dir, ...rest] = path;
  if (up === '..' && dir === relative(root, dist)) return ['dist', ...rest];
  if (up === 'dist') return path;
  throw new Error(`oclif's manifest names a command at ${path.join('/')}, outside the new build`);
});

swapIn();
renameSync(join(stage, 'oclif.manifest.json'), join(root, 'oclif.manifest.json'));
rmSync(stage, { recursive: true, force: true });
await makeVendorCaches(root);
