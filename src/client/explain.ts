import * as z from '../api/zod.js';
import { ROUTES, type RouteName } from '../api/routes.js';
import { FailureEnvelope, successEnvelope } from '../api/schemas.js';
import { describeIssues, valueAt } from '../api/validation.js';

/**
 * The client's checks by zod, loaded only when the quick validators of src/api/quick.ts refuse a value (or for `kb api`,
 * whose replies are any data): zod then says what is wrong, or takes what the quick validators do not know. A command
 * whose values pass never loads zod and the schemas it builds, some 9 ms of a start.
 */

/**
 * The success envelope of each route's output, made once: zod compiles an object schema's parser on its first parse,
 * so an envelope made afresh for every reply cost more CPU than the rest of the request (about 0.2 ms cold).
 */
const envelopes = new Map<RouteName | undefined, z.ZodMiniType>();
function envelopeOf(name: RouteName | undefined): z.ZodMiniType {
  let envelope = envelopes.get(name);
  if (envelope === undefined) {
    envelope = successEnvelope(name === undefined ? z.unknown() : ROUTES[name].output);
    envelopes.set(name, envelope);
  }
  return envelope;
}

/** A value as a local error quotes it: short strings in full, long ones by their length. */
function quoted(value: unknown): string {
  if (typeof value === 'string' && [...value].length > 60) return `(${[...value].length} characters)`;
  return JSON.stringify(value) ?? String(value);
}

/**
 * Input the client refused, in words that say so: `invalid key "a b": a key is 3 to 63 characters, ...`, one
 * clause a problem. The field is named by the last step of its path (`description` for data.description).
 */
function describeLocalIssues(error: z.core.$ZodError, input: unknown): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
      const name = String([...issue.path].reverse().find((step) => typeof step === 'string') ?? 'input');
      const value = valueAt(input, issue.path);
      return value === undefined ? `${name} is required` : `invalid ${name} ${quoted(value)}: ${issue.message}`;
    })
    .join('; ');
}

/** A route's input by its schema: as it would be sent, or what is wrong with it. */
export function checkInput(name: RouteName, input: unknown): { ok: true; data: Record<string, unknown> } | { ok: false; problems: string } {
  const parsed = ROUTES[name].input.schema.safeParse(input);
  return parsed.success ? { ok: true, data: parsed.data as Record<string, unknown> } : { ok: false, problems: describeLocalIssues(parsed.error, input) };
}

/**
 * The data of a success envelope from a route (undefined: any data), or what is wrong with the reply: `path` names
 * the route in the words of the failure.
 */
export function replyData(name: RouteName | undefined, json: unknown, path: string): { ok: true; data: unknown } | { ok: false; detail: string } {
  const success = envelopeOf(name).safeParse(json);
  if (success.success) return { ok: true, data: (success.data as { data: unknown }).data };
  if (envelopeOf(undefined).safeParse(json).success) return { ok: false, detail: `the data is not what ${path} returns (${describeIssues(success.error, json)})` };
  return { ok: false, detail: 'the JSON is not a success envelope {"success":true,"data":...}' };
}

/** A failure envelope by its schema, or undefined. */
export function failureOf(json: unknown): FailureEnvelope | undefined {
  const failure = FailureEnvelope.safeParse(json);
  return failure.success ? failure.data : undefined;
}
