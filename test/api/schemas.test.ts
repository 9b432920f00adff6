import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import {
  Base,
  BaseCreateBody,
  BaseDeleteBody,
  BaseListQuery,
  BaseUpdateBody,
  codePointLength,
  Description,
  EmptyQuery,
  FailureEnvelope,
  Key,
  KbApiError,
  LIMITS,
  Namespace,
  NsCreateBody,
  NsUpdateBody,
  parseInput,
  successEnvelope,
} from '../../src/api/index.js';

const ok = (schema: z.ZodMiniType, value: unknown) => schema.safeParse(value).success;

/** Runs parseInput expecting a 400 and returns the error, so tests can read its message and help. */
function rejection(schema: z.ZodMiniType, input: unknown, what?: string): KbApiError {
  try {
    parseInput(schema, input, what);
  } catch (error) {
    expect(error).toBeInstanceOf(KbApiError);
    const apiError = error as KbApiError;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe('bad_request');
    return apiError;
  }
  throw new Error(`parseInput accepted ${JSON.stringify(input)}`);
}

const EMOJI = '\u{1F600}';

describe('Key', () => {
  it.each([
    ['the shortest key, 3 characters', 'abc'],
    ['the longest key, 63 characters', 'a'.repeat(63)],
    ['upper-case letters', 'ABCXYZ'],
    ['lower-case letters', 'abcxyz'],
    ['digits', '0123456789'],
    ['dashes', '---'],
    ['underscores', '___'],
    ['a mix of every class', 'a-b_C9'],
    ['__proto__', '__proto__'],
    ['constructor', 'constructor'],
    ['prototype', 'prototype'],
    ['hasOwnProperty', 'hasOwnProperty'],
  ])('accepts %s', (_what, key) => {
    expect(ok(Key, key)).toBe(true);
  });

  it.each([
    ['2 characters', 'ab'],
    ['64 characters', 'a'.repeat(64)],
    ['the empty string', ''],
    ['a trailing newline', 'abc\n'],
    ['a leading newline', '\nabc'],
    ['a trailing CR LF', 'abc\r\n'],
    ['a space', 'ab c'],
    ['a dot', 'ab.c'],
    ['a slash', 'ab/c'],
    ['a NUL character', 'ab\0c'],
    ['accented Latin letters', 'caf\u00e9'],
    ['Cyrillic letters', '\u043a\u043b\u044e\u0447'],
    ['full-width digits', '\uff11\uff12\uff13'],
    ['the Kelvin sign (case-folds to k)', 'ab\u212a'],
    ['an emoji', `ab${EMOJI}`],
  ])('rejects %s', (_what, key) => {
    expect(ok(Key, key)).toBe(false);
  });

  it.each([
    ['a number', 123],
    ['null', null],
    ['undefined', undefined],
    ['an array', ['abc']],
    ['an object', { key: 'abc' }],
    ['a boolean', true],
  ])('rejects %s', (_what, value) => {
    expect(ok(Key, value)).toBe(false);
  });

  it('agrees with the rule of docs/contract.md, Requests and keys, on random strings', () => {
    const allowed = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
    const char = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...allowed) },
      { weight: 1, arbitrary: fc.constantFrom('\n', '\r', ' ', '.', '\u00e9', '\u212a', EMOJI, '\0', '$', '^') },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    );
    fc.assert(
      fc.property(fc.array(char, { maxLength: 70 }), (chars) => {
        const text = chars.join('');
        const expected = text.length >= 3 && text.length <= 63 && [...text].every((c) => allowed.has(c));
        expect(ok(Key, text)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('Description', () => {
  it('counts code points, so an emoji is one character', () => {
    expect(codePointLength(EMOJI)).toBe(1);
    expect(EMOJI.length).toBe(2);
    expect(codePointLength(`a${EMOJI}b`)).toBe(3);
    expect(codePointLength('')).toBe(0);
  });

  it('counts an unpaired surrogate as one code point, as a pair after it, wherever they are', () => {
    const high = '\uD83D';
    const low = '\uDE00';
    for (const text of [high, low, `${low}${high}`, `a${high}`, `${high}${EMOJI}`, `${EMOJI}${low}`, `${low}${EMOJI}${high}x`, 'plain text']) {
      expect(codePointLength(text), JSON.stringify(text)).toBe([...text].length);
    }
  });

  it('accepts 1 character and 1024 characters', () => {
    expect(ok(Description, 'x')).toBe(true);
    expect(ok(Description, 'x'.repeat(LIMITS.descriptionMax))).toBe(true);
  });

  it('rejects the empty string and 1025 characters', () => {
    expect(ok(Description, '')).toBe(false);
    expect(ok(Description, 'x'.repeat(LIMITS.descriptionMax + 1))).toBe(false);
  });

  it('accepts 1024 emojis (2048 UTF-16 units) and rejects 1025', () => {
    expect(ok(Description, EMOJI.repeat(1024))).toBe(true);
    expect(ok(Description, EMOJI.repeat(1025))).toBe(false);
  });

  it('counts a letter with a combining accent as two characters', () => {
    const accented = 'e\u0301';
    expect(ok(Description, accented.repeat(512))).toBe(true);
    expect(ok(Description, `${accented.repeat(512)}x`)).toBe(false);
  });

  it('accepts any text: newlines, NUL, quotes, right-to-left marks', () => {
    expect(ok(Description, 'line 1\nline 2\r\n\t"quoted" \\ \0 \u200f')).toBe(true);
  });

  it('rejects unpaired surrogates, which have no UTF-8 form', () => {
    expect(ok(Description, 'a\ud800b')).toBe(false);
    expect(ok(Description, '\udc00')).toBe(false);
    expect(ok(Description, `${EMOJI}\ud83d`)).toBe(false);
  });

  it('rejects null where not nullable and accepts it where nullable', () => {
    expect(ok(Description, null)).toBe(false);
    expect(ok(z.nullable(Description), null)).toBe(true);
    expect(ok(Namespace, { key: 'abc', description: null })).toBe(true);
    expect(ok(Base, { namespace: 'abc', key: 'def', description: null })).toBe(true);
    expect(ok(NsCreateBody, { description: null })).toBe(true);
    expect(ok(BaseCreateBody, { namespace: 'abc', description: null })).toBe(true);
    expect(ok(NsUpdateBody, { namespace: 'abc', data: { description: null } })).toBe(true);
    expect(ok(BaseUpdateBody, { namespace: 'abc', base: 'def', data: { description: null } })).toBe(true);
  });

  it('rejects a description of another type', () => {
    for (const value of [1, true, ['x'], { text: 'x' }]) expect(ok(z.nullable(Description), value)).toBe(false);
  });
});

describe('request and resource schemas', () => {
  it('accept the documented shapes', () => {
    expect(NsCreateBody.parse({})).toEqual({});
    expect(NsCreateBody.parse({ key: null })).toEqual({ key: null });
    expect(NsCreateBody.parse({ key: 'abc', description: 'd' })).toEqual({ key: 'abc', description: 'd' });
    expect(BaseCreateBody.parse({ namespace: 'abc' })).toEqual({ namespace: 'abc' });
    expect(BaseCreateBody.parse({ namespace: 'abc', key: null, description: null })).toEqual({
      namespace: 'abc', key: null, description: null,
    });
    expect(NsUpdateBody.parse({ namespace: 'abc', data: {} })).toEqual({ namespace: 'abc', data: {} });
    expect(BaseUpdateBody.parse({ namespace: 'abc', base: 'def', data: { description: 'x' } })).toEqual({
      namespace: 'abc', base: 'def', data: { description: 'x' },
    });
    expect(BaseDeleteBody.parse({ namespace: 'abc', base: 'def' })).toEqual({ namespace: 'abc', base: 'def' });
    expect(BaseListQuery.parse({ namespace: 'abc' })).toEqual({ namespace: 'abc' });
    expect(EmptyQuery.parse({})).toEqual({});
  });

  it('apply the key rules to namespace and base references', () => {
    expect(ok(BaseCreateBody, { namespace: 'ab' })).toBe(false);
    expect(ok(BaseUpdateBody, { namespace: 'abc', base: 'a'.repeat(64), data: {} })).toBe(false);
    expect(ok(BaseDeleteBody, { namespace: 'abc\n', base: 'def' })).toBe(false);
    expect(ok(NsUpdateBody, { namespace: 'a b', data: {} })).toBe(false);
    expect(ok(BaseListQuery, { namespace: '' })).toBe(false);
  });

  it('require data to be an object in updates', () => {
    for (const data of [null, 'x', 1, [], true]) {
      expect(ok(NsUpdateBody, { namespace: 'abc', data })).toBe(false);
      expect(ok(BaseUpdateBody, { namespace: 'abc', base: 'def', data })).toBe(false);
    }
  });

  const strictCases: Array<[string, z.ZodMiniType, Record<string, unknown>]> = [
    ['NsCreateBody', NsCreateBody, { key: 'abc' }],
    ['NsUpdateBody', NsUpdateBody, { namespace: 'abc', data: {} }],
    ['BaseCreateBody', BaseCreateBody, { namespace: 'abc' }],
    ['BaseUpdateBody', BaseUpdateBody, { namespace: 'abc', base: 'def', data: {} }],
    ['BaseDeleteBody', BaseDeleteBody, { namespace: 'abc', base: 'def' }],
    ['BaseListQuery', BaseListQuery, { namespace: 'abc' }],
    ['EmptyQuery', EmptyQuery, {}],
    ['Namespace', Namespace, { key: 'abc', description: null }],
    ['Base', Base, { namespace: 'abc', key: 'def', description: null }],
  ];

  it.each(strictCases)('%s rejects an unknown field and the message names it', (_name, schema, valid) => {
    expect(ok(schema, valid)).toBe(true);
    const error = rejection(schema, { ...valid, colour: 'blue' });
    expect(error.message).toContain('unknown field');
    expect(error.message).toContain('colour');
    expect(error.help).toMatch(/^(Allowed fields: .*|No fields are allowed)\.$/);
  });

  it.each(['__proto__', 'constructor', 'prototype', 'toString'])(
    'treats a %s field parsed from JSON as an unknown field, not as an object property',
    (field) => {
      const input: unknown = JSON.parse(`{"key":"abc",${JSON.stringify(field)}:{"description":"x"}}`);
      const error = rejection(NsCreateBody, input);
      expect(error.message).toBe(`Invalid request body: unknown field: ${field}`);
      expect(error.help).toBe('Allowed fields: key, description.');
    },
  );

  it('names an unknown field inside data, and lists the fields allowed there', () => {
    const error = rejection(BaseUpdateBody, { namespace: 'abc', base: 'def', data: { colour: 'blue' } });
    expect(error.message).toBe('Invalid request body: unknown field in data: colour');
    expect(error.help).toBe('Allowed fields: description.');
  });
});

describe('parseInput', () => {
  it('returns the parsed value of a valid input', () => {
    expect(parseInput(BaseCreateBody, { namespace: 'abc', key: 'def' })).toEqual({ namespace: 'abc', key: 'def' });
  });

  it('says "is required" for a missing field', () => {
    const error = rejection(BaseCreateBody, {});
    expect(error.message).toBe('Invalid request body: namespace: is required');
    expect(error.help).toBeUndefined();
  });

  it('names every missing field', () => {
    const error = rejection(BaseUpdateBody, {});
    expect(error.message).toBe('Invalid request body: namespace: is required; base: is required; data: is required');
  });

  it('reports a type error, not "is required", for a field of the wrong type', () => {
    const error = rejection(BaseCreateBody, { namespace: 42 });
    expect(error.message).toMatch(/^Invalid request body: namespace: must be a string/);
    expect(error.message).not.toContain('is required');
  });

  it('reports a type error, not "is required", for a required field sent as null', () => {
    const error = rejection(BaseDeleteBody, { namespace: null, base: 'def' });
    expect(error.message).toMatch(/^Invalid request body: namespace: must be a string/);
    expect(error.message).not.toContain('is required');
  });

  it('states the broken rule for an out-of-bounds value', () => {
    expect(rejection(NsCreateBody, { key: 'ab' }).message).toBe(
      'Invalid request body: key: a key is 3 to 63 characters, each A-Z, a-z, 0-9, dash (-) or underscore (_)',
    );
    expect(rejection(NsCreateBody, { description: '' }).message).toBe(
      'Invalid request body: description: a description is 1 to 1024 characters, or null',
    );
    expect(rejection(NsUpdateBody, { namespace: 'abc', data: { description: 'x'.repeat(1025) } }).message).toBe(
      'Invalid request body: data.description: a description is 1 to 1024 characters, or null',
    );
  });

  it('names the missing field inside data', () => {
    const error = rejection(BaseUpdateBody, { namespace: 'abc', base: 'def' });
    expect(error.message).toBe('Invalid request body: data: is required');
  });

  it.each([
    ['an array', []],
    ['a string', 'abc'],
    ['a number', 1],
    ['null', null],
    ['undefined', undefined],
    ['a boolean', false],
  ])('rejects %s as the whole input, listing the allowed fields', (_what, input) => {
    const error = rejection(BaseDeleteBody, input);
    expect(error.message).toBe('Invalid request body: expected a JSON object');
    expect(error.help).toBe('Allowed fields: namespace, base.');
  });

  it('names where the input came from', () => {
    const error = rejection(EmptyQuery, { page: '2' }, 'query');
    expect(error.message).toBe('Invalid query: unknown field: page');
    expect(error.help).toBe('No fields are allowed.');
  });

  it('lists several unknown fields in one message', () => {
    expect(rejection(EmptyQuery, { a: '1', b: '2' }).message).toBe('Invalid request body: unknown fields: a, b');
  });
});

describe('envelopes', () => {
  it('FailureEnvelope requires success false and a message, help optional or null', () => {
    expect(ok(FailureEnvelope, { success: false, message: 'm' })).toBe(true);
    expect(ok(FailureEnvelope, { success: false, message: 'm', help: null })).toBe(true);
    expect(ok(FailureEnvelope, { success: false, message: 'm', help: 'h' })).toBe(true);
    expect(ok(FailureEnvelope, { success: false })).toBe(false);
    expect(ok(FailureEnvelope, { success: true, message: 'm' })).toBe(false);
    expect(ok(FailureEnvelope, { success: false, message: 1 })).toBe(false);
  });

  it('successEnvelope checks data against the route output', () => {
    const envelope = successEnvelope(Namespace);
    expect(ok(envelope, { success: true, data: { key: 'abc', description: null } })).toBe(true);
    expect(ok(envelope, { success: true, data: { key: 'ab', description: null } })).toBe(false);
    expect(ok(envelope, { success: false, data: { key: 'abc', description: null } })).toBe(false);
  });
});
