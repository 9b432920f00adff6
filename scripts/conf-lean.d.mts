import type { Plugin } from 'esbuild';

/** See conf-lean.mjs. */
export declare const confLean: Plugin;

/** How often each stub was handed out, by module name. */
export declare const confLeanApplied: Map<string, number>;

/** The modules inside conf that are stubbed, with their stubs' source. */
export declare const CONF_UNUSED: Record<string, string>;
