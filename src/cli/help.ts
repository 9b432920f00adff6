import { Help } from '@oclif/core';

export const EXIT_CODES = `EXIT CODES
  0  success
  1  other failure (server 5xx, 429 after retries, unexpected)
  2  usage: bad arguments or flags, invalid input caught locally, a prompt needed but impossible
  3  not found (404)
  4  authentication: no token configured, 401/403
  5  conflict (409)
  6  network: unreachable, DNS, timeout, TLS`;

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

/** The root help gains the exit codes and environment variables that scripts depend on (CONTRACT section 3). */
export default class KbHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(`\n${EXIT_CODES}\n\n${ENVIRONMENT}\n`);
  }
}
