import { resolve } from 'node:path';
import envPaths from 'env-paths';
import { readEnv } from './env.js';

/** Where kb keeps its config (profiles and tokens): KB_CONFIG_DIR, else the user config dir (e.g. ~/.config/kb). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(readEnv(env).configDir ?? envPaths('kb', { suffix: '' }).config);
}

/** Where `kb serve` keeps its data: KB_DATA_DIR, else the user data dir (e.g. ~/.local/share/kb). */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(readEnv(env).dataDir ?? envPaths('kb', { suffix: '' }).data);
}
