import { ConfigFile, type ConfigFileOptions } from './config-file.js';
import { readEnv } from './env.js';
import { ConfigError } from './errors.js';
import { configDir } from './paths.js';
import { isHttpUrl, PROFILE_NAME_PATTERN, PROFILE_NAME_RULE, type ConfigData, type StoredProfile } from './schema.js';

export interface Profile {
  url: string;
  token?: string | undefined;
  /** A CA file (PEM) the CLI trusts for this deployment, on top of the system's (`kb auth login --cacert`, kb serve's TLS). */
  ca?: string | undefined;
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
export interface Draft {
  defaultProfile: string | undefined;
  profiles: Map<string, StoredProfile>;
  rest: Record<string, unknown>;
}

function toDraft(file: ConfigData | undefined): Draft {
  if (file === undefined) return { defaultProfile: undefined, profiles: new Map(), rest: {} };
  const { defaultProfile, profiles, ...rest } = file;
  return { defaultProfile, profiles: new Map(Object.entries(profiles)), rest };
}

function toFile(draft: Draft): ConfigData {
  const file: ConfigData = { ...draft.rest, profiles: Object.fromEntries(draft.profiles) };
  if (draft.defaultProfile !== undefined) file.defaultProfile = draft.defaultProfile;
  return file;
}

export function checkName(name: string): void {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new ConfigError('invalid_profile', `invalid profile name ${JSON.stringify(name)}: ${PROFILE_NAME_RULE}`);
  }
}

export function checkProfile(profile: Profile): void {
  if (!isHttpUrl(profile.url)) {
    throw new ConfigError('invalid_profile', `not an http:// or https:// URL: ${JSON.stringify(profile.url)}`);
  }
  if (profile.token === '') {
    throw new ConfigError('invalid_profile', 'the token is empty');
  }
  if (profile.ca === '') {
    throw new ConfigError('invalid_profile', 'the CA file is empty');
  }
}

export function toStored(profile: Profile): StoredProfile {
  const stored: StoredProfile = { url: profile.url };
  if (profile.token !== undefined) stored.token = profile.token;
  if (profile.ca !== undefined) stored.ca = profile.ca;
  return stored;
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
  /** Told of a config file others can read (default: a line on stderr). */
  onWarning?: (message: string) => void;
  /** Runs each save once the config lock is held, to its release: the CLI makes it uninterruptible. */
  hold?: ConfigFileOptions['hold'];
}

export interface SaveResult {
  /** Whether the profile is the default after the save. */
  isDefault: boolean;
  /** Whether a profile of that name existed before. */
  replaced: boolean;
}

/**
 * The CLI's profiles in `<config dir>/config.json`, read and written through ConfigFile (conf, zod, the trust
 * checks and the lock). A file that does not pass is reported and never rewritten.
 */
export class ProfileStore {
  readonly dir: string;
  readonly path: string;
  readonly #file: ConfigFile;

  constructor(options: ProfileStoreOptions = {}) {
    this.dir = options.dir ?? configDir();
    this.#file = new ConfigFile({ dir: this.dir, lockTimeoutMs: options.lockTimeoutMs, onWarning: options.onWarning, hold: options.hold });
    this.path = this.#file.path;
  }

  async read(): Promise<ProfilesConfig> {
    const draft = toDraft(await this.#file.read());
    const profiles = new Map<string, Profile>();
    for (const [name, stored] of draft.profiles) {
      profiles.set(name, { url: stored.url, ...(stored.token === undefined ? {} : { token: stored.token }), ...(stored.ca === undefined ? {} : { ca: stored.ca }) });
    }
    return { path: this.path, defaultProfile: draft.defaultProfile, profiles };
  }

  /** Creates or replaces a profile. It becomes the default only when there is no default yet. */
  async saveProfile(name: string, profile: Profile): Promise<SaveResult> {
    checkName(name);
    checkProfile(profile);
    return await this.update((draft) => {
      const replaced = draft.profiles.has(name);
      draft.profiles.set(name, toStored(profile));
      draft.defaultProfile ??= name;
      return { isDefault: draft.defaultProfile === name, replaced };
    });
  }

  async setDefault(name: string): Promise<void> {
    checkName(name);
    await this.update((draft) => {
      if (!draft.profiles.has(name)) throw notFound(name, draft.profiles.keys());
      draft.defaultProfile = name;
    });
  }

  /** Removes the profile's token and keeps its URL. The default does not move, even when it is this profile. */
  async logout(name: string): Promise<{ hadToken: boolean }> {
    checkName(name);
    return await this.update((draft) => {
      const stored = draft.profiles.get(name);
      if (stored === undefined) throw notFound(name, draft.profiles.keys());
      const hadToken = stored.token !== undefined;
      const { token: _removed, ...kept } = stored;
      draft.profiles.set(name, kept as StoredProfile);
      return { hadToken };
    });
  }

  /**
   * Removes a profile, its URL and token (kubectl's delete-context). When it was the default, there is no default
   * afterwards: no other profile silently takes its place.
   */
  async remove(name: string): Promise<{ profile: StoredProfile; wasDefault: boolean }> {
    checkName(name);
    return await this.update((draft) => {
      const profile = draft.profiles.get(name);
      if (profile === undefined) throw notFound(name, draft.profiles.keys());
      draft.profiles.delete(name);
      const wasDefault = draft.defaultProfile === name;
      if (wasDefault) draft.defaultProfile = undefined;
      return { profile, wasDefault };
    });
  }

  /** Gives a profile another name (kubectl's rename-context), the default included; a name taken is refused. */
  async rename(from: string, to: string): Promise<{ isDefault: boolean }> {
    checkName(from);
    checkName(to);
    return await this.update((draft) => {
      const profile = draft.profiles.get(from);
      if (profile === undefined) throw notFound(from, draft.profiles.keys());
      if (from === to) return { isDefault: draft.defaultProfile === to };
      if (draft.profiles.has(to)) {
        throw new ConfigError(
          'invalid_profile',
          `a profile named ${JSON.stringify(to)} exists already; nothing was renamed`,
          `Pick another name, or remove that one first with \`kb auth remove ${to}\`.`,
        );
      }
      // Rebuilt in order, so that the renamed profile keeps its place in the file.
      const entries = [...draft.profiles].map(([name, stored]) => [name === from ? to : name, stored] as const);
      draft.profiles.clear();
      for (const [name, stored] of entries) draft.profiles.set(name, stored);
      if (draft.defaultProfile === from) draft.defaultProfile = to;
      return { isDefault: draft.defaultProfile === to };
    });
  }

  /** A read-modify-write of the whole file under the config lock; `change` edits the draft, or throws to write nothing. */
  update<T>(change: (draft: Draft) => T | Promise<T>): Promise<T> {
    return this.#file.update(async (current) => {
      const draft = toDraft(current);
      const result = await change(draft);
      return { next: toFile(draft), result };
    });
  }
}

/**
 * Where a refused token (401) came from and what to do about it, as gh says it (docs/contract.md, Profiles): KB_TOKEN,
 * or the profile and its URL. The CLI puts it after the server's message; kb tui, in its status line.
 */
export function refusedTokenHelp(deployment: Pick<Deployment, 'profile' | 'url' | 'tokenSource'>): string {
  if (deployment.tokenSource === 'env') {
    const profile = deployment.profile === undefined ? '' : ` (it overrides the token of profile "${deployment.profile}")`;
    return `The token came from KB_TOKEN${profile}: set KB_TOKEN to a valid token, or unset it.`;
  }
  const name = deployment.profile as string;
  return `The token came from profile "${name}" (${deployment.url}): log in again with \`kb auth login --profile ${name}\`, or remove the profile with \`kb auth remove ${name}\`.`;
}

export interface Deployment {
  /** The profile in use; undefined when there is none and KB_URL alone names the deployment. */
  profile: string | undefined;
  url: string;
  token: string | undefined;
  urlSource: 'env' | 'profile';
  tokenSource: 'env' | 'profile' | 'none';
  /** The profile's CA file, if it has one (src/cli/trust.ts adds it to the system's CAs). */
  ca?: string | undefined;
}

export interface ResolveOptions {
  /** The value of --profile, if given. */
  profileFlag?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Defaults to the store in KB_CONFIG_DIR (of `env`), else the user config dir. */
  store?: ProfileStore;
  /** Told of a config file others can read (default: a line on stderr); used when `store` is not given. */
  onWarning?: (message: string) => void;
}

/**
 * Which deployment a command talks to, docs/contract.md, Deployments and profiles: the profile is --profile, else KB_PROFILE, else the
 * default profile; KB_URL and KB_TOKEN override its URL and token. A missing token is not an error here (health
 * needs none): callers decide.
 */
export async function resolveDeployment(options: ResolveOptions = {}): Promise<Deployment> {
  const env = options.env ?? process.env;
  const store = options.store ?? new ProfileStore({ dir: configDir(env), ...(options.onWarning ? { onWarning: options.onWarning } : {}) });
  const config = await store.read();
  const { url: envUrl, token: envToken, profile: envProfile } = readEnv(env);

  let name: string | undefined;
  let from: string;
  if (options.profileFlag !== undefined) {
    [name, from] = [options.profileFlag, 'given by --profile'];
  } else if (envProfile !== undefined) {
    [name, from] = [envProfile, 'given by KB_PROFILE'];
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
    ...(profile?.ca === undefined ? {} : { ca: profile.ca }),
  };
}
