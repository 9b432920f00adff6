/**
 * The config's error catalog. Every class carries a stable `code` and the `exitCode` of docs/contract.md, Exit codes, which
 * the CLI turns into the process's exit code; callers tell them apart by class.
 */
import { EXIT, type ExitCode } from '../client/exit-codes.js';

export type ConfigErrorCode =
  | 'config_invalid'
  | 'config_unreadable'
  | 'config_untrusted'
  | 'config_unwritable'
  | 'invalid_profile'
  | 'invalid_url'
  | 'profile_not_found'
  | 'profile_taken'
  | 'no_deployment';

/**
 * A broken, unreadable or unwritable config file is another failure (1); a bad name, URL or --profile is usage (2);
 * a config kb does not trust and no deployment at all are "authentication" (4), since no token can be used; a
 * profile that another server's token holds is a conflict (5).
 */
const EXIT_CODES: Record<ConfigErrorCode, ExitCode> = {
  config_invalid: EXIT.failure,
  config_unreadable: EXIT.failure,
  config_untrusted: EXIT.auth,
  config_unwritable: EXIT.failure,
  invalid_profile: EXIT.usage,
  invalid_url: EXIT.usage,
  profile_not_found: EXIT.usage,
  profile_taken: EXIT.conflict,
  no_deployment: EXIT.auth,
};

export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
  readonly exitCode: ExitCode;

  constructor(
    readonly code: ConfigErrorCode,
    message: string,
    readonly help?: string,
  ) {
    super(message);
    this.exitCode = EXIT_CODES[code];
  }
}

/**
 * A config file or directory that another user could change (ssh's StrictModes): writable by group or others, or
 * owned by someone else. Such a file could point a profile at another server and collect the token. Exit 4.
 */
export class ConfigTrustError extends ConfigError {
  override readonly name = 'ConfigTrustError';

  constructor(
    /** The file or directory that is not trusted. */
    readonly path: string,
    message: string,
    help: string,
  ) {
    super('config_untrusted', message, help);
  }
}

/** The config cannot be saved (read-only file, directory or filesystem, no permission, not a directory, full disk). */
export class ConfigWriteError extends ConfigError {
  override readonly name = 'ConfigWriteError';

  constructor(
    /** The file or directory kb could not write. */
    readonly path: string,
    message: string,
    help?: string,
  ) {
    super('config_unwritable', message, help);
  }
}

/**
 * `kb serve`'s first start found every profile name it may use taken: holding another server's token, or no token
 * (a logged-out profile may point anywhere). Exit 5.
 */
export class ServeProfileTakenError extends ConfigError {
  override readonly name = 'ServeProfileTakenError';

  constructor(
    /** The profiles tried, in order, all taken. */
    readonly taken: readonly string[],
  ) {
    const names = taken.map((name) => JSON.stringify(name));
    const list = names.length === 1 ? `profile ${names[0]} is` : `profiles ${names.slice(0, -1).join(', ')} and ${names.at(-1)} are`;
    super(
      'profile_taken',
      `${list} already in use for another server: kb serve does not overwrite ${names.length === 1 ? 'it' : 'them'}`,
      'Save this server under another name with `kb serve --profile NAME`.',
    );
  }
}
