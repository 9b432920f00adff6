import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkQuickly, parseConfigText, CheckNeeded } from '../../src/config/schema.js';
import { ConfigDataSchema, checkConfig } from '../../src/config/schema-check.js';

/** Profile names: valid ones, and ones just outside the rule. */
const name = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/) },
  fc.constantFrom('a b', '-x', '_x', 'a'.repeat(64), 'a'.repeat(63), '1', '12', '1.5', '', 'é', '__proto__', 'constructor', 'toString'),
  fc.string({ maxLength: 8 }),
);
const url = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('http://127.0.0.1:8080', 'https://kb.example.com', 'HTTP://X', 'http://h/path?q=1') },
  fc.constantFrom('ftp://x', 'http:/x', 'not a url', '', 'http://', 'https://[::1]:9', 'file:///etc'),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(null, 5, true, ['http://x'], { url: 'http://x' }),
);
const token = fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('', null, 0, false, undefined, ['t']));
const extra = fc.tuple(fc.constantFrom('org', 'version', '__proto__', 'constructor', 'url', 'token', 'profiles', 'defaultProfile'), fc.jsonValue());

/** An object of some of `fields`, maybe with an extra field, as JSON.parse gives it (a `__proto__` key an own one). */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const withSome = fc.record(fields, { requiredKeys: [] });
  const withExtra = fc.tuple(fc.record(fields), extra).map(([value, [field, more]]) => ({ ...value, [field]: more }));
  return fc
    .oneof({ weight: 4, arbitrary: fc.record(fields) }, { weight: 2, arbitrary: withSome }, withExtra, fc.jsonValue(), fc.constantFrom(null, [], 'x'))
    .map((value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)) as unknown));
}

const profile = objectOf({ url, token });
const profiles = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(name, profile, { maxKeys: 4 }) },
  fc.constantFrom(null, [], 'x', {}),
);
const config = objectOf({ defaultProfile: name, profiles });

describe('the config file\'s quick check (src/config/schema.ts) takes what zod takes, as zod gives it', () => {
  it('on generated files: the same value, keys in the same order, or undefined where zod refuses', () => {
    let taken = 0;
    fc.assert(
      fc.property(config, (json) => {
        const zod = ConfigDataSchema.safeParse(json);
        const quick = checkQuickly(json);
        if (!zod.success) {
          expect(quick).toBeUndefined();
          return;
        }
        if (quick === undefined) return;
        taken++;
        // node's deep equality: vitest's takes an own field named `constructor` (a profile's name) for the class.
        expect(isDeepStrictEqual(quick, zod.data), JSON.stringify(json)).toBe(true);
        // The order of keys is what a save writes back.
        expect(JSON.stringify(quick)).toBe(JSON.stringify(zod.data));
      }),
      { numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(100);
  });

  it('takes the files kb writes without zod, and leaves to zod only what it does not take', () => {
    const written = { defaultProfile: 'local', profiles: { local: { url: 'http://127.0.0.1:8080', token: 'kbt_x', serve: { port: 8080 } }, work: { url: 'https://kb.example.com' } } };
    expect(checkQuickly(JSON.parse(JSON.stringify(written)))).toStrictEqual(written);
    expect(parseConfigText(JSON.stringify(written), '/c.json')).toStrictEqual(written);
    // A broken file needs zod to say what is wrong: without it at hand, CheckNeeded; with it, zod's words.
    const broken = '{"profiles":{"work":{"url":"ftp://x"}}}';
    expect(() => parseConfigText(broken, '/c.json')).toThrow(CheckNeeded);
    expect(() => parseConfigText(broken, '/c.json', checkConfig)).toThrow(/profiles\.work\.url: must be an http:\/\/ or https:\/\/ URL/);
    // A file zod takes that the quick check does not (a __proto__ field): zod's value.
    const odd = '{"profiles":{},"__proto__":{"x":1}}';
    expect(() => parseConfigText(odd, '/c.json')).toThrow(CheckNeeded);
    expect(parseConfigText(odd, '/c.json', checkConfig)).toStrictEqual(ConfigDataSchema.parse(JSON.parse(odd)));
  });
});
