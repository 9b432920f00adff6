export { ConfigFile, type ConfigFileOptions } from './config-file.js';
export { readEnv, type KbEnvironment } from './env.js';
export {
  ConfigError,
  ConfigTrustError,
  ConfigWriteError,
  ServeProfileTakenError,
  type ConfigErrorCode,
} from './errors.js';
export { DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STALE_LOCK_MS, LockTimeoutError, withFileLock, type LockOptions } from './lock.js';
export { configDir, dataDir } from './paths.js';
export {
  ProfileStore,
  resolveDeployment,
  type Deployment,
  type Profile,
  type ProfilesConfig,
  type ProfileStoreOptions,
  type ResolveOptions,
  type SaveResult,
} from './profiles.js';
export { PROFILE_NAME_PATTERN } from './schema.js';
export { SERVE_PROFILE, saveServeProfile, type ServeProfileOptions, type ServeProfileResult } from './serve-profile.js';
