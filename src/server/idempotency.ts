import { createHash } from 'node:crypto';
import { KbApiError } from '../api/errors.js';
import { isoNow } from '../store/clock.js';
import type { IdempotencyCapture, IdempotencyRecord, KeyedResult, Principal, StoredReply, WriteOutcome } from '../store/store.js';
import { IdempotencyBusyError, replyFor } from './errors.js';
import { sharedPlugin } from './plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Idempotency-Key on the writes of this app. */
    idempotency: Idempotency;
  }
}

/** Keys as Stripe takes them: up to 255 visible ASCII characters. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function checkIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw new KbApiError('bad_request', 'Invalid Idempotency-Key header', 'Send one key of 1 to 255 visible ASCII characters, e.g. a UUID.');
  }
  return value;
}

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function fingerprint(route: string, body: unknown): string {
  return createHash('sha256').update(`${route}\n${canonical(body)}`).digest('hex');
}

function replay(record: IdempotencyRecord, print: string): Done {
  if (record.fingerprint !== print) {
    throw new KbApiError('idempotency_mismatch', 'This Idempotency-Key was already used with a different request', 'Use a new key for a new request.');
  }
  return { reply: { status: record.status, body: record.body }, replayed: true };
}

/** How long a repeat waits for the first request with its key (docs/contract.md, Idempotency-Key). */
export const REPEAT_WAIT_MS = 5000;
/** How often a repeat looks again while another server runs the key's first request. */
const BUSY_POLL_MS = [10, 20, 50, 100, 200];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Execute = (capture: IdempotencyCapture) => Promise<KeyedResult>;

interface Done {
  reply: StoredReply;
  replayed: boolean;
}

/**
 * Stripe's semantics for Idempotency-Key on POST and DELETE: the first result (status and body) is stored with the
 * write, per organization; a repeat with the same body replays it; the same key with another body is 422. A repeat
 * that arrives while the first request runs waits for it (up to REPEAT_WAIT_MS) and gets its reply; past that, 409
 * with Retry-After. Requests refused before they run (400, 401) keep nothing.
 */
export class Idempotency {
  /**
   * The key's request running in this process, by organization and key: settles with the record its repeats replay
   * (undefined when it kept nothing, a failed commit say, and a repeat must then run itself). Repeats in this process
   * wait for it instead of reaching the store; across processes the store decides (KeyedResult).
   */
  private readonly running = new Map<string, Promise<IdempotencyRecord | undefined>>();

  constructor(
    /** The reply an outcome gets: the same function that answers requests without a key. */
    private readonly replyFor: (outcome: WriteOutcome) => StoredReply | undefined,
    private readonly waitMs = REPEAT_WAIT_MS,
  ) {}

  /** Runs the write once per key and answers every repeat with the first reply. */
  async run(principal: Principal, key: string, print: string, execute: Execute): Promise<Done> {
    const slot = `${principal.orgId}\u0000${key}`;
    const deadline = Date.now() + this.waitMs;
    for (let polls = 0; ; ) {
      const first = this.running.get(slot);
      if (first !== undefined) {
        const record = await within(first, deadline);
        if (record === TIMED_OUT) throw new IdempotencyBusyError();
        if (record !== undefined) return replay(record, print);
        continue;
      }
      const attempt = this.attempt(principal, key, print, execute);
      const settled = attempt.then(
        (result) => (result.kind === 'busy' ? undefined : result.record),
        () => undefined,
      );
      this.running.set(slot, settled);
      void settled.then(() => {
        if (this.running.get(slot) === settled) this.running.delete(slot);
      });
      const result = await attempt;
      if (result.kind === 'done') return result.done;
      // Another server runs the key's first request: look again until it has finished, or the wait is over.
      const pause = Math.min(BUSY_POLL_MS[Math.min(polls++, BUSY_POLL_MS.length - 1)] as number, deadline - Date.now());
      if (pause <= 0) throw new IdempotencyBusyError();
      await sleep(pause);
    }
  }

  /** One try at the store: the reply to send and the record repeats replay, or busy. */
  private async attempt(
    principal: Principal,
    key: string,
    print: string,
    execute: Execute,
  ): Promise<{ kind: 'done'; done: Done; record: IdempotencyRecord | undefined } | { kind: 'busy' }> {
    const capture: IdempotencyCapture = { orgId: principal.orgId, key, fingerprint: print, reply: this.replyFor };
    const result = await execute(capture);
    switch (result.kind) {
      case 'busy':
        return result;
      case 'replayed':
        return { kind: 'done', done: replay(result.record, print), record: result.record };
      case 'ran': {
        const { outcome, reply } = result;
        // Nothing kept: a failure worth retrying (a 5xx of the write itself). Its error is the answer, and a repeat runs.
        if (reply === undefined) throw outcome.ok ? new KbApiError('internal', 'Internal server error') : outcome.error;
        const record = { fingerprint: print, ...reply, createdAt: isoNow() };
        return { kind: 'done', done: { reply, replayed: false }, record };
      }
    }
  }
}

const TIMED_OUT = Symbol('timed out');

/** The promise's value, or TIMED_OUT once the deadline has passed. */
async function within<T>(promise: Promise<T>, deadline: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Idempotency-Key on POST and DELETE, with the replies the routes give (errors.ts: replyFor). */
export const idempotency = sharedPlugin<{ waitMs?: number | undefined }>((app, options, done) => {
  app.decorate('idempotency', new Idempotency(replyFor, options.waitMs ?? REPEAT_WAIT_MS));
  done();
});
