/**
 * kb's exit codes (docs/contract.md, Exit codes), the one table of them: the error catalog (src/client/errors.ts, the CLI's
 * errors, the config's) carries these, and `kb --help` prints them from here.
 */
export const EXIT = {
  success: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  conflict: 5,
  network: 6,
  /** `kb wait`: the condition did not hold within --timeout. */
  timedOut: 7,
  /** Ctrl-C, as shells report a process that SIGINT ended (128 + 2). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What each code means, in the order `kb --help` lists them. */
export const EXIT_MEANINGS: readonly (readonly [ExitCode, string])[] = [
  [EXIT.success, 'success'],
  [EXIT.failure, 'other failure (server 5xx, 429 after retries, unexpected)'],
  [EXIT.usage, 'usage: bad arguments or flags, invalid input caught locally, a prompt needed but impossible, a kb serve extension the deployment lacks (ns delete, base list, export and apply of bases, kb watch --since)'],
  [EXIT.notFound, 'not found (404)'],
  [EXIT.auth, 'authentication: no token configured, 401/403'],
  [EXIT.conflict, 'conflict (409)'],
  [EXIT.network, 'network: unreachable, DNS, timeout, TLS'],
  [EXIT.timedOut, 'kb wait: the condition did not hold within --timeout'],
  [EXIT.interrupted, 'interrupted (Ctrl-C)'],
];

/** The exit code of an HTTP status: 404 is 3, 401/403 are 4, 409 is 5, any other 4xx is 2, 429 and 5xx are 1. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 404) return EXIT.notFound;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 409) return EXIT.conflict;
  if (status === 429) return EXIT.failure;
  if (status >= 400 && status < 500) return EXIT.usage;
  return EXIT.failure;
}
