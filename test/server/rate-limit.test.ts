import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter } from '../../src/server/rate-limit.js';

describe('AuthFailureLimiter', () => {
  it('limits an address after 20 failures within 60 s, until the oldest of them leaves the window', () => {
    let now = 1_000_000;
    const limiter = new AuthFailureLimiter(20, 60_000, 1000, () => now);
    for (let i = 0; i < 20; i++) {
      expect(limiter.retryAfterMs('10.0.0.1')).toBe(0);
      limiter.fail('10.0.0.1');
      now += 1000;
    }
    // 20 failures at t0 .. t0+19 s; now is t0+20 s: limited until t0+60 s.
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(40_000);
    expect(limiter.retryAfterMs('10.0.0.2')).toBe(0);
    now += 39_999;
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(1);
    now += 1;
    expect(limiter.retryAfterMs('10.0.0.1')).toBe(0);
  });

  it('forgets failures older than the window', () => {
    let now = 0;
    const limiter = new AuthFailureLimiter(3, 1000, 1000, () => now);
    limiter.fail('a');
    limiter.fail('a');
    now = 1500;
    limiter.fail('a');
    limiter.fail('a');
    expect(limiter.retryAfterMs('a')).toBe(0);
    limiter.fail('a');
    expect(limiter.retryAfterMs('a')).toBe(1000);
  });

  it('tracks a bounded number of addresses, forgetting the least recently failing', () => {
    const limiter = new AuthFailureLimiter(1, 60_000, 2, () => 0);
    limiter.fail('a');
    limiter.fail('b');
    limiter.fail('c');
    expect(limiter.retryAfterMs('a')).toBe(0);
    expect(limiter.retryAfterMs('b')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('c')).toBeGreaterThan(0);
  });

  it('decides and counts in one call: 0 while under the limit, then the wait, counting no refused attempt', async () => {
    let now = 0;
    const limiter = new AuthFailureLimiter(2, 1000, 1000, () => now);
    expect(await limiter.recordFailure('a')).toBe(0);
    now = 100;
    expect(await limiter.recordFailure('a')).toBe(0);
    now = 200;
    expect(await limiter.recordFailure('a')).toBe(800);
    expect(await limiter.recordFailure('a')).toBe(800);
    now = 1000;
    expect(await limiter.recordFailure('a')).toBe(0);
    expect(limiter.retryAfterMs('a')).toBe(100);
  });
});
