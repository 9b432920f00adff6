import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from '../api/zod.js';
import { describeIssues } from '../api/validation.js';
import { withFileLock } from './lock.js';
import { configDir } from './paths.js';

export type ConfigErrorCode =
  | 'config_invalid'
  | 'config_unreadable'
  | 'invalid_profile'
  | 'invalid_url'
  | 'profile_not_found'
  | 'no_deployment';

/**
 * CONTRACT section 3: a broken config file is another failure (1); a bad name, URL or --profile is usage (2);
 * no deployment at all is "authentication: nothing configured" (4), since the fix is the same: log in.
 */
const EXIT_CODES: Record<ConfigErrorCode, number> = {
  config_invalid: 1,
  config_unreadable: 1,
  invalid_profile: 2,
  invalid_url: 2,
  profile_not_found: 2,
  no_deployment: 4,
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly exitCode: number;

  constructor(
    readonly code: ConfigErrorCode,
    message: string,
    readonly help?: string,
  ) {
    super(message);
    this.exitCode = EXIT_CODES[code];
  }
}

export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const PROFILE_NAME_RULE = 'a profile name is 1 to 63 characters, each A-Z, a-z, 0-9, dash or underscore, starting with a letter or digit';
/** The profile `kb serve` saves on its first start. */
export const SERVE_PROFILE = 'local';
const CONFIG_NAME = 'config';

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

const ProfileName = z.string().check(z.regex(PROFILE_NAME_PATTERN, { error: PROFILE_NAME_RULE }));

// Loose objects: fields a newer kb writes survive a save by this one.
const StoredProfile = z.looseObject({
  url: z.string().check(z.refine(isHttpUrl, { error: 'must be an http:// or https:// URL' })),
  token: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }))),
});
type StoredProfile = z.infer<typeof StoredProfile>;

const ConfigFile = z.looseObject({
  defaultProfile: z.optional(ProfileName),
  profiles: z.record(ProfileName, StoredProfile),
});
type ConfigFile = z.infer<typeof ConfigFile>;

export interface Profile {
  url: string;
  token?: string | undefined;
}

/** The config as read: profiles keyed by name in a Map, since names are data and `constructor` is a fine name. */
export interface ProfilesConfig {
  /** The config file. */
  path: string;
  /** May name a profile that does not exist, if the file was edited by hand; resolveDeployment reports that. */
  defaultProfile: string | undefined;
  profiles: ReadonlyMap<string, Profile>;
}

/** The whole file in memory during a read-modify-write; `rest` keeps top-level fields this version does not know. */
interface Draft {
  defaultProfile: string | undefined;
  profiles: Map<string, StoredProfile>;
  rest: Record<string, unknown>;
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

function parseConfigText(text: string, path: string): ConfigFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const why = text.trim() === '' ? 'it is empty' : jsonFault(error, text);
    throw new ConfigError('config_invalid', `the config file ${path} is not valid JSON: ${why}`, FIX_HELP);
  }
  const result = ConfigFile.safeParse(json);
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

function toDraft(file: ConfigFile): Draft {
  const { defaultProfile, profiles, ...rest } = file;
  return { defaultProfile, profiles: new Map(Object.entries(profiles)), rest };
}

function toFile(draft: Draft): ConfigFile {
  const file: ConfigFile = { ...draft.rest, profiles: Object.fromEntries(draft.profiles) };
  if (draft.defaultProfile !== undefined) file.defaultProfile = draft.defaultProfile;
  return file;
}

function checkName(name: string): void {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new ConfigError('invalid_profile', `invalid profile name ${JSON.stringify(name)}: ${PROFILE_NAME_RULE}`);
  }
}

function checkProfile(profile: Profile): void {
  if (!isHttpUrl(profile.url)) {
    throw new ConfigError('invalid_profile', `not an http:// or https:// URL: ${JSON.stringify(profile.url)}`);
  }
  if (profile.token === '') {
    throw new ConfigError('invalid_profile', 'the token is empty');
  }
}

function listNames(names: Iterable<string>): string {
  const sorted = [...names].sort();
  return sorted.length === 0 ? 'there are no profiles yet' : `profiles: ${sorted.join(', ')}`;
}

function notFound(name: string, names: Iterable<string>, from?: string): ConfigError {
  return new ConfigError(
    'profile_not_found',
    `no profile named ${JSON.stringify(name)}${from === undefined ? '' : ` (${from})`}; ${listNames(names)}`,
    `Create it with \`kb auth login --profile ${name}\`, or pick one with \`kb auth switch NAME\`.`,
  );
}

export interface ProfileStoreOptions {
  /** The config directory; configDir() by default. */
  dir?: string;
  /** How long a save waits for another kb process to finish its own (default 10 s). */
  lockTimeoutMs?: number;
}

export interface SaveResult {
  /** Whether the profile is the default after the save. */
  isDefault: boolean;
  /** Whether a profile of that name existed before. */
  replaced: boolean;
}

/**
 * The CLI's profiles in `<config dir>/config.json`, written through conf (mode 0600, in a 0700 directory).
 * Every read is checked with zod; a file that does not pass is reported and never rewritten. Every change is a
 * read-modify-write under a lock file, so concurrent kb processes do not lose each other's profiles.
 */
export class ProfileStore {
  readonly dir: string;
  readonly path: string;
  readonly #lockPath: string;
  readonly #lockTimeoutMs: number | undefined;

  constructor(options: ProfileStoreOptions = {}) {
    this.dir = options.dir ?? configDir();
    this.path = join(this.dir, `${CONFIG_NAME}.json`);
    this.#lockPath = join(this.dir, `${CONFIG_NAME}.lock`);
    this.#lockTimeoutMs = options.lockTimeoutMs;
  }

  read(): ProfilesConfig {
    const draft = this.#load();
    const profiles = new Map<string, Profile>();
    for (const [name, stored] of draft.profiles) {
      profiles.set(name, stored.token === undefined ? { url: stored.url } : { url: stored.url, token: stored.token });
    }
    return { path: this.path, defaultProfile: draft.defaultProfile, profiles };
  }

  /** Creates or replaces a profile. It becomes the default only when there is no default yet. */
  async saveProfile(name: string, profile: Profile): Promise<SaveResult> {
    checkName(name);
    checkProfile(profile);
    return await this.#update((draft) => {
      const replaced = draft.profiles.has(name);
      const stored: StoredProfile = { url: profile.url };
      if (profile.token !== undefined) stored.token = profile.token;
      draft.profiles.set(name, stored);
      draft.defaultProfile ??= name;
      return { isDefault: draft.defaultProfile === name, replaced };
    });
  }

  async setDefault(name: string): Promise<void> {
    checkName(name);
    await this.#update((draft) => {
      if (!draft.profiles.has(name)) throw notFound(name, draft.profiles.keys());
      draft.defaultProfile = name;
    });
  }

  /** Removes the profile's token and keeps its URL. The default does not move, even when it is this profile. */
  async logout(name: string): Promise<{ hadToken: boolean }> {
    checkName(name);
    return await this.#update((draft) => {
      const stored = draft.profiles.get(name);
      if (stored === undefined) throw notFound(name, draft.profiles.keys());
      const hadToken = stored.token !== undefined;
      const { token: _removed, ...kept } = stored;
      draft.profiles.set(name, kept as StoredProfile);
      return { hadToken };
    });
  }

  #load(): Draft {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return { defaultProfile: undefined, profiles: new Map(), rest: {} };
      throw new ConfigError('config_unreadable', `cannot read the config file ${this.path}: ${(error as Error).message}`);
    }
    return toDraft(parseConfigText(text, this.path));
  }

  async #update<T>(change: (draft: Draft) => T): Promise<T> {
    // Created here, before conf would create it with the umask's mode (usually 0755).
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const lockOptions = this.#lockTimeoutMs === undefined ? {} : { timeoutMs: this.#lockTimeoutMs };
    return withFileLock(this.#lockPath, async () => {
      // Read under the lock, and throws on a broken file before anything is written.
      const draft = this.#load();
      const result = change(draft);
      await this.#write(draft);
      return result;
    }, lockOptions);
  }

  async #write(draft: Draft): Promise<void> {
    // conf (and its schema engine) loads only when something is saved, which keeps it off the start-up path.
    const { default: Conf } = await import('conf');
    const conf = new Conf<ConfigFile>({
      cwd: this.dir,
      configName: CONFIG_NAME,
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
      serialize: (value) => `${JSON.stringify(value, null, 2)}\n`,
      deserialize: (text) => parseConfigText(text, this.path),
    });
    conf.store = toFile(draft);
  }
}

/** `kb serve`'s first start: saves profile `local`, the default only when there is no default yet. */
export function saveServeProfile(profile: Profile, store: ProfileStore = new ProfileStore()): Promise<SaveResult> {
  return store.saveProfile(SERVE_PROFILE, profile);
}

export interface Deployment {
  /** The profile in use; undefined when there is none and KB_URL alone names the deployment. */
  profile: string | undefined;
  url: string;
  token: string | undefined;
  urlSource: 'env' | 'profile';
  tokenSource: 'env' | 'profile' | 'none';
}

export interface ResolveOptions {
  /** The value of --profile, if given. */
  profileFlag?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Defaults to the store in KB_CONFIG_DIR (of `env`), else the user config dir. */
  store?: ProfileStore;
}

/**
 * Which deployment a command talks to, CONTRACT section 3: the profile is --profile, else KB_PROFILE, else the
 * default profile; KB_URL and KB_TOKEN override its URL and token. A missing token is not an error here (health
 * needs none): callers decide.
 */
export function resolveDeployment(options: ResolveOptions = {}): Deployment {
  const env = options.env ?? process.env;
  const store = options.store ?? new ProfileStore({ dir: configDir(env) });
  const config = store.read();
  const envUrl = env.KB_URL || undefined;
  const envToken = env.KB_TOKEN || undefined;

  let name: string | undefined;
  let from: string;
  if (options.profileFlag !== undefined) {
    [name, from] = [options.profileFlag, 'given by --profile'];
  } else if (env.KB_PROFILE) {
    [name, from] = [env.KB_PROFILE, 'given by KB_PROFILE'];
  } else {
    [name, from] = [config.defaultProfile, `the default profile in ${config.path}`];
  }
  const profile = name === undefined ? undefined : config.profiles.get(name);
  if (name !== undefined && profile === undefined) throw notFound(name, config.profiles.keys(), from);

  if (envUrl !== undefined && !isHttpUrl(envUrl)) {
    throw new ConfigError('invalid_url', `KB_URL is not an http:// or https:// URL: ${JSON.stringify(envUrl)}`);
  }
  const url = envUrl ?? profile?.url;
  if (url === undefined) {
    throw new ConfigError(
      'no_deployment',
      'no kb deployment is configured',
      'Run `kb auth login --url URL`, or start a local server with `kb serve` (it saves the profile `local`), or set KB_URL.',
    );
  }
  const token = envToken ?? profile?.token;
  return {
    profile: name,
    url,
    token,
    urlSource: envUrl !== undefined ? 'env' : 'profile',
    tokenSource: envToken !== undefined ? 'env' : token !== undefined ? 'profile' : 'none',
  };
}
