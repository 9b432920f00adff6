import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoFormatter, isoNow } from '../../src/store/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) await server.close();
});

/** Milliseconds a Date can hold, and a few that repeat, as the writes of one batch share theirs. */
const moments = fc.array(fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.constantFrom(0, 1, 1_795_737_971_474, 1_795_737_971_475)), { maxLength: 40 });

describe('ISO 8601 times (src/store/clock.ts)', () => {
  it('a formatter gives what Date#toISOString gives, for any millisecond, asked for in any order and again', () => {
    fc.assert(
      fc.property(moments, (sequence) => {
        const format = isoFormatter();
        for (const ms of sequence) expect(format(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 300 },
    );
  });

  it('isoNow is the time now, as the clock moves', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    for (const ms of [1_795_737_971_474, 1_795_737_971_474, 1_795_737_971_475, 0, 1_795_737_971_474]) {
      vi.setSystemTime(ms);
      expect(isoNow()).toBe(new Date(ms).toISOString());
    }
  });

  it('keyed writes answered in one millisecond format its time once or twice, not four times each', async () => {
    const server = await startTestServer({ listen: false });
    servers.push(server);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_795_737_971_474);
    const formatted = vi.spyOn(Date.prototype, 'toISOString');
    const keys = Array.from({ length: 40 }, (_, i) => `ns-${i}`);
    const create = (key: string) =>
      server.app.inject({
        method: 'POST',
        url: '/v1/ns_create',
        headers: { authorization: `Bearer ${server.token}`, 'idempotency-key': `key-${key}` },
        payload: { key, description: `about ${key}` },
      });
    const replies = await Promise.all(keys.map(create));
    expect(replies.map((reply) => reply.statusCode)).toEqual(keys.map(() => 200));
    // Before, each keyed write formatted four times (its rows, its kept reply, the cutoff of the replies it may replay).
    expect(formatted.mock.calls.length).toBeLessThanOrEqual(4);
    // The times kept are right: a repeat is answered with the first reply, as a replay.
    const repeat = await create('ns-7');
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json()).toEqual({ success: true, data: { key: 'ns-7', description: 'about ns-7' } });
  });
});
