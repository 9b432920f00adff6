import type { Plugin } from 'esbuild';

/** See vendor.mjs. */
export declare const BUNDLES: Record<string, string[]>;
export declare const VENDORED: string[];
export declare const PATCH_RULES: string[];
export declare function checkPatches(counts: Map<string, number> | Record<string, number>): void;
export declare function buildVendor(
  root: string,
  dist: string,
): Promise<{ names: Record<string, string[]>; inputs: Record<string, string[]>; applied: Record<string, number> }>;
export declare function vendorStandIns(root: string, names: Record<string, string[]>): Plugin;
