import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUICK_INPUT, QUICK_OUTPUT, type Quick, quickEnvelope, quickFailure, REFUSED } from '../../src/api/quick.js';
import { ROUTES, type RouteName } from '../../src/api/routes.js';
import { FailureEnvelope, successEnvelope } from '../../src/api/schemas.js';
import type * as z from '../../src/api/zod.js';

/** Keys: valid ones, and ones just outside the rule (a length, a character, a type). */
const key = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{3,63}$/) },
  fc.constantFrom('ab', 'a'.repeat(64), 'a'.repeat(63), 'abc', 'a.b', 'ab ', 'ns_é', '', 'docs\n'),
  fc.string({ unit: 'binary', maxLength: 70 }),
  fc.constantFrom(null, undefined, 12, true, ['docs'], { key: 'docs' }),
);

/** Descriptions: valid ones (emoji and other surrogate pairs too), and ones just outside the rules. */
const description = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }) },
  fc.string({ unit: 'grapheme', minLength: 0, maxLength: 12 }),
  fc.constantFrom('', 'x'.repeat(1024), 'x'.repeat(1025), '😀'.repeat(1024), '😀'.repeat(1025), `${'x'.repeat(1023)}😀`, 'a\uD800b', '\uDC00', '\uD83D'),
  fc.string({ unit: 'binary-ascii', minLength: 1020, maxLength: 1030 }),
  fc.constantFrom(null, null, undefined, 0, false, ['x'], { text: 'x' }),
);

/** Objects with some of `fields` (each maybe absent), now and then a field more, or not an object at all. */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const names = Object.keys(fields);
  const record = fc.record(fields, { requiredKeys: [] });
  const full = fc.record(fields);
  const extra = fc.tuple(full, fc.constantFrom('extra', '__proto__', 'constructor', 'toString', 'KEY', names[0] ?? 'x'), fc.jsonValue()).map(
    ([value, name, more]) => JSON.parse(JSON.stringify({ ...value, [name]: more })) as unknown,
  );
  return fc.oneof({ weight: 4, arbitrary: full }, { weight: 2, arbitrary: record }, extra, fc.jsonValue(), fc.anything(), fc.constantFrom(null, [], 'x'));
}

const namespace = objectOf({ key, description });
const base = objectOf({ namespace: key, key, description });
const list = (element: fc.Arbitrary<unknown>) => fc.oneof(fc.array(element, { maxLength: 6 }), element);

/** What each route's quick validators see: inputs as code builds them, outputs as JSON.parse gives them. */
const INPUTS: { [N in RouteName]: fc.Arbitrary<unknown> } = {
  health: objectOf({}),
  auth: objectOf({}),
  ns_list: objectOf({}),
  base_list_all: objectOf({}),
  base_list: objectOf({ namespace: key }),
  ns_create: objectOf({ key, description }),
  base_create: objectOf({ namespace: key, key, description }),
  ns_update: objectOf({ namespace: key, data: objectOf({ description }) }),
  base_update: objectOf({ namespace: key, base: key, data: objectOf({ description }) }),
  base_delete: objectOf({ namespace: key, base: key }),
  ns_delete: objectOf({ namespace: key, cascade: fc.constantFrom(true, false, undefined, null, 'true', 1) }),
};
const OUTPUTS: { [N in RouteName]: fc.Arbitrary<unknown> } = {
  health: fc.oneof(fc.constant('alive'), fc.constantFrom('Alive', 'alive ', '', null), fc.jsonValue()),
  auth: fc.oneof(key, fc.jsonValue()),
  ns_create: namespace,
  ns_update: namespace,
  ns_delete: namespace,
  base_create: base,
  base_update: base,
  base_delete: base,
  ns_list: list(namespace),
  base_list: list(base),
  base_list_all: list(base),
};

/** A JSON text and back, as a reply reaches the client (undefined fields gone, keys in the text's order). */
const asJson = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)) as unknown);

/** The quick validator answers what zod answers: the same value, keys in the same order, or REFUSED where zod refuses. */
function sameAsZod(quick: Quick, schema: z.ZodMiniType, value: unknown): void {
  const zod = schema.safeParse(value);
  const fast = quick(value);
  if (!zod.success) {
    expect(fast).toBe(REFUSED);
    return;
  }
  expect(fast).toStrictEqual(zod.data);
  // toStrictEqual ignores the order of keys; what the CLI prints does not.
  expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
}

describe('quick validators (src/api/quick.ts) answer exactly what the zod schemas answer', () => {
  const RUNS = 400;
  for (const name of Object.keys(ROUTES) as RouteName[]) {
    it(`${name}: its input, as code builds it`, () => {
      const quick = QUICK_INPUT[name];
      expect(quick).toBeDefined();
      fc.assert(fc.property(INPUTS[name], (value) => sameAsZod(quick as Quick, ROUTES[name].input.schema, value)), { numRuns: RUNS });
    });

    it(`${name}: its reply's data, in its envelope, as JSON.parse gives it`, () => {
      const quick = QUICK_OUTPUT[name];
      expect(quick).toBeDefined();
      const envelope = successEnvelope(ROUTES[name].output);
      const replies = fc.oneof(
        { weight: 6, arbitrary: OUTPUTS[name].map((data) => ({ success: true, data })) },
        OUTPUTS[name].map((data) => ({ success: true, data, extra: 1 })),
        OUTPUTS[name].map((data) => ({ success: false, data })),
        OUTPUTS[name].map((data) => ({ data })),
        fc.jsonValue(),
      );
      fc.assert(
        fc.property(replies, (reply) => {
          const json = asJson(reply);
          const zod = envelope.safeParse(json);
          const fast = quickEnvelope(json, quick as Quick);
          if (!zod.success) expect(fast).toBe(REFUSED);
          else {
            expect(fast).toStrictEqual((zod.data as { data: unknown }).data);
            expect(JSON.stringify(fast)).toBe(JSON.stringify((zod.data as { data: unknown }).data));
          }
        }),
        { numRuns: RUNS },
      );
      // And the data alone, not through JSON: what zod takes of any value.
      fc.assert(fc.property(OUTPUTS[name], (value) => sameAsZod(quick as Quick, ROUTES[name].output, value)), { numRuns: RUNS });
    });
  }

  it('a failure envelope, as JSON.parse gives it', () => {
    const message = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom(null, 1, ['x']));
    const help = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom(null, undefined, 0, false, { text: 'x' }));
    const success = fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constantFrom(true, 'false', 0, null));
    const replies = fc.oneof(
      { weight: 4, arbitrary: objectOf({ success, message, help }) },
      fc.record({ success, message, help }).map((reply) => ({ ...reply, code: 'not_found' })),
      fc.jsonValue(),
    );
    fc.assert(fc.property(replies, (reply) => sameAsZod(quickFailure, FailureEnvelope, asJson(reply))), { numRuns: RUNS });
    // And as code builds one (help present but undefined).
    fc.assert(fc.property(objectOf({ success, message, help }), (reply) => sameAsZod(quickFailure, FailureEnvelope, reply)), { numRuns: RUNS });
  });

  it('takes the valid values it is given (the fast path is not just a refusal)', () => {
    expect(QUICK_OUTPUT.ns_list?.([{ key: 'docs', description: null }, { key: 'api-v2', description: '😀 docs' }])).toEqual([
      { key: 'docs', description: null },
      { key: 'api-v2', description: '😀 docs' },
    ]);
    expect(QUICK_INPUT.ns_create?.({ key: 'docs' })).toEqual({ key: 'docs' });
    expect(QUICK_INPUT.base_update?.({ namespace: 'docs', base: 'guide', data: { description: null } })).toEqual({
      namespace: 'docs', base: 'guide', data: { description: null },
    });
    expect(quickEnvelope({ success: true, data: 'alive', extra: 1 }, QUICK_OUTPUT.health as Quick)).toBe('alive');
    expect(quickFailure({ success: false, message: 'Namespace docs not found', help: 'Run kb ns list', code: 'x' })).toEqual({
      success: false, message: 'Namespace docs not found', help: 'Run kb ns list',
    });
  });
});
