import { isObject } from '../api/quick.js';
import { ConfigError } from './errors.js';

export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
export const PROFILE_NAME_RULE =
  'a profile name is 1 to 63 characters, each A-Z, a-z, 0-9, dash or underscore, starting with a letter or digit';

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** A profile as the config file keeps it: fields a newer kb writes survive a save by this one. */
export interface StoredProfile {
  url: string;
  token?: string | undefined;
  /** A CA file the CLI trusts for this deployment (profiles.ts). */
  ca?: string | undefined;
  [field: string]: unknown;
}

/** The config file, `<config dir>/config.json`. */
export interface ConfigData {
  defaultProfile?: string | undefined;
  profiles: Record<string, StoredProfile>;
  [field: string]: unknown;
}

/** zod's check of the file (schema-check.ts), for what checkQuickly does not take. */
export type CheckConfig = (json: unknown) => { ok: true; data: ConfigData } | { ok: false; problems: string[] };

/** Thrown by parseConfigText for a file checkQuickly does not take, when no CheckConfig is at hand: load it, and read again. */
export class CheckNeeded extends Error {}

/** A plain object of JSON.parse, without a `__proto__` key (zod's schemas treat one in their own ways). */
function plainObject(value: unknown): value is Record<string, unknown> {
  return isObject(value) && Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__');
}

const PROFILE_FIELDS = new Set(['url', 'token', 'ca']);
const CONFIG_FIELDS = new Set(['defaultProfile', 'profiles']);

function quickProfile(value: unknown): StoredProfile | undefined {
  if (!plainObject(value) || typeof value.url !== 'string' || !isHttpUrl(value.url)) return undefined;
  const profile: StoredProfile = { url: value.url };
  if ('token' in value) {
    if (value.token !== undefined && (typeof value.token !== 'string' || value.token === '')) return undefined;
    profile.token = value.token;
  }
  if ('ca' in value) {
    if (value.ca !== undefined && (typeof value.ca !== 'string' || value.ca === '')) return undefined;
    profile.ca = value.ca;
  }
  for (const field in value) if (!PROFILE_FIELDS.has(field)) profile[field] = value[field];
  return profile;
}

/**
 * The config as ConfigDataSchema (schema-check.ts) gives it, known fields first in its order, then the others in the
 * file's, without loading zod; undefined for anything it does not take, which zod then checks.
 * test/config/schema.test.ts holds it to zod.
 */
export function checkQuickly(json: unknown): ConfigData | undefined {
  if (!plainObject(json)) return undefined;
  const config: Partial<ConfigData> = {};
  if ('defaultProfile' in json) {
    const name = json.defaultProfile;
    if (typeof name !== 'string' || !PROFILE_NAME_PATTERN.test(name)) return undefined;
    config.defaultProfile = name;
  }
  if (!plainObject(json.profiles)) return undefined;
  const profiles: Record<string, StoredProfile> = {};
  for (const name in json.profiles) {
    const profile = PROFILE_NAME_PATTERN.test(name) ? quickProfile(json.profiles[name]) : undefined;
    if (profile === undefined) return undefined;
    profiles[name] = profile;
  }
  config.profiles = profiles;
  for (const field in json) if (!CONFIG_FIELDS.has(field)) config[field] = json[field];
  return config as ConfigData;
}

const FIX_HELP = 'Fix the file or remove it (then run `kb auth login` again). kb does not change it while it is broken.';

/**
 * Where JSON.parse stopped, as a line and column. V8's own message quotes the text around the fault, which
 * may be a token pasted by hand, so it is never shown.
 */
function jsonFault(error: unknown, text: string): string {
  const position = /at position (\d+)/.exec((error as Error).message)?.[1];
  if (position === undefined) return 'it does not parse';
  const before = text.slice(0, Number(position)).split('\n');
  return `it does not parse at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * The file's text, checked: a file that is not a kb config is reported as config_invalid, naming the problem. A file
 * checkQuickly does not take needs `check` (zod's); without it, CheckNeeded is thrown.
 */
export function parseConfigText(text: string, path: string, check?: CheckConfig): ConfigData {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const why = text.trim() === '' ? 'it is empty' : jsonFault(error, text);
    throw new ConfigError('config_invalid', `the config file ${path} is not valid JSON: ${why}`, FIX_HELP);
  }
  const quick = checkQuickly(json);
  if (quick !== undefined) return quick;
  if (check === undefined) throw new CheckNeeded();
  const result = check(json);
  if (!result.ok) {
    throw new ConfigError('config_invalid', `the config file ${path} is not a valid kb config: ${result.problems.join('; ')}`, FIX_HELP);
  }
  return result.data;
}

export function serializeConfig(data: ConfigData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}
