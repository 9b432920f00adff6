// Bundles the CLI with esbuild: one file per command (oclif loads only the one in hand, through the manifest),
// code shared between commands in chunks, and what only some commands need (the server, the store, the TUI)
// in chunks of their own, loaded by `await import` when such a command runs. Fewer, smaller files to resolve
// and compile is most of what `kb`'s start-up costs (README, "Performance"). The packages every command loads
// (oclif, undici, conf), and the TUI's React and Ink, are bundled apart, in two scripts compiled with V8 code caches:
// scripts/vendor.mjs.
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildVendor, vendorStandIns } from './vendor.mjs';

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
  // Not part of kb: what scripts/vendor-cache.mjs runs to warm the vendor code cache with the TUI's first screen.
  { in: join(root, 'scripts/vendor-warm-tui.mjs'), out: 'vendor/warm-tui' },
];

rmSync(dist, { recursive: true, force: true });
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
