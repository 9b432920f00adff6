// Loaded with `node --import` by scripts/vendor-cache.mjs: writes the code cache of the vendor bundle as the process
// exits, with the bytecode of every function the command ran.
import { writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';

// V8 stamps a code cache with a hash of its flags and refuses it under other flags. The vendor bundle is compiled
// before kb sets any flag (src/client/undici.ts sets one before its first connection), so the cache is made under the
// same, unchanged flags.
v8.setFlagsFromString = () => {};
syncBuiltinESMExports();

process.on('exit', () => {
  const script = globalThis[Symbol.for('kb.vendor.script')];
  if (script === undefined) throw new Error('the vendor bundle was not loaded');
  writeFileSync(process.env.KB_VENDOR_CACHE, script.createCachedData());
});
