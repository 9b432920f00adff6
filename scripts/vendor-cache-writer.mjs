// Loaded with `node --import` by scripts/vendor-cache.mjs into a `kb ns list --json`: once the command is done, draws
// the TUI's first screen on a stand-in terminal (warm-tui.js, beside the vendor bundles in $KB_VENDOR_CACHE), then, as
// the process exits, writes the code caches of the vendor bundles, with the bytecode of every function the two ran.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

// V8 drops the bytecode of functions that have not run for a while (React's reconciler factory runs once, as Ink
// loads), and a cache holds only the bytecode still there when it is made: in this process, none is dropped.
v8.setFlagsFromString('--no-flush-bytecode');

let warmed = false;
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
  if (scripts?.size !== 2) throw new Error(`both vendor bundles must have run, not ${[...(scripts?.keys() ?? [])].join(', ') || 'none'}`);
  // V8 stamps a code cache with a hash of its flags, and refuses it under other flags. kb compiles the bundle under
  // Node's own; the TUI has set `--liftoff-only` (and the two flags it turns off) for good, and this process keeps
  // bytecode: put back first.
  v8.setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering --flush-bytecode');
  // Whole or not at all: a kb may start and read it meanwhile.
  for (const [bundle, script] of scripts) {
    const file = join(process.env.KB_VENDOR_CACHE, `${bundle}.cache`);
    writeFileSync(`${file}.${process.pid}.tmp`, script.createCachedData());
    renameSync(`${file}.${process.pid}.tmp`, file);
  }
});
