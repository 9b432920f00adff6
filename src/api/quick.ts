import type { RouteName } from './route-table.js';
import { descriptionLengthOk, KEY_PATTERN, LIMITS, validUnicode } from './limits.js';

/**
 * The schemas of src/api for the values the CLI checks most, each answered without zod: what zod's safeParse gives
 * on success (a new value, its keys in the schema's order), or REFUSED, where zod then says why. zod mini runs a
 * schema through several calls and objects a field, which in a command that lives a fraction of a second is
 * interpreted code: about 60,000 instructions a namespace of a list (12% of all a `kb ns list` of 1,520 did, counted
 * with callgrind), and a tenth of what kb apply spent on each change, checking what it sends and what comes back
 * (4% of the whole apply of 500 new namespaces). Each validator here takes what zod takes and nothing else:
 * test/api/quick.test.ts holds them to zod over generated values, valid, near-valid and arbitrary.
 */
export const REFUSED: unique symbol = Symbol('refused');
export type Quick = (value: unknown) => unknown;

/** An object, as zod's object schemas take one: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether every key `for...in` finds is one of `keys`, as a strict object of zod requires. */
export function onlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/** Key of src/api/schemas.ts. */
export function isKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}

const ANY_SURROGATE = /[\uD800-\uDFFF]/;

/** Description of src/api/schemas.ts (a string: null is the caller's to allow). */
export function isDescription(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  // A surrogate at all is rare: only then is it worth asking whether one is alone.
  if (ANY_SURROGATE.test(value) && !validUnicode(value)) return false;
  // Code points: at most one per UTF-16 unit, at least one per two, so a length within the limits is within them.
  return (value.length >= LIMITS.descriptionMin && value.length <= LIMITS.descriptionMax) || descriptionLengthOk(value);
}

const isNullableDescription = (value: unknown): value is string | null => value === null || isDescription(value);

/**
 * An optional field of a strict object: absent, it stays absent; present, undefined and null stay what they are and
 * anything else must pass `valid`. Sets it on `out`; false when the value is refused.
 */
function optionalField(value: Record<string, unknown>, out: Record<string, unknown>, key: string, valid: (field: unknown) => boolean): boolean {
  if (!(key in value)) return true;
  const field = value[key];
  if (field !== undefined && field !== null && !valid(field)) return false;
  out[key] = field;
  return true;
}

const NAMESPACE_KEYS = new Set(['key', 'description']);
const BASE_KEYS = new Set(['namespace', 'key', 'description']);

/** Namespace: {key, description}. */
export function quickNamespace(value: unknown): unknown {
  if (!isObject(value) || !onlyKeys(value, NAMESPACE_KEYS)) return REFUSED;
  const { key, description } = value;
  if (!isKey(key) || !isNullableDescription(description)) return REFUSED;
  return { key, description };
}

/** Base: {namespace, key, description}. */
export function quickBase(value: unknown): unknown {
  if (!isObject(value) || !onlyKeys(value, BASE_KEYS)) return REFUSED;
  const { namespace, key, description } = value;
  if (!isKey(namespace) || !isKey(key) || !isNullableDescription(description)) return REFUSED;
  return { namespace, key, description };
}

/** An array of what `element` takes. */
function quickArray(element: Quick): Quick {
  return (value) => {
    if (!Array.isArray(value)) return REFUSED;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const parsed = element(value[i]);
      if (parsed === REFUSED) return REFUSED;
      out[i] = parsed;
    }
    return out;
  };
}

const CREATE_KEYS = new Set(['key', 'description']);
const BASE_CREATE_KEYS = new Set(['namespace', 'key', 'description']);
const PATCH_KEYS = new Set(['description']);
const NS_UPDATE_KEYS = new Set(['namespace', 'data']);
const BASE_UPDATE_KEYS = new Set(['namespace', 'base', 'data']);
const BASE_KEY_KEYS = new Set(['namespace', 'base']);
const NAMESPACE_ONLY = new Set(['namespace']);
const NS_DELETE_KEYS = new Set(['namespace', 'cascade']);
const NONE = new Set<string>();

/** DescriptionPatch: {description?}. */
function quickPatch(value: unknown): unknown {
  if (!isObject(value) || !onlyKeys(value, PATCH_KEYS)) return REFUSED;
  const out: Record<string, unknown> = {};
  return optionalField(value, out, 'description', isDescription) ? out : REFUSED;
}

/** The input of each route, as the client checks it before sending. */
export const QUICK_INPUT: Partial<Record<RouteName, Quick>> = {
  ns_create: (value) => {
    if (!isObject(value) || !onlyKeys(value, CREATE_KEYS)) return REFUSED;
    const out: Record<string, unknown> = {};
    return optionalField(value, out, 'key', isKey) && optionalField(value, out, 'description', isDescription) ? out : REFUSED;
  },
  base_create: (value) => {
    if (!isObject(value) || !onlyKeys(value, BASE_CREATE_KEYS) || !isKey(value.namespace)) return REFUSED;
    const out: Record<string, unknown> = { namespace: value.namespace };
    return optionalField(value, out, 'key', isKey) && optionalField(value, out, 'description', isDescription) ? out : REFUSED;
  },
  ns_update: (value) => {
    if (!isObject(value) || !onlyKeys(value, NS_UPDATE_KEYS) || !isKey(value.namespace)) return REFUSED;
    const data = quickPatch(value.data);
    return data === REFUSED ? REFUSED : { namespace: value.namespace, data };
  },
  base_update: (value) => {
    if (!isObject(value) || !onlyKeys(value, BASE_UPDATE_KEYS) || !isKey(value.namespace) || !isKey(value.base)) return REFUSED;
    const data = quickPatch(value.data);
    return data === REFUSED ? REFUSED : { namespace: value.namespace, base: value.base, data };
  },
  base_delete: (value) =>
    isObject(value) && onlyKeys(value, BASE_KEY_KEYS) && isKey(value.namespace) && isKey(value.base) ? { namespace: value.namespace, base: value.base } : REFUSED,
  ns_delete: (value) => {
    if (!isObject(value) || !onlyKeys(value, NS_DELETE_KEYS) || !isKey(value.namespace)) return REFUSED;
    const out: Record<string, unknown> = { namespace: value.namespace };
    if (!('cascade' in value)) return out;
    if (value.cascade !== undefined && typeof value.cascade !== 'boolean') return REFUSED;
    out.cascade = value.cascade;
    return out;
  },
  base_list: (value) => (isObject(value) && onlyKeys(value, NAMESPACE_ONLY) && isKey(value.namespace) ? { namespace: value.namespace } : REFUSED),
  base_list_all: (value) => (isObject(value) && onlyKeys(value, NONE) ? {} : REFUSED),
  ns_list: (value) => (isObject(value) && onlyKeys(value, NONE) ? {} : REFUSED),
  auth: (value) => (isObject(value) && onlyKeys(value, NONE) ? {} : REFUSED),
  health: (value) => (isObject(value) && onlyKeys(value, NONE) ? {} : REFUSED),
};

/** The data of each route's success envelope. */
export const QUICK_OUTPUT: Partial<Record<RouteName, Quick>> = {
  health: (value) => (value === 'alive' ? value : REFUSED),
  auth: (value) => (typeof value === 'string' ? value : REFUSED),
  ns_create: quickNamespace,
  ns_update: quickNamespace,
  ns_delete: quickNamespace,
  ns_list: quickArray(quickNamespace),
  base_create: quickBase,
  base_update: quickBase,
  base_delete: quickBase,
  base_list: quickArray(quickBase),
  base_list_all: quickArray(quickBase),
};

/** The data of a success envelope ({success: true, data}: other fields are ignored), by `data`, or REFUSED. */
export function quickEnvelope(json: unknown, data: Quick): unknown {
  return isObject(json) && json.success === true ? data(json.data) : REFUSED;
}

/**
 * A failure envelope ({success: false, message, help?}: other fields are ignored), as FailureEnvelope of
 * src/api/schemas.ts gives it, or REFUSED.
 */
export function quickFailure(json: unknown): { success: false; message: string; help?: string | null | undefined } | typeof REFUSED {
  if (!isObject(json) || json.success !== false || typeof json.message !== 'string') return REFUSED;
  if (!('help' in json)) return { success: false, message: json.message };
  const { help } = json;
  return help === undefined || help === null || typeof help === 'string' ? { success: false, message: json.message, help } : REFUSED;
}
