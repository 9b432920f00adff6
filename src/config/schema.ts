import * as z from '../api/zod.js';
import { describeIssues } from '../api/validation.js';
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

const ProfileName = z.string().check(z.regex(PROFILE_NAME_PATTERN, { error: PROFILE_NAME_RULE }));

// Loose objects: fields a newer kb writes survive a save by this one.
export const StoredProfile = z.looseObject({
  url: z.string().check(z.refine(isHttpUrl, { error: 'must be an http:// or https:// URL' })),
  token: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }))),
});
export type StoredProfile = z.infer<typeof StoredProfile>;

/** The config file, `<config dir>/config.json`. */
export const ConfigData = z.looseObject({
  defaultProfile: z.optional(ProfileName),
  profiles: z.record(ProfileName, StoredProfile),
});
export type ConfigData = z.infer<typeof ConfigData>;

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

/** The file's text, checked: a file that is not a kb config is reported as config_invalid, naming the problem. */
export function parseConfigText(text: string, path: string): ConfigData {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const why = text.trim() === '' ? 'it is empty' : jsonFault(error, text);
    throw new ConfigError('config_invalid', `the config file ${path} is not valid JSON: ${why}`, FIX_HELP);
  }
  const result = ConfigData.safeParse(json);
  if (!result.success) {
    // zod says only "Invalid key in record" for a bad profile name; the rule helps more.
    const problems = result.error.issues.map((issue) =>
      issue.code === 'invalid_key'
        ? `invalid profile name ${JSON.stringify(String(issue.path.at(-1)))}: ${PROFILE_NAME_RULE}`
        : describeIssues({ issues: [issue] }, json),
    );
    throw new ConfigError('config_invalid', `the config file ${path} is not a valid kb config: ${problems.join('; ')}`, FIX_HELP);
  }
  return result.data;
}

export function serializeConfig(data: ConfigData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}
