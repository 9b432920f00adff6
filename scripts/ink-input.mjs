// A fix to Ink's key parser (ink 6.8.0), applied where Ink is bundled (scripts/vendor.mjs) and where the in-process
// TUI tests load it (vitest.config.ts), so both run the same Ink.
//
// parseKeypress names a CSI or SS3 sequence by looking its code up in a table; a code the table lacks (Ctrl+F1
// `ESC[1;5P`, SGR `ESC[31m` inside a paste, any CSI ending in a letter it does not know) leaves the name undefined.
// With the Ctrl bit in the sequence's modifier, useInput then passes that name on as the input and calls
// `input.startsWith`, a TypeError that ends the process. An unknown code gets the empty name instead: a key with
// no name, which useInput hands over as no text. (Ink issue #901, fixed upstream in #902 for Ink 7, which needs Node 22.)
const UNKNOWN_KEY = 'key.name = keyName[code];';

/** `source` of `path` with the fix, if `path` is Ink's parse-keypress.js; throws if that file no longer reads as expected. */
export function inkUnknownKeyName(path, source) {
  if (!/[\\/]ink[\\/]build[\\/]parse-keypress\.js$/.test(path)) return source;
  if (!source.includes(UNKNOWN_KEY)) throw new Error(`${path} no longer names keys as scripts/ink-input.mjs expects: review inkUnknownKeyName`);
  return source.replace(UNKNOWN_KEY, "key.name = keyName[code] ?? '';");
}
