import type * as z from './zod.js';
import { KbApiError } from './errors.js';

/** Describes a zod failure as one line, naming each field and the rule it broke. */
/** The value at a zod issue's path in the input, or undefined where the path leaves it. */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const step of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[step];
  }
  return value;
}

export function describeIssues(error: Pick<z.core.$ZodError, 'issues'>, input?: unknown): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const where = issue.path.length > 0 ? ` in ${issue.path.join('.')}` : '';
        return `unknown field${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.join(', ')}`;
      }
      const field = issue.path.length > 0 ? issue.path.join('.') : 'value';
      if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) return `${field}: is required`;
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

function shapeOf(schema: unknown): Record<string, unknown> | undefined {
  return (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
}

/** The fields allowed in the object at `path` (e.g. `data` of an update), not only at the top level. */
function allowedFields(schema: z.ZodMiniType, path: readonly PropertyKey[] = []): string | undefined {
  let shape = shapeOf(schema);
  for (const step of path) shape = shape && Object.hasOwn(shape, step) ? shapeOf(shape[step as string]) : undefined;
  if (!shape) return undefined;
  const fields = Object.keys(shape);
  return fields.length > 0 ? `Allowed fields: ${fields.join(', ')}.` : 'No fields are allowed.';
}

/** Parses input with a schema, or throws a 400 whose message names every field and rule at fault. */
export function parseInput<S extends z.ZodMiniType>(schema: S, input: unknown, what = 'request body'): z.infer<S> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new KbApiError('bad_request', `Invalid ${what}: expected a JSON object`, allowedFields(schema));
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    const unknown = result.error.issues.find((issue) => issue.code === 'unrecognized_keys');
    throw new KbApiError(
      'bad_request',
      `Invalid ${what}: ${describeIssues(result.error, input)}`,
      unknown ? allowedFields(schema, unknown.path) : undefined,
    );
  }
  return result.data;
}
