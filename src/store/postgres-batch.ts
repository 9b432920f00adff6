import type pg from 'pg';
import type { Base } from '../api/schemas.js';
import { failures } from './failures.js';
import { followers, planAwaited, type QueuedWrite, type Settled } from './group-commit.js';
import type { Changes } from './postgres-changes.js';
import {
  activeTokens,
  arrayLiteral,
  type Client,
  CommitUnconfirmed,
  encode,
  idempotencyLock,
  InsertBases,
  isConnectionFailure,
  isText,
  KEEP_REPLIES,
  keptRecord,
  keptReplyRow,
  type KeptRow,
  type NotCreated,
  ON_KEPT_CONFLICT,
  sql,
  storageFailure,
  WriteStep,
} from './postgres-sql.js';
import { IDEMPOTENCY_RETENTION_MS, type IdempotencyCapture, type IdempotencyRecord, type StoredReply, type WriteOutcome } from './store.js';

// The PostgreSQL engine's group commit: one batch of writes in one transaction, on one connection (group-commit.ts
// queues the batches and settles their writes).

/** A base create, which a batch inserts together with the others of its batch in one statement (insertBases). */
export interface BaseRow {
  orgId: number;
  base: Base;
}

export interface Pending extends QueuedWrite {
  op: (step: WriteStep) => Promise<unknown>;
  changes: Changes;
  /** Set on a base create that may go into its batch's one INSERT; cleared when it must run on its own (op). */
  row?: BaseRow | undefined;
  /** The token the write was sent with: it runs only while that token is active (Write.tokenId). */
  tokenId?: string | undefined;
}

/** What the claim of a batch's keys decided: writes settled before they run, and later copies of a key (their first's index). */
interface Claimed {
  /** By index: the reply kept under the write's key, or 'busy' when another connection holds it with none yet. */
  kept: Map<number, IdempotencyRecord | 'busy'>;
  /** By index: a write whose key cannot be written into a statement, failed without running. */
  refused: Map<number, WriteOutcome>;
}

/**
 * What the batch's INSERT of base rows decided for a write: inserted, taken already, refused (its token was revoked),
 * or left to the write's own op.
 */
type RowVerdict = 'created' | 'exists' | 'revoked' | 'alone';

/**
 * Writes of one group commit at most. Each write's savepoint takes a subtransaction id, and a backend keeps 64 of them
 * in shared memory: past that, every other session's snapshots must look subtransactions up on disk (suboverflow).
 */
export const MAX_BATCH = 64;
/**
 * Group commits in flight at once per replica: one gathers writes while the other waits for PostgreSQL's flush, once
 * OVERLAP_FROM writes wait. Fewer wait for the batch in flight and go together in the next: a batch costs a replica
 * a round trip and a wake-up whatever its size, so at a moderate load one batch at a time carries more writes each for
 * less CPU per write, and at a heavy one two overlap.
 */
export const CONCURRENT_BATCHES = 2;
export const OVERLAP_FROM = MAX_BATCH;
/**
 * How long at most a batch waits for the writers the last one answered (WriteQueue's gatherMs), and never longer than
 * the last commit took: at the bench's 16 clients a replica, batches of about 8 become batches of about 16, for half
 * the commits, flushes and round trips.
 */
export const GATHER_MS = 2;
/** Commits the batches of one replica's pool. */
export class BatchCommit {
  constructor(
    /** Broken connections, told by their 'error' event: what a batch must not go on with. */
    private readonly broken: WeakMap<pg.ClientBase, Error>,
  ) {}

  /**
   * Runs a batch in one transaction and commits it; resolves what became of each write, or undefined for a write left
   * to the next batch. The base creates of a batch go into one INSERT (insertBases). A batch of nothing else, without
   * Idempotency-Keys, is that one statement on its own, committed by itself: one round trip. Otherwise the transaction
   * takes the keys first (claim), then inserts the bases, then runs every other write in a savepoint of its own, so
   * that one failing write (a 409, a 404) is undone alone; the replies kept under keys are committed with their writes.
   * A write whose token is no longer active (Write.tokenId) fails with 401 and runs nothing: the INSERT leaves its row
   * out; otherwise the transaction, which looked its tokens up first, is rolled back and the batch's other writes are
   * left to the next one.
   */
  async commit(client: Client, batch: Pending[]): Promise<Array<Settled | undefined>> {
    const outcomes: Array<WriteOutcome | undefined> = batch.map(() => undefined);
    const keyed = batch.some((item) => item.capture !== undefined);
    if (!keyed && batch.every((item) => item.row !== undefined)) {
      // The statement commits by itself: a connection lost meanwhile leaves its outcome unknown.
      const verdicts = await this.insertBases(client, batch, true).catch(unconfirmedCommit);
      // Refused as a whole: nothing was written (the statement committed, or failed, by itself). Each write runs alone.
      if (verdicts === undefined) return this.commit(client, alone(batch));
      batch.forEach((item, index) => {
        const verdict = verdicts[index] as RowVerdict;
        if (verdict === 'alone') item.row = undefined;
        else outcomes[index] = rowOutcome(item, verdict);
      });
      return outcomes;
    }

    const claimed: Claimed = { kept: new Map(), refused: new Map() };
    const following = followers(batch);
    for (const index of following.keys()) (batch[index] as Pending).row = undefined;
    const active = await (keyed ? this.claim(client, batch, following, claimed) : this.begin(client, batch));
    if (active !== undefined && batch.some((item) => item.tokenId !== undefined && !active.has(item.tokenId))) {
      await client.query('ROLLBACK');
      return batch.map((item) => (item.tokenId === undefined || active.has(item.tokenId) ? undefined : { ok: false, error: failures.tokenRevoked() }));
    }
    // The base creates that run at all (not replayed, not held elsewhere, not later copies of a key) go into one INSERT.
    const rows = batch.filter((item, index) => item.row !== undefined && !claimed.kept.has(index) && !following.has(index));
    if (rows.length > 0) {
      // Their tokens were looked up as the transaction began: a revocation since is concurrent with these writes.
      const verdicts = await this.insertBases(client, rows, false);
      if (verdicts === undefined) {
        await client.query('ROLLBACK');
        return this.commit(client, alone(batch));
      }
      rows.forEach((item, at) => {
        const verdict = verdicts[at] as RowVerdict;
        if (verdict === 'alone') item.row = undefined;
        else outcomes[batch.indexOf(item)] = rowOutcome(item, verdict);
      });
    }
    // The group commit's plan (group-commit.ts), answered with this batch's statements: what the claim and the INSERT
    // decided is answered at once; every other write runs in a savepoint; the replies of base rows go with the COMMIT.
    const keptRows: string[] = [];
    const savepoint = { taken: false };
    const results = await planAwaited(batch, async (step) => {
      const item = batch[step.index] as Pending;
      switch (step.ask) {
        case 'kept':
          return claimed.kept.get(step.index) ?? null;
        case 'run':
          return outcomes[step.index] ?? claimed.refused.get(step.index) ?? (await this.runInBatch(client, item, savepoint));
        case 'keep': {
          const capture = item.capture as IdempotencyCapture;
          if (outcomes[step.index] !== undefined) keptRows.push(keptReplyRow(capture, step.reply));
          else await this.keep(client, capture, step.reply);
          return undefined;
        }
      }
    });
    // The last write's savepoint goes with the COMMIT, and so do the replies of the base rows.
    await client.query(keptRows.length > 0 ? `${KEEP_REPLIES} VALUES ${keptRows.join(', ')} ${ON_KEPT_CONFLICT}; COMMIT` : 'COMMIT').catch(unconfirmedCommit);
    return results;
  }

  /**
   * Opens the batch's transaction and takes every Idempotency-Key of the batch, in one round trip: first each key's
   * advisory lock, then, in a statement of its own and so a snapshot taken after the locks, the replies kept under
   * them. A key with a kept reply is replayed, whether or not its lock was free (another replica may be replaying it
   * too); a key whose lock another connection holds and that has no reply yet is busy (its first request runs there
   * now). A second copy of a key in the batch follows the first (commit gives it the first's reply).
   */
  private async claim(client: Client, batch: Pending[], following: ReadonlyMap<number, number>, claimed: Claimed): Promise<ReadonlySet<string> | undefined> {
    const claims: Array<{ index: number; capture: IdempotencyCapture; lock: string; org: string; key: string }> = [];
    for (const [index, { capture }] of batch.entries()) {
      if (capture === undefined || following.has(index)) continue;
      try {
        // Written into statements here and with the reply (keptReplyRow): a value that cannot be fails this write alone.
        sql.text(capture.fingerprint);
        claims.push({ index, capture, lock: idempotencyLock(capture.orgId, capture.key), org: sql.integer(capture.orgId), key: sql.text(capture.key) });
      } catch (error) {
        claimed.refused.set(index, { ok: false, error });
      }
    }
    if (claims.length === 0) return this.begin(client, batch);
    const tokens = activeTokens(batch.map((item) => item.tokenId));
    const [, locks, kept, active] = (await client.query(
      `BEGIN;
       SELECT pg_try_advisory_xact_lock(claim.lock) AS locked FROM unnest(ARRAY[${claims.map((claim) => claim.lock).join(', ')}]::int8[])
         WITH ORDINALITY AS claim(lock, n) ORDER BY claim.n;
       SELECT claim.n, kept.fingerprint, kept.status, kept.body, kept.created_at
         FROM (VALUES ${claims.map((claim, n) => `(${n}, ${claim.org}::int8, ${claim.key}::text)`).join(', ')}) AS claim(n, org_id, key)
         JOIN idempotency kept ON kept.org_id = claim.org_id AND kept.key = claim.key COLLATE "C"
         WHERE kept.created_at >= now() - ${sql.integer(IDEMPOTENCY_RETENTION_MS)}::float8 * interval '1 millisecond'
       ${tokens === undefined ? '' : `; ${tokens}`}`,
    )) as unknown as [pg.QueryResult, pg.QueryResult<{ locked: boolean }>, pg.QueryResult<KeptRow & { n: number }>, pg.QueryResult<{ id: string }>?];
    const keptBy = new Map(kept.rows.map((row) => [row.n, row]));
    claims.forEach((claim, n) => {
      const row = keptBy.get(n);
      if (row) claimed.kept.set(claim.index, keptRecord(row));
      else if (!locks.rows[n]?.locked) claimed.kept.set(claim.index, 'busy');
    });
    return active && new Set(active.rows.map((row) => row.id));
  }

  /** Opens the batch's transaction, and looks up which of its writes' tokens are active (undefined: none named). */
  private async begin(client: Client, batch: Pending[]): Promise<ReadonlySet<string> | undefined> {
    const tokens = activeTokens(batch.map((item) => item.tokenId));
    if (tokens === undefined) {
      await client.query('BEGIN');
      return undefined;
    }
    const [, active] = (await client.query(`BEGIN; ${tokens}`)) as unknown as [pg.QueryResult, pg.QueryResult<{ id: string }>];
    return new Set(active.rows.map((row) => row.id));
  }

  /**
   * Inserts the bases of several creates with one statement, in key order (so that two batches inserting the same
   * keys wait for each other rather than deadlock), skipping a key taken already (ON CONFLICT DO NOTHING waits for a
   * concurrent insert of the key to commit or roll back, so of concurrent creates exactly one is 'created'). A row
   * whose namespace does not exist, that repeats another row of the batch, or that would fail the statement as a whole
   * is left 'alone', to its write's own op. Undefined when PostgreSQL refused the statement as a whole,
   * which then wrote nothing; a lost connection throws.
   */
  private async insertBases(client: Client, items: Pending[], checkTokens: boolean): Promise<RowVerdict[] | undefined> {
    const verdicts: RowVerdict[] = items.map(() => 'alone');
    const sent: number[] = [];
    const columns = { org: [] as number[], namespace: [] as string[], key: [] as string[], description: [] as Array<Buffer | null>, token: [] as Array<string | null> };
    const seen = new Set<string>();
    for (const [n, item] of items.entries()) {
      const { orgId, base } = item.row as BaseRow;
      // What would fail the whole statement (a key that is not text, or holds a NUL, which PostgreSQL's text cannot)
      // fails its write alone, in its op.
      if (!isText(base.namespace) || !isText(base.key) || !(base.description == null || typeof base.description === 'string')) continue;
      const slot = `${orgId}\u0000${base.namespace}\u0000${base.key}`;
      if (seen.has(slot)) continue;
      seen.add(slot);
      sent.push(n);
      columns.org.push(orgId);
      columns.namespace.push(base.namespace);
      columns.key.push(base.key);
      columns.description.push(encode(base.description));
      columns.token.push(checkTokens ? (item.tokenId ?? null) : null);
    }
    if (sent.length === 0) return verdicts;
    let rows: NotCreated[];
    try {
      const insert = new InsertBases([
        arrayLiteral.integers(columns.org),
        arrayLiteral.texts(columns.namespace),
        arrayLiteral.texts(columns.key),
        arrayLiteral.bytes(columns.description),
        arrayLiteral.texts(columns.token),
      ]);
      client.query(insert as unknown as pg.Submittable);
      rows = await insert.done;
    } catch (error) {
      if (this.broken.has(client) || isConnectionFailure(error)) throw error;
      return undefined;
    }
    for (const n of sent) verdicts[n] = 'created';
    for (const row of rows) verdicts[sent[row.n - 1] as number] = row.revoked ? 'revoked' : row.found ? 'exists' : 'alone';
    return verdicts;
  }

  /** One write of a batch, in a savepoint of its own; its Idempotency-Key was claimed with the batch's (claim). */
  private async runInBatch(client: Client, item: Pending, savepoint: { taken: boolean }): Promise<WriteOutcome> {
    // The previous write's savepoint is released as this one's is taken, with the write's first statement.
    const step = new WriteStep(client, savepoint.taken ? 'RELEASE SAVEPOINT write; SAVEPOINT write' : 'SAVEPOINT write');
    let outcome: WriteOutcome;
    try {
      outcome = { ok: true, value: await item.op(step) };
    } catch (error) {
      // A connection that broke ends the batch; anything else is this write's own failure.
      if (this.broken.has(client) || isConnectionFailure(error)) throw error;
      // A write that failed before sending anything has nothing to undo (and the savepoint named is a previous one's).
      if (step.sent) await client.query('ROLLBACK TO SAVEPOINT write');
      outcome = { ok: false, error: storageFailure(error) };
    }
    if (step.sent) savepoint.taken = true;
    return outcome;
  }

  /** Keeps a reply under its key, in the batch's transaction (after its write's statements). */
  private async keep(client: Client, capture: IdempotencyCapture, reply: StoredReply): Promise<void> {
    await client.query({
      name: 'idempotency_put',
      text: `${KEEP_REPLIES} VALUES ($1, $2, $3, $4, $5, now()) ${ON_KEPT_CONFLICT}`,
      values: [capture.orgId, capture.key, capture.fingerprint, reply.status, reply.body],
    });
  }
}

/**
 * Rethrows what the round trip carrying a batch's commit threw; a lost connection as CommitUnconfirmed (the commit
 * may have reached the database). A statement the database refused rolled the commit back: that stays as it is.
 */
function unconfirmedCommit(error: unknown): never {
  throw isConnectionFailure(error) ? new CommitUnconfirmed(error) : error;
}

function alone(batch: Pending[]): Pending[] {
  for (const item of batch) item.row = undefined;
  return batch;
}

/** A base create's outcome as the batch's INSERT decided it. */
function rowOutcome(item: Pending, verdict: 'created' | 'exists' | 'revoked'): WriteOutcome {
  const { base } = item.row as BaseRow;
  if (verdict === 'revoked') return { ok: false, error: failures.tokenRevoked() };
  return verdict === 'created'
    ? { ok: true, value: { namespace: base.namespace, key: base.key, description: base.description } }
    : { ok: false, error: failures.baseExists(base.namespace, base.key) };
}

