import type { Plugin } from 'esbuild';

/** See conf-lean.mjs. */
export declare const confLean: Plugin;
