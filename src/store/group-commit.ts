import { isoNow } from './clock.js';
import type { IdempotencyCapture, IdempotencyRecord, KeyedResult, StoredReply, WriteOutcome } from './store.js';

/**
 * The group commit both engines share: writes that arrive in one turn of the event loop are queued into one batch,
 * committed in one transaction (each write in a savepoint of its own, its Idempotency-Key's reply kept with it), and
 * told what became of them only after the COMMIT. What is the same for every engine lives here, so the engines cannot
 * disagree on it: the queue and its batches, which copy of a key runs and which replays, and how each write's promise
 * is settled (docs/contract.md, Idempotency-Key). An engine gives its SQL and its transaction primitives.
 */

/** A write waiting for its group commit. */
export interface QueuedWrite {
  /** Present on a keyed write: it then resolves with a KeyedResult, and rejects only with the commit's failure. */
  capture: IdempotencyCapture | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What a batch decided for one write: its outcome (unkeyed), or what became of it (keyed). */
export type Settled = WriteOutcome | KeyedResult;

/**
 * Batches of the writes queued in one turn of the event loop, at most `maxBatch` writes each, `concurrent` batches
 * in flight at once; with `overlapFrom`, a batch starts while another is in flight only once that many writes wait
 * (fewer wait for the one in flight to finish, and go together in the next). With `gatherMs`, a batch that would
 * start with nothing in flight first waits for the writers the last batch answered to send their next writes: until
 * as many writes wait as were waiting when it finished plus as many as it carried, or for as long as it took (at most
 * gatherMs), whichever comes first. Without it, clients that each send their next write when answered split into two
 * cohorts that take turns, each batch carrying half of them, each paying a commit. `flush` commits a batch and settles
 * its writes (settle); a synchronous engine (SQLite) commits within the call, an asynchronous one returns a promise.
 */
export class WriteQueue<W extends QueuedWrite> {
  private queue: W[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** With gatherMs: the writes the next batch waits for, and until when (the timer that ends the wait). */
  private expected = 0;
  private gathering: NodeJS.Timeout | undefined;
  private lastFlightMs = 0;

  constructor(
    private readonly flush: (batch: W[]) => void | Promise<void>,
    private readonly limits: { maxBatch: number; concurrent: number; overlapFrom?: number; gatherMs?: number },
  ) {}

  push(write: W): void {
    this.queue.push(write);
    this.schedule();
  }

  /** Writes a batch left to the next one (a base whose namespace it must create first): they go first. */
  pushFirst(writes: W[]): void {
    this.queue.unshift(...writes);
    this.schedule();
  }

  /** Takes every write still queued, for an engine that closes to commit them at once. */
  takeAll(): W[] {
    return this.queue.splice(0);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.limits.concurrent) {
      if (this.inFlight > 0 && this.queue.length < (this.limits.overlapFrom ?? 0)) return;
      if (this.inFlight === 0 && this.gather()) return;
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight++;
      const started = performance.now();
      const done = this.flush(batch);
      if (done === undefined) {
        this.inFlight--;
        continue;
      }
      void done.finally(() => {
        this.inFlight--;
        this.lastFlightMs = performance.now() - started;
        if (this.limits.gatherMs !== undefined) this.expected = Math.min(this.limits.maxBatch, this.queue.length + batch.length);
        this.pump();
      });
    }
  }

  /** Whether the next batch waits for more writes (gatherMs): a timer then ends the wait, if enough do not come first. */
  private gather(): boolean {
    if (this.queue.length >= this.expected) {
      this.expected = 0;
      clearTimeout(this.gathering);
      this.gathering = undefined;
      return false;
    }
    this.gathering ??= setTimeout(() => {
      this.gathering = undefined;
      this.expected = 0;
      this.pump();
    }, Math.min(this.limits.gatherMs ?? 0, this.lastFlightMs));
    return true;
  }
}

/**
 * The copies of one Idempotency-Key in a batch: the first copy is claimed (its kept reply looked for, the write run
 * when there is none); every later copy follows it (follow). Returns, by index, the index of the first copy each
 * follower follows.
 */
export function followers(batch: readonly QueuedWrite[]): Map<number, number> {
  const firsts = new Map<string, number>();
  const following = new Map<number, number>();
  batch.forEach(({ capture }, index) => {
    if (capture === undefined) return;
    const slot = `${capture.orgId}\u0000${capture.key}`;
    const first = firsts.get(slot);
    if (first === undefined) firsts.set(slot, index);
    else following.set(index, first);
  });
  return following;
}

/**
 * What a later copy of a key in one batch gets: the same replay as its first copy, the reply kept for the first's
 * outcome (as a replay of it), or the same wait when the first is busy. Undefined when the first kept nothing: the
 * copy then runs itself.
 */
export function follow(first: QueuedWrite, settled: KeyedResult | undefined, reply: StoredReply | undefined): KeyedResult | undefined {
  if (settled?.kind === 'replayed' || settled?.kind === 'busy') return settled;
  if (reply === undefined || first.capture === undefined) return undefined;
  return { kind: 'replayed', record: { fingerprint: first.capture.fingerprint, ...reply, createdAt: isoNow() } };
}

/** What the plan of a batch asks of its engine, inside the batch's transaction, one write at a time. */
export type Step =
  /** The reply kept under the write's key (by an earlier commit): answered with it, null, or 'busy' (held elsewhere). */
  | { ask: 'kept'; index: number }
  /** Run the write in a savepoint of its own (undone alone when it fails): answered with its outcome. */
  | { ask: 'run'; index: number }
  /** Keep this reply under the write's key, in the transaction: answered with nothing. */
  | { ask: 'keep'; index: number; reply: StoredReply };

export type Answer = IdempotencyRecord | null | 'busy' | WriteOutcome | undefined;

/**
 * The group commit's rules for the writes of one batch, the same for every engine: a later copy of a key follows its
 * first copy; a keyed write's kept reply is looked for first and replayed (the write not run); otherwise the write
 * runs, and the reply its outcome gets is kept with it. An engine drives it, answering each Step with its own
 * statements (synchronously, or awaiting each), and gets what became of every write.
 */
export function* planBatch(batch: readonly QueuedWrite[]): Generator<Step, Settled[], Answer> {
  const following = followers(batch);
  const results: Settled[] = [];
  const replies = new Map<number, StoredReply | undefined>();
  for (const [index, write] of batch.entries()) {
    const first = following.get(index);
    const copied = first === undefined ? undefined : follow(batch[first] as QueuedWrite, results[first] as KeyedResult, replies.get(first));
    if (copied !== undefined) {
      results[index] = copied;
      continue;
    }
    if (write.capture !== undefined) {
      const found = (yield { ask: 'kept', index }) as IdempotencyRecord | null | 'busy';
      if (found === 'busy') {
        results[index] = { kind: 'busy' };
        continue;
      }
      if (found !== null) {
        results[index] = { kind: 'replayed', record: found };
        continue;
      }
    }
    const outcome = (yield { ask: 'run', index }) as WriteOutcome;
    const reply = write.capture?.reply(outcome);
    if (reply !== undefined) yield { ask: 'keep', index, reply };
    replies.set(index, reply);
    results[index] = write.capture === undefined ? outcome : { kind: 'ran', outcome, reply };
  }
  return results;
}

/** Drives a plan synchronously: `answer` runs each step's statements at once (SQLite). */
export function planNow(batch: readonly QueuedWrite[], answer: (step: Step) => Answer): Settled[] {
  const plan = planBatch(batch);
  for (let step = plan.next(); ; ) {
    if (step.done) return step.value;
    step = plan.next(answer(step.value));
  }
}

/** Drives a plan, awaiting each step's statements (PostgreSQL). */
export async function planAwaited(batch: readonly QueuedWrite[], answer: (step: Step) => Answer | Promise<Answer>): Promise<Settled[]> {
  const plan = planBatch(batch);
  for (let step = plan.next(); ; ) {
    if (step.done) return step.value;
    step = plan.next(await answer(step.value));
  }
}

/** The outcome of a write that ran, whatever it was sent as; undefined for one that did not run. */
export function outcomeOf(result: Settled): WriteOutcome | undefined {
  if (!('kind' in result)) return result;
  return result.kind === 'ran' ? result.outcome : undefined;
}

/**
 * Tells every write of a committed batch what became of it: a keyed write resolves with its KeyedResult, whatever it
 * is; an unkeyed one with its value, or rejects with its own failure (a 404, a 409). A write with no result (left to
 * the next batch) is not told anything here.
 */
export function settle(batch: readonly QueuedWrite[], results: ReadonlyArray<Settled | undefined>): void {
  batch.forEach((write, index) => {
    const result = results[index];
    if (result === undefined) return;
    if ('kind' in result) write.resolve(result);
    else if (result.ok) write.resolve(result.value);
    else write.reject(result.error);
  });
}

/** A batch whose commit failed kept nothing of any of its writes: each fails with the commit's failure. */
export function failAll(batch: readonly QueuedWrite[], failure: unknown): void {
  for (const write of batch) write.reject(failure);
}
