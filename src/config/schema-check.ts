import * as z from '../api/zod.js';
import { describeIssues } from '../api/validation.js';
import { isHttpUrl, PROFILE_NAME_PATTERN, PROFILE_NAME_RULE, type ConfigData } from './schema.js';

/**
 * The config file's schema by zod, loaded only for a file that the quick check of schema.ts does not take (a broken
 * one, or one with something it does not know): zod then takes it or says what is wrong, as it always did.
 */

const ProfileName = z.string().check(z.regex(PROFILE_NAME_PATTERN, { error: PROFILE_NAME_RULE }));

// Loose objects: fields a newer kb writes survive a save by this one.
export const StoredProfileSchema = z.looseObject({
  url: z.string().check(z.refine(isHttpUrl, { error: 'must be an http:// or https:// URL' })),
  token: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }))),
  ca: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }))),
});

/** The config file, `<config dir>/config.json`. */
export const ConfigDataSchema = z.looseObject({
  defaultProfile: z.optional(ProfileName),
  profiles: z.record(ProfileName, StoredProfileSchema),
});

/** The file's parsed JSON by the schema: the config, or what is wrong with it, one phrase a problem. */
export function checkConfig(json: unknown): { ok: true; data: ConfigData } | { ok: false; problems: string[] } {
  const result = ConfigDataSchema.safeParse(json);
  if (result.success) return { ok: true, data: result.data };
  // zod says only "Invalid key in record" for a bad profile name; the rule helps more.
  const problems = result.error.issues.map((issue) =>
    issue.code === 'invalid_key'
      ? `invalid profile name ${JSON.stringify(String(issue.path.at(-1)))}: ${PROFILE_NAME_RULE}`
      : describeIssues({ issues: [issue] }, json),
  );
  return { ok: false, problems };
}
