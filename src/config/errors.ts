/**
 * The config's error catalog. Every class carries a stable `code` and the `exitCode` of CONTRACT section 3, which
 * the CLI turns into the process's exit code; callers tell them apart by class.
 */
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
  override readonly name: string = 'ConfigError';
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
