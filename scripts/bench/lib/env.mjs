// The environment every child gets, on both sides of every comparison: nothing of the developer's own set-up.
import { subDir } from './lifecycle.mjs';

/**
 * Variables that would make runs differ from machine to machine: NODE_EXTRA_CA_CERTS (node reads the file at
 * start-up), NODE_OPTIONS (flags or preloads), the user's kb settings, CI (kb tui refuses to run under it) and
 * the signs of an enclosing terminal multiplexer.
 */
const DROPPED = [
  'NODE_EXTRA_CA_CERTS',
  'NODE_OPTIONS',
  'CI',
  'CONTINUOUS_INTEGRATION',
  'NO_COLOR',
  'FORCE_COLOR',
  'TMUX',
  'TMUX_PANE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
];

/** A home of its own under `root`: HOME and the XDG dirs, so config, caches and data start empty and stay ours. */
export function isolatedHome(root) {
  const home = subDir(root, 'home');
  return {
    HOME: home,
    XDG_CONFIG_HOME: subDir(home, '.config'),
    XDG_DATA_HOME: subDir(home, '.local/share'),
    XDG_CACHE_HOME: subDir(home, '.cache'),
    XDG_STATE_HOME: subDir(home, '.local/state'),
  };
}

/** process.env without the variables above or any KB_*, then `home`, then `extra` (undefined deletes). */
export function childEnv(home, extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('KB_') && !DROPPED.includes(key)) env[key] = value;
  }
  Object.assign(env, home);
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}
