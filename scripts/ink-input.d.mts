/** See ink-input.mjs. */
export declare function inkUnknownKeyName(path: string, source: string): string;
