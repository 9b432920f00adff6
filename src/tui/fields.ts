import { randomUUID } from 'node:crypto';
import { codePointLength, Description, DESCRIPTION_RULE, Key, KEY_RULE, LIMITS } from '../api/schemas.js';

/** A field of a form: what it is called, the rule shown under it, and the live check with the shared src/api schema. */
export interface FieldSpec {
  id: 'key' | 'description';
  label: string;
  initial: string;
  /** Shown under the field at all times, before anything is sent. */
  rule: string;
  /** What an empty value means, shown while the field is empty. */
  whenEmpty: string;
  /** Undefined when the value is acceptable, else what is wrong with it. */
  problem(value: string): string | undefined;
  /** A running count, e.g. "12/1024". */
  counter?(value: string): string;
  /** A value to propose when the field is submitted empty (a generated key), shown before anything is sent. */
  generate?(): string;
}

function firstIssue(result: { success: boolean; error?: { issues: readonly { message: string }[] } }, fallback: string): string | undefined {
  if (result.success) return undefined;
  return result.error?.issues[0]?.message ?? fallback;
}

/**
 * The key field: where a key may be generated (`generatedPrefix`, as the server makes them: ns_<uuid v4>), an empty
 * key is not sent as it is: the form proposes a generated one and asks again (docs/contract.md, The TUI: nothing is
 * created by accident); else a key is required.
 */
export function keyField(options: { generatedPrefix?: string }): FieldSpec {
  const prefix = options.generatedPrefix;
  return {
    id: 'key',
    label: 'key',
    initial: '',
    rule: KEY_RULE,
    whenEmpty: prefix !== undefined ? `empty: a generated key (${prefix}<uuid>) is shown to accept` : 'required',
    problem: (value) => {
      if (value === '') return prefix !== undefined ? undefined : `a key is required: ${KEY_RULE}`;
      return firstIssue(Key.safeParse(value), KEY_RULE);
    },
    ...(prefix === undefined ? {} : { generate: () => `${prefix}${randomUUID()}` }),
  };
}

/**
 * The description's rule in a form's words: the API's (src/api) ends "or null", JSON's word for none, where a form has
 * an empty field and says what it means ("empty: no description").
 */
export const DESCRIPTION_WORDS = `a description is ${LIMITS.descriptionMin} to ${LIMITS.descriptionMax} characters`;

/** What is wrong with a description to send, checked with the API's schema and told in a form's words; else undefined. */
export function descriptionProblem(value: string): string | undefined {
  const problem = firstIssue(Description.safeParse(value), DESCRIPTION_RULE);
  return problem === DESCRIPTION_RULE ? DESCRIPTION_WORDS : problem;
}

/** The description field: `clears` when an empty value removes an existing description (an edit), else it means none. */
export function descriptionField(options: { initial?: string | null | undefined; clears: boolean }): FieldSpec {
  return {
    id: 'description',
    label: 'description',
    initial: options.initial ?? '',
    rule: DESCRIPTION_WORDS,
    whenEmpty: options.clears ? 'empty: enter CLEARS the description' : 'empty: no description',
    problem: (value) => (value === '' ? undefined : descriptionProblem(value)),
    counter: (value) => `${codePointLength(value)}/${LIMITS.descriptionMax}`,
  };
}
