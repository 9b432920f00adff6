import { createHash } from 'node:crypto';
import { KbApiError } from '../api/errors.js';
import {
  type IdempotencyCapture,
  IdempotencyInProgress,
  IdempotentReplay,
  type IdempotencyRecord,
  type Principal,
  type StoredReply,
  type WriteOutcome,
} from '../store/store.js';
import { replyFor } from './errors.js';
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

function replay(record: IdempotencyRecord, print: string): { reply: StoredReply; replayed: true } {
  if (record.fingerprint !== print) {
    throw new KbApiError('idempotency_mismatch', 'This Idempotency-Key was already used with a different request', 'Use a new key for a new request.');
  }
  return { reply: { status: record.status, body: record.body }, replayed: true };
}

function inProgress(): KbApiError {
  return new KbApiError('conflict', 'A request with this Idempotency-Key is still in progress', 'Retry once it has finished.');
}

export type Execute = (capture: IdempotencyCapture) => Promise<unknown>;

/**
 * Stripe's semantics for Idempotency-Key on POST and DELETE: the first result (status and body) is stored with the
 * write, per organization; a repeat with the same body replays it; the same key with another body is 422; a repeat
 * while the first is still running is 409. Requests refused before they run (400, 401) keep nothing.
 */
export class Idempotency {
  /**
   * Keys of this process's requests still running, for the 409. Across processes the store decides: it looks for a
   * kept reply inside the write's own transaction, so a second process replays instead of running again, and raises
   * IdempotencyInProgress when another process holds the key right now (PostgreSQL).
   */
  private readonly running = new Set<string>();

  constructor(
    /** The reply an outcome gets: the same function that answers requests without a key. */
    private readonly replyFor: (outcome: WriteOutcome) => StoredReply | undefined,
  ) {}

  /** Runs the write once per key and answers every repeat with the first reply. */
  async run(principal: Principal, key: string, print: string, execute: Execute): Promise<{ reply: StoredReply; replayed: boolean }> {
    const slot = `${principal.orgId}\u0000${key}`;
    if (this.running.has(slot)) throw inProgress();
    this.running.add(slot);
    try {
      // The reply the store kept for the write's own outcome, inside the write's transaction.
      let made: { outcome: WriteOutcome; reply: StoredReply | undefined } | undefined;
      const capture: IdempotencyCapture = {
        orgId: principal.orgId,
        key,
        fingerprint: print,
        reply: (outcome) => (made = { outcome, reply: this.replyFor(outcome) }).reply,
      };
      try {
        await execute(capture);
      } catch (error) {
        if (error instanceof IdempotentReplay) return replay(error.record, print);
        if (error instanceof IdempotencyInProgress) throw inProgress();
        // Only the write's own failure (a 404, a 409) was committed with its reply. Any other error came after the
        // reply was made, from the commit itself (a full disk, a lost connection): nothing was kept, so the reply must
        // not be sent either; the client gets the storage failure and may retry with the same key.
        if (made?.reply === undefined || made.outcome.ok || made.outcome.error !== error) throw error;
        return { reply: made.reply, replayed: false };
      }
      if (made?.reply === undefined || !made.outcome.ok) throw new KbApiError('internal', 'Internal server error');
      return { reply: made.reply, replayed: false };
    } finally {
      this.running.delete(slot);
    }
  }
}

/** Idempotency-Key on POST and DELETE, with the replies the routes give (errors.ts: replyFor). */
export const idempotency = sharedPlugin((app, _options, done) => {
  app.decorate('idempotency', new Idempotency(replyFor));
  done();
});
