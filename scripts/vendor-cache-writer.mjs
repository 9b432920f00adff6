// Loaded with `node --import` by scripts/vendor-cache.mjs into a `kb ns list --json` and a `kb serve`: as the process
// exits, writes the code caches of the vendor bundles named in $KB_VENDOR_CACHES (into $KB_VENDOR_CACHE), with the
// bytecode of every function they ran. When vendor-tui is among them, once the command is done it first draws the
// TUI's first screen on a stand-in terminal (warm-tui.js, beside the vendor bundles).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

// V8 drops the bytecode of functions that have not run for a while (React's reconciler factory runs once, as Ink
// loads), and a cache holds only the bytecode still there when it is made: in this process, none is dropped.
v8.setFlagsFromString('--no-flush-bytecode');

const made = (process.env.KB_VENDOR_CACHES ?? '').split(',');

let warmed = !made.includes('vendor-tui');
process.on('beforeExit', () => {
  if (warmed) return;
  warmed = true;
  import(pathToFileURL(join(process.env.KB_VENDOR_CACHE, 'warm-tui.js')).href)
    .then(({ warmTui }) => warmTui())
    .catch((error) => {
      process.exitCode = 1;
      process.stderr.write(`drawing the TUI to warm the code cache failed: ${error.stack}\n`);
    });
});

process.on('exit', () => {
  const scripts = globalThis[Symbol.for('kb.vendor.scripts')];
  const ran = [...(scripts?.keys() ?? [])];
  const missing = made.filter((bundle) => !ran.includes(bundle));
  if (missing.length > 0) throw new Error(`the vendor bundles ${missing.join(', ')} must have run, not only ${ran.join(', ') || 'none'}`);
  // V8 stamps a code cache with a hash of its flags, and refuses it under other flags. kb compiles the bundles under
  // Node's own; the TUI has set `--liftoff-only` (and the two flags it turns off) for good, kb serve
  // `--no-incremental-marking`, and this process keeps bytecode: put back first.
  v8.setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering --incremental-marking --flush-bytecode');
  // Whole or not at all: a kb may start and read it meanwhile.
  for (const bundle of made) {
    const script = scripts.get(bundle);
    const file = join(process.env.KB_VENDOR_CACHE, `${bundle}.cache`);
    writeFileSync(`${file}.${process.pid}.tmp`, script.createCachedData());
    renameSync(`${file}.${process.pid}.tmp`, file);
  }
});
