import { Help } from '@oclif/core';
import { EXIT_MEANINGS } from '../client/exit-codes.js';

const CODE_WIDTH = Math.max(...EXIT_MEANINGS.map(([code]) => String(code).length));
export const EXIT_CODES = ['EXIT CODES', ...EXIT_MEANINGS.map(([code, meaning]) => `  ${String(code).padEnd(CODE_WIDTH)}  ${meaning}`)].join('\n');

export const ENVIRONMENT = `ENVIRONMENT
  KB_PROFILE     profile to use (--profile wins)
  KB_URL         deployment URL, overrides the profile's
  KB_TOKEN       token, overrides the profile's (prefer it to flags: argv is visible to other users)
  KB_TIMEOUT     request timeout, e.g. 10s or 500ms (--timeout wins; default 30s)
  KB_MAX_RESPONSE  largest reply read, e.g. 256MiB (default 64MiB); a larger one fails with exit 1
  KB_CONFIG_DIR  where profiles are kept (default: ~/.config/kb)
  KB_DATA_DIR    where kb serve keeps its database (default: ~/.local/share/kb)
  KB_DATABASE_URL  PostgreSQL URL for kb serve and kb serve token, shared by replicas (default: SQLite in KB_DATA_DIR)
  KB_DEBUG=1     trace each request to stderr, as --verbose does
  NO_COLOR       no colors; neither are used when output is not a terminal or CI is set
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY  proxies for requests`;

/**
 * The root help gains the exit codes and environment variables that scripts depend on (docs/contract.md, Exit codes
 * and Environment variables).
 */
export default class KbHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(`\n${EXIT_CODES}\n\n${ENVIRONMENT}\n`);
  }
}
