import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { loadQuery, renderQuery } from '../../src/cli/query.js';

/** What a message for a user must never hold: the name of a JavaScript error, or the words of one. */
const INTERNAL = /TypeError|ReferenceError|RangeError|Cannot read properties|undefined \(reading|is not a function/;

/** The message of what `run` threw, which must be a usage error (exit 2). */
async function usageMessage(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('--query: a bad expression is a usage error in words for a user', () => {
  it('keeps jmespath\'s own words, and none of a JavaScript error', async () => {
    expect(await usageMessage(() => loadQuery('['))).toMatch(/^Invalid --query "\[": Invalid token/);
    // jmespath itself trips over these (it reads a property of undefined): no reason it could give.
    expect(await usageMessage(() => loadQuery('='))).toBe('Invalid --query "=": not an expression kb can evaluate');
    expect(await usageMessage(() => loadQuery('foo[?a='))).toBe('Invalid --query "foo[?a=": not an expression kb can evaluate');
    const length = await loadQuery('length(a)');
    expect(await usageMessage(() => renderQuery(length, { a: 1 }, false))).toBe(
      'Invalid --query "length(a)": length() expected argument 1 to be type string,array,object but received type number instead.',
    );
    const sortBy = await loadQuery('sort_by(@, &foo)');
    expect(await usageMessage(() => renderQuery(sortBy, [1, 2], false))).toBe('Invalid --query "sort_by(@, &foo)": a function was given a value of the wrong type');
    const unknown = await usageMessage(async () => renderQuery(await loadQuery('nope(@)'), {}, false));
    expect(unknown).toMatch(/^Invalid --query "nope\(@\)": Unknown function: nope\(\)/);
  });

  it('for any expression made of JMESPath\'s tokens, over any data: a result or a usage error, never an internal one', async () => {
    const token = fc.constantFrom('a', 'b', '@', '.', '[', ']', '[]', '[?', '?', '=', '==', '!=', '<', '>', '&', '|', '||', '&&', '!', '(', ')', '{', '}', ':', ',', '*', '`1`', "'x'", 'length', 'sort_by', 'max_by', 'abs', 'keys', 'to_number', '-1', '0', ' ');
    const data = fc.jsonValue({ maxDepth: 3 });
    await fc.assert(
      fc.asyncProperty(fc.array(token, { minLength: 1, maxLength: 8 }), data, async (tokens, value) => {
        const expression = tokens.join('');
        try {
          renderQuery(await loadQuery(expression), value, false);
        } catch (error) {
          expect(error, expression).toBeInstanceOf(UsageError);
          expect((error as Error).message, expression).not.toMatch(INTERNAL);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
