export { DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STALE_LOCK_MS, LockTimeoutError, withFileLock, type LockOptions } from './lock.js';
export { readEnv, type KbEnvironment } from './env.js';
export { configDir, dataDir } from './paths.js';
export {
  ConfigError,
  PROFILE_NAME_PATTERN,
  ProfileStore,
  resolveDeployment,
  SERVE_PROFILE,
  saveServeProfile,
  type ConfigErrorCode,
  type Deployment,
  type Profile,
  type ProfilesConfig,
  type ProfileStoreOptions,
  type ResolveOptions,
  type SaveResult,
} from './profiles.js';
