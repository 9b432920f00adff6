import { accessSync, constants, readdirSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { errno, describeSystemError } from '../os/errors.js';
import { makeDirectories } from '../os/files.js';
import type Conf from 'conf';
import { ConfigError, ConfigWriteError } from './errors.js';
import { withFileLock, type LockOptions } from './lock.js';
import { type CheckConfig, CheckNeeded, parseConfigText, serializeConfig, type ConfigData } from './schema.js';
import { checkTrust, shellWord } from './trust.js';

const CONFIG_NAME = 'config';

type ConfClass = typeof Conf<ConfigData>;
let confClass: Promise<ConfClass> | undefined;

/** conf, loaded the first time a config file is there to read or something is saved: never on a bare start-up. */
function loadConf(): Promise<ConfClass> {
  confClass ??= import('conf').then((module) => module.default as ConfClass);
  return confClass;
}

let checkConfig: CheckConfig | undefined;

/** zod's check of the file (schema-check.ts), loaded for a file the quick check does not take (CheckNeeded). */
async function loadCheck(): Promise<void> {
  checkConfig ??= (await import('./schema-check.js')).checkConfig;
}

/** What `read` returns, once more with zod's check loaded when the quick one did not take the file. */
async function withCheck<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof CheckNeeded)) throw error;
    await loadCheck();
    return read();
  }
}

export interface ConfigFileOptions {
  /** The config directory. */
  dir: string;
  /** How long a save waits for another kb process to finish its own (default 10 s). */
  lockTimeoutMs?: number | undefined;
  /** Told of a config file others can read; the CLI prints it on stderr. */
  onWarning?: ((message: string) => void) | undefined;
  /** Runs each change once the lock is held, to its release (LockOptions.hold). */
  hold?: LockOptions['hold'] | undefined;
}

/**
 * The one home of `<config dir>/config.json`: every read and every write goes through conf (mode 0600, written to
 * a temporary file beside it, fsynced and renamed, so an interrupted save leaves the old file whole), and every
 * read is checked (schema.ts, and zod for what its quick check does not take). Before the file is used, its
 * directory and itself must be trusted (checkTrust); a change is a read-modify-write under a lock file, so
 * concurrent kb processes do not lose each other's changes.
 */
export class ConfigFile {
  readonly dir: string;
  readonly path: string;
  readonly #lockPath: string;
  readonly #lockTimeoutMs: number | undefined;
  readonly #hold: LockOptions['hold'];
  readonly #onWarning: (message: string) => void;
  readonly #warned = new Set<string>();

  constructor(options: ConfigFileOptions) {
    this.dir = options.dir;
    this.path = join(this.dir, `${CONFIG_NAME}.json`);
    this.#lockPath = join(this.dir, `${CONFIG_NAME}.lock`);
    this.#lockTimeoutMs = options.lockTimeoutMs;
    this.#hold = options.hold;
    this.#onWarning = options.onWarning ?? ((message) => process.stderr.write(`Warning: ${message}\n`));
  }

  /** The file's content, or undefined when there is none. Creates nothing. */
  async read(): Promise<ConfigData | undefined> {
    const stats = this.#fileStats();
    if (stats === undefined) return undefined;
    this.#warn(checkTrust(this.dir, this.#dirStats(), 'directory'));
    this.#warn(checkTrust(this.path, stats, 'file'));
    return withCheck(async () => this.#current(await this.#open()));
  }

  /**
   * Reads the file under the lock, hands its content (undefined when there is none) to `change`, and saves what
   * `change` returns. Nothing is written when the file cannot be trusted or parsed, or `change` throws.
   */
  async update<T>(change: (current: ConfigData | undefined) => Promise<{ next: ConfigData; result: T }>): Promise<T> {
    this.#prepareDir();
    const options: LockOptions = {};
    if (this.#lockTimeoutMs !== undefined) options.timeoutMs = this.#lockTimeoutMs;
    if (this.#hold !== undefined) options.hold = this.#hold;
    let locked = false;
    try {
      return await withFileLock(
        this.#lockPath,
        async () => {
          locked = true;
          try {
            const exists = this.#checkWritable();
            const [conf, current] = await withCheck(async () => {
              const opened = await this.#open();
              return [opened, exists ? this.#current(opened) : undefined] as const;
            });
            const { next, result } = await change(current);
            this.#save(conf, next);
            return result;
          } finally {
            this.#removeLeftovers();
          }
        },
        options,
      );
    } catch (error) {
      // Failures of fn are explained already; a bare filesystem error here is the lock file's.
      if (!locked && errno(error) !== undefined) {
        throw new ConfigWriteError(this.#lockPath, `cannot save the config: cannot create the lock file ${this.#lockPath}: ${describeSystemError(error)}`);
      }
      throw error;
    }
  }

  #warn(message: string | undefined): void {
    if (message === undefined || this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#onWarning(message);
  }

  /** The file's stats, or undefined when there is no file (or no directory). */
  #fileStats(): Stats | undefined {
    let stats: Stats;
    try {
      stats = statSync(this.path);
    } catch (error) {
      if (errno(error) === 'ENOENT') return undefined;
      throw new ConfigError('config_unreadable', `cannot read the config file ${this.path}: ${describeSystemError(error)}`);
    }
    if (!stats.isFile()) throw new ConfigError('config_unreadable', `cannot read the config file ${this.path}: it is not a file`);
    return stats;
  }

  #dirStats(): Stats {
    try {
      return statSync(this.dir);
    } catch (error) {
      throw new ConfigError('config_unreadable', `cannot read the config directory ${this.dir}: ${describeSystemError(error)}`);
    }
  }

  /** conf over the file; conf reads the file as it is made, so a file that does not parse throws here. */
  async #open(): Promise<Conf<ConfigData>> {
    const Conf = await loadConf();
    try {
      return new Conf({
        cwd: this.dir,
        configName: CONFIG_NAME,
        configFileMode: 0o600,
        accessPropertiesByDotNotation: false,
        clearInvalidConfig: false,
        serialize: serializeConfig,
        deserialize: (text) => parseConfigText(text, this.path, checkConfig),
      });
    } catch (error) {
      if (error instanceof ConfigError || error instanceof CheckNeeded) throw error;
      throw new ConfigError('config_unreadable', `cannot read the config file ${this.path}: ${describeSystemError(error)}`);
    }
  }

  /** The file's content through conf, read now. */
  #current(conf: Conf<ConfigData>): ConfigData {
    try {
      return conf.store;
    } catch (error) {
      if (error instanceof ConfigError || error instanceof CheckNeeded) throw error;
      throw new ConfigError('config_unreadable', `cannot read the config file ${this.path}: ${describeSystemError(error)}`);
    }
  }

  /** Creates the directory 0700 (conf would leave it to the umask), and refuses one kb cannot trust or write. */
  #prepareDir(): void {
    try {
      makeDirectories(this.dir, 0o700);
    } catch (error) {
      throw new ConfigWriteError(this.dir, `cannot save the config in ${this.dir}: ${describeSystemError(error)}`);
    }
    checkTrust(this.dir, this.#dirStats(), 'directory');
    try {
      accessSync(this.dir, constants.W_OK | constants.X_OK);
    } catch (error) {
      throw new ConfigWriteError(this.dir, `cannot save the config in ${this.dir}: ${describeSystemError(error)}`);
    }
  }

  /**
   * Whether there is a file to read before the change, having refused one that is not trusted or not writable:
   * a read-only file is the user's word that it must not change, and a rename would replace it regardless.
   */
  #checkWritable(): boolean {
    const stats = this.#fileStats();
    if (stats === undefined) return false;
    checkTrust(this.path, stats, 'file');
    let writable = (stats.mode & 0o200) !== 0;
    try {
      accessSync(this.path, constants.W_OK);
    } catch {
      writable = false;
    }
    if (!writable) {
      throw new ConfigWriteError(
        this.path,
        `cannot save the config: ${this.path} is read-only (mode 0${(stats.mode & 0o777).toString(8)}), and kb does not replace it`,
        `To let kb save, make it writable: \`chmod 600 ${shellWord(this.path)}\`.`,
      );
    }
    return true;
  }

  /**
   * Removes the temporary files of saves that did not finish: a kb killed while writing leaves one, with a token in
   * it, and conf's writer removes its own after a failed write only asynchronously. Under the lock, any such file
   * is a leftover: no other save is under way.
   */
  #removeLeftovers(): void {
    const prefix = `${CONFIG_NAME}.json.tmp-`;
    try {
      for (const name of readdirSync(this.dir)) if (name.startsWith(prefix)) unlinkSync(join(this.dir, name));
    } catch {
      // Best effort: a leftover that cannot be removed now is tried again by the next save, and is no reason to fail this one.
    }
  }

  #save(conf: Conf<ConfigData>, next: ConfigData): void {
    try {
      conf.store = next;
    } catch (error) {
      const full = errno(error) === 'ENOSPC' || errno(error) === 'EDQUOT';
      throw new ConfigWriteError(
        this.path,
        `cannot save the config file ${this.path}: ${describeSystemError(error)}`,
        full ? 'Free some space and try again; the file was left as it was.' : 'The file was left as it was.',
      );
    }
  }
}
