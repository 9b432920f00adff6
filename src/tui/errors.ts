import { ApiError, BaseListUnsupportedError, NetworkError, NsDeleteUnsupportedError, ResponseFormatError } from '../client/errors.js';
import type { Command } from './keymap.js';
import { refusedTokenHelp } from '../config/profiles.js';
import type { Status, TuiDeployment } from './types.js';

/** What the helps that end in "r retries" name. */
const RETRY: readonly Command[] = ['refresh'];

/** How to log in again, for the profile in use. */
function loginHint(profile: string | undefined): string {
  return `kb auth login${profile === undefined ? '' : ` --profile ${profile}`}`;
}

/**
 * An error as a status line: what went wrong (the server's message where there is one), then what to do about it.
 * The TUI shows it in place and keeps running, so every hint ends in something a key can do.
 */
export function describeError(error: unknown, deployment: TuiDeployment | undefined): Status {
  const profile = deployment?.profile;
  if (error instanceof NetworkError) {
    return {
      tone: 'error',
      text: error.message,
      help: 'Is the server running (`kb serve` for a local one) and the URL right? r retries.',
      keys: RETRY,
    };
  }
  if (error instanceof ApiError) {
    const text = `${error.message} (${error.status})`;
    if (error.status === 403) {
      // The one 403 of the API: a read-only token asked to write (docs/contract.md, Tokens).
      return { tone: 'error', text, help: `This token may read, not write: log in with a token of full scope (\`${loginHint(profile)}\`).` };
    }
    if (error.status === 401) {
      const source = deployment?.tokenSource;
      const known = deployment !== undefined && (source === 'env' || (source === 'profile' && profile !== undefined));
      const help = known ? refusedTokenHelp({ ...deployment, tokenSource: source }) : `The token was refused: log in again with \`${loginHint(profile)}\`, or set KB_TOKEN.`;
      return { tone: 'error', text, help: `${help} r retries.`, keys: RETRY };
    }
    if (error.status === 404) return error.help === undefined ? { tone: 'error', text, help: 'It may have been deleted elsewhere: r refreshes.', keys: RETRY } : { tone: 'error', text, help: error.help };
    if (error.status === 409) return { tone: 'error', text, help: error.help ?? 'That key is taken: choose another, or leave the key empty to generate one.' };
    if (error.status === 429) return { tone: 'error', text, help: 'Too many failed attempts from this address: wait a minute, then r retries.', keys: RETRY };
    if (error.status >= 500) {
      return error.help === undefined ? { tone: 'error', text, help: 'The server failed: r retries; if it persists, see the server log.', keys: RETRY } : { tone: 'error', text, help: error.help };
    }
    return { tone: 'error', text, help: error.help };
  }
  if (error instanceof ResponseFormatError) {
    return { tone: 'error', text: error.message, help: 'Is the URL a kb deployment? Check it with `kb auth status`.' };
  }
  // One sentence and nothing to do: no key changes what the deployment offers.
  if (error instanceof NsDeleteUnsupportedError) return { tone: 'warning', text: error.message };
  if (error instanceof BaseListUnsupportedError) {
    return { tone: 'warning', text: error.message, help: 'Open a base by key (o), or create one (n).', keys: ['openByKey', 'new'] };
  }
  return { tone: 'error', text: error instanceof Error ? error.message : String(error), help: 'r retries.', keys: RETRY };
}

/** Whether the error is a 409: a form then puts the focus back on the key. */
export function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.status === 409;
}
