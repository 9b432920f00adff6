import { afterEach, describe, expect, it, vi } from 'vitest';
import { type QueuedWrite, WriteQueue } from '../../src/store/group-commit.js';

const write = (): QueuedWrite => ({ capture: undefined, resolve: () => undefined, reject: () => undefined });
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A queue whose batches stay in flight until the test ends them, one at a time, oldest first. */
function held(limits: { maxBatch: number; concurrent: number; overlapFrom?: number; gatherMs?: number }) {
  const started: number[] = [];
  const ends: Array<() => void> = [];
  const queue = new WriteQueue<QueuedWrite>((batch) => {
    started.push(batch.length);
    return new Promise<void>((resolve) => ends.push(resolve));
  }, limits);
  return { queue, started, end: async () => { ends.shift()?.(); await turn(); await turn(); } };
}

describe('WriteQueue', () => {
  it('starts a second batch while one is in flight at once, without overlapFrom', async () => {
    const { queue, started } = held({ maxBatch: 64, concurrent: 2 });
    queue.push(write());
    await turn();
    queue.push(write());
    await turn();
    expect(started).toEqual([1, 1]);
  });

  it('with overlapFrom, lets fewer writes wait for the batch in flight and go together in the next', async () => {
    const { queue, started, end } = held({ maxBatch: 4, concurrent: 2, overlapFrom: 4 });
    queue.push(write());
    await turn();
    for (let i = 0; i < 3; i++) queue.push(write());
    await turn();
    expect(started).toEqual([1]);
    await end();
    expect(started).toEqual([1, 3]);
    // As many as overlapFrom waiting: a second batch goes while the first is in flight.
    for (let i = 0; i < 6; i++) queue.push(write());
    await turn();
    expect(started).toEqual([1, 3, 4]);
    // The first of them ends: the two left still wait, for the other.
    await end();
    expect(started).toEqual([1, 3, 4]);
    await end();
    expect(started).toEqual([1, 3, 4, 2]);
  });

  describe('with gatherMs', () => {
    // The queue's clock (performance.now) and its timer are the test's; the turns of the event loop are real.
    const clock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    afterEach(() => void vi.useRealTimers());

    it('waits, with nothing in flight, for as many writes as waited and as the last batch answered', async () => {
      clock();
      const { queue, started, end } = held({ maxBatch: 64, concurrent: 2, overlapFrom: 64, gatherMs: 5000 });
      for (let i = 0; i < 3; i++) queue.push(write());
      await turn();
      // The first batch goes at once (nothing was answered before it).
      expect(started).toEqual([3]);
      queue.push(write());
      await turn();
      vi.advanceTimersByTime(1000);
      await end();
      // One waits, three were answered: the next batch waits for four.
      expect(started).toEqual([3]);
      queue.push(write());
      queue.push(write());
      await turn();
      expect(started).toEqual([3]);
      queue.push(write());
      await turn();
      expect(started).toEqual([3, 4]);
    });

    it('waits no longer than the last batch took, nor than gatherMs', async () => {
      clock();
      const { queue, started, end } = held({ maxBatch: 64, concurrent: 2, overlapFrom: 64, gatherMs: 5000 });
      for (let i = 0; i < 3; i++) queue.push(write());
      await turn();
      vi.advanceTimersByTime(20);
      await end();
      queue.push(write());
      await turn();
      vi.advanceTimersByTime(19);
      await turn();
      expect(started).toEqual([3]);
      vi.advanceTimersByTime(1);
      await turn();
      expect(started).toEqual([3, 1]);
      // A batch that took longer than gatherMs: the next waits gatherMs (for two: one waited, one was answered).
      queue.push(write());
      await turn();
      vi.advanceTimersByTime(60_000);
      await end();
      vi.advanceTimersByTime(4999);
      await turn();
      expect(started).toEqual([3, 1]);
      vi.advanceTimersByTime(1);
      await turn();
      expect(started).toEqual([3, 1, 1]);
    });
  });
});
