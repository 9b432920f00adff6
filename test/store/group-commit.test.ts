import { describe, expect, it } from 'vitest';
import { type QueuedWrite, WriteQueue } from '../../src/store/group-commit.js';

const write = (): QueuedWrite => ({ capture: undefined, resolve: () => undefined, reject: () => undefined });
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A queue whose batches stay in flight until the test ends them, one at a time, oldest first. */
function held(limits: { maxBatch: number; concurrent: number; overlapFrom?: number }) {
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
});
