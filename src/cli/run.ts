/**
 * The CLI's entry, bundled with the commands so that they and oclif share one copy of @oclif/core
 * (bin/run.js imports it; scripts/build.mjs bundles it). Tests that run the CLI in-process import this too.
 */
export { Config, Errors, execute, run } from '@oclif/core';
