import { LIMITS } from '../api/schemas.js';
import type { AuthFailureLimit } from '../store/store.js';

/**
 * Failed-authentication limit per client address (docs/contract.md, Limits): once an address has
 * failed `limit` times within `windowMs`, a further failure is answered 429 instead of 401, until enough of those
 * failures leave the window. Refused (429) attempts are not counted, so Retry-After tells the truth. A request
 * with a valid token is never counted nor limited. In memory: it resets with the process, and each process counts
 * its own (the SQLite engine's; PostgreSQL keeps the count in a table shared by every replica).
 */
export class AuthFailureLimiter implements AuthFailureLimit {
  private readonly failures = new Map<string, number[]>();

  constructor(
    readonly limit: number = LIMITS.authFailures,
    readonly windowMs: number = LIMITS.authFailureWindowMs,
    /** Addresses tracked at most; the least recently failing are forgotten first. */
    private readonly maxAddresses = 100_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Milliseconds until the address may try again, or 0 when it is not limited. */
  retryAfterMs(address: string): number {
    const times = this.recent(address);
    if (times.length < this.limit) return 0;
    const oldest = times[times.length - this.limit] as number;
    return Math.max(1, oldest + this.windowMs - this.clock());
  }

  async recordFailure(address: string): Promise<number> {
    const waitMs = this.retryAfterMs(address);
    if (waitMs === 0) this.fail(address);
    return waitMs;
  }

  /** Counts a failure of the address. */
  fail(address: string): void {
    const times = this.recent(address);
    times.push(this.clock());
    // Only the newest `limit` failures matter to the decision.
    if (times.length > this.limit) times.splice(0, times.length - this.limit);
    this.failures.delete(address);
    this.failures.set(address, times);
    if (this.failures.size > this.maxAddresses) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  private recent(address: string): number[] {
    const since = this.clock() - this.windowMs;
    const times = (this.failures.get(address) ?? []).filter((time) => time > since);
    if (times.length === 0) this.failures.delete(address);
    return times;
  }
}
