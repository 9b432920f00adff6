/**
 * The CLI's entry, bundled with the commands so that they and oclif share one copy of @oclif/core
 * (bin/run.js imports it; scripts/build.mjs bundles it). Tests that run the CLI in-process import this too.
 */
export { Config, Errors, execute, run } from '@oclif/core';
// bin/run.js installs it before oclif writes anything; bundled into this file, so a command loads no module more.
export { reportOutputError, takeOverOutputErrors } from './output-errors.js';
