import type { KbClient } from '../client/client.js';
import type { Deployment } from '../config/profiles.js';
import type { Command } from './keymap.js';

/**
 * The operations the TUI uses: a KbClient, or anything shaped like one. The TUI never builds a client. Without
 * `stream`, the lists refresh on their timer alone (no GET /v1/watch).
 */
export type TuiClient = Pick<KbClient, 'auth' | 'nsList' | 'nsCreate' | 'nsUpdate' | 'nsDelete' | 'baseList' | 'baseCreate' | 'baseUpdate' | 'baseDelete'> &
  Partial<Pick<KbClient, 'stream' | 'baseUrl'>>;

/** What the header shows of the deployment; never the token. */
/** The deployment kb tui talks to; where its token came from, when known, names the fix for a refused one. */
export type TuiDeployment = Pick<Deployment, 'profile' | 'url'> & Partial<Pick<Deployment, 'tokenSource'>>;

/** One row of a list: a namespace or a base. `description` is undefined when it is not known (never read). */
export interface Row {
  key: string;
  description: string | null | undefined;
}

/** A line under the list: the outcome of the last action, or an error with what to do about it. */
export interface Status {
  tone: 'info' | 'success' | 'warning' | 'error';
  text: string;
  help?: string | undefined;
  /** The commands its words tell the user to press ("r retries"): the key-help line keeps their keys. */
  keys?: readonly Command[] | undefined;
}
