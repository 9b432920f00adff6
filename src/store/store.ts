import type { Base, Namespace } from '../api/schemas.js';
import type { ChangeLog } from './changes.js';

/**
 * What a token may do (docs/contract.md, Tokens): `full` reads and writes, `read-only` reads and is refused every write
 * with 403. Tokens made before scopes existed are `full`.
 */
export type TokenScope = 'full' | 'read-only';

/** Who a request acts for: the organization its token names, and what the token allows until when. */
export interface Principal {
  orgId: number;
  org: string;
  tokenId: string;
  scope: TokenScope;
  /** When the token stops working (ms since the epoch), or null for never: checked on every request, by its clock. */
  expiresAt: number | null;
}

export interface TokenInfo {
  id: string;
  /** The name given at creation, unique among the tokens not revoked; null when none was given. */
  name: string | null;
  org: string;
  scope: TokenScope;
  createdAt: string;
  expiresAt: string | null;
  /** The start of the last minute the token was used in (written at most once a minute), or null when never. */
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What `kb serve token create` may say of a new token besides its organization; absent: no name, full, no expiry. */
export interface TokenOptions {
  name?: string | undefined;
  scope?: TokenScope | undefined;
  /** ISO 8601 time. */
  expiresAt?: string | undefined;
}

/** A description change: a string sets it, null clears it, undefined leaves it as it is. */
export interface DescriptionPatch {
  description?: string | null | undefined;
}

/** A reply kept under an Idempotency-Key: the status and the exact body first sent. */
export interface StoredReply {
  status: number;
  body: string;
}

export interface IdempotencyRecord extends StoredReply {
  /** Identifies the request (route and body) the key was first used with. */
  fingerprint: string;
  createdAt: string;
}

export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Keeps a write's reply under an Idempotency-Key in the write's own transaction, so the reply is stored if and
 * only if the write is (docs/contract.md, Idempotency-Key).
 */
export interface IdempotencyCapture {
  orgId: number;
  key: string;
  fingerprint: string;
  /** The reply to keep for an outcome; undefined keeps nothing (a failure worth retrying, such as a 5xx). */
  reply(outcome: WriteOutcome): StoredReply | undefined;
}

/**
 * One write of the API, as data: what a store runs, keyed or not. `tokenId` is the token it was sent with: a store whose
 * server authenticates writes without hearing first what other servers committed (PostgreSQL: no fence for a write)
 * checks, in the write's own transaction, that the token is still active, and fails the write with 401 when it is not,
 * running and keeping nothing of it.
 */
export type Write = (
  | { op: 'nsCreate'; orgId: number; ns: Namespace }
  | { op: 'nsUpdate'; orgId: number; key: string; patch: DescriptionPatch }
  | { op: 'baseCreate'; orgId: number; base: Base }
  | { op: 'baseUpdate'; orgId: number; namespace: string; key: string; patch: DescriptionPatch }
  | { op: 'baseDelete'; orgId: number; namespace: string; key: string }
  /** ns_delete, an extension (docs/contract.md, The local server): with bases, only when `cascade` (and they go with it). */
  | { op: 'nsDelete'; orgId: number; key: string; cascade: boolean }
) & { tokenId?: string | undefined };

/**
 * What became of a write sent under an Idempotency-Key. A store resolves every keyed write with one of these, and
 * rejects only when the commit itself failed (a full disk, a lost connection: then nothing of it was kept).
 */
export type KeyedResult =
  /** It ran and was committed: its outcome (a value, or its own failure such as a 404) and the reply kept with it. */
  | { kind: 'ran'; outcome: WriteOutcome; reply: StoredReply | undefined }
  /** It did not run: the key's reply was committed before; this is it. */
  | { kind: 'replayed'; record: IdempotencyRecord }
  /** It did not run: another connection runs the key's first request right now (another server over one database). */
  | { kind: 'busy' };

/** Told after each group commit that was committed: how many writes it held, and the seconds it took. */
export type CommitObserver = (writes: number, seconds: number) => void;

/** What a PostgreSQL replica uses of the database, read when metrics are scraped. */
export interface StoreUsage {
  /** The pool's connections: open, idle, and requests waiting for one. */
  total: number;
  idle: number;
  waiting: number;
  /** Whether the LISTEN connection listens (false: other replicas' writes may go unseen). */
  listening: boolean;
}

/** How long a key and its reply are kept: docs/contract.md, Idempotency-Key, asks for at least 24 hours. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The failed-authentication limit per client address (docs/contract.md, Limits: more than 20 failures within 60 s give 429). One call
 * both decides and counts, so concurrent failures cannot all slip under the limit.
 */
export interface AuthFailureLimit {
  /**
   * Counts a failed authentication from the address and resolves 0; or, when the address is over the limit already,
   * counts nothing and resolves the milliseconds until it may try again.
   */
  recordFailure(address: string): Promise<number>;
}

/**
 * The storage behind `kb serve`. Async so that a networked database can implement it; every write
 * resolves only once it is durable. Failures are KbApiError (not_found, conflict, insufficient_storage).
 */
export interface Store {
  /**
   * The organization of a token not revoked, looked up by the SHA-256 of the token; null when unknown or revoked. An
   * expired token is found (its expiresAt says so): the server tells its holder when it expired.
   */
  authenticate(tokenHash: Buffer): Promise<Principal | null>;
  /**
   * Creates the organization when new, and a token for it stored by hash only. A name taken by another token not
   * revoked is a conflict (KbApiError), and nothing is created.
   */
  createToken(org: string, id: string, tokenHash: Buffer, options?: TokenOptions): Promise<TokenInfo>;
  /**
   * Creates the token as createToken does, but only when there is no token at all yet (a first start); null otherwise.
   * Atomic, so of several servers starting at once on empty storage exactly one creates it.
   */
  createFirstToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo | null>;
  listTokens(): Promise<TokenInfo[]>;
  /** Marks a token revoked; null when there is no such token. Revoking twice is harmless. */
  revokeToken(id: string): Promise<TokenInfo | null>;
  /**
   * Records that the tokens were used in the minute starting at `minute` (ISO 8601): a token marked for that minute
   * already (by another server) is left as it is. Changes no version: what a token stands for stays the same.
   */
  markTokensUsed(ids: readonly string[], minute: string): Promise<void>;

  nsList(orgId: number): Promise<Namespace[]>;
  nsCreate(orgId: number, ns: Namespace): Promise<Namespace>;
  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace>;

  baseList(orgId: number, namespace: string): Promise<Base[]>;
  /** Every base of the organization, ordered by namespace key, then base key (byte order): one read for an export. */
  baseListAll(orgId: number): Promise<Base[]>;
  /** Creates the base, and its namespace in the same transaction when that does not exist. */
  baseCreate(orgId: number, base: Base): Promise<Base>;
  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base>;
  baseDelete(orgId: number, namespace: string, key: string): Promise<Base>;

  /** Runs a write in the next group commit; resolves with its value, or rejects with its own failure or the commit's. */
  perform(write: Write): Promise<unknown>;
  /**
   * Runs a write under an Idempotency-Key, in the next group commit: the key's kept reply is looked for first, inside
   * the write's transaction, and replayed when there is one (also for a copy of the key earlier in the same batch);
   * otherwise the write runs and the reply `capture` makes for its outcome is kept with it. Rejects only with the
   * commit's failure.
   */
  performKeyed(write: Write, capture: IdempotencyCapture): Promise<KeyedResult>;

  /** The reply kept under an Idempotency-Key of an organization, or null when none is kept (or it has expired). */
  idempotencyGet(orgId: number, key: string): Promise<IdempotencyRecord | null>;
  /** Forgets the keys older than the retention period. */
  idempotencyPurge(): Promise<number>;

  /**
   * Changes whenever a committed write, of this process or another, may have changed what a read returns; the
   * server keeps answers for as long as it stays the same. Optional: an engine that cannot tell cheaply (without
   * a round trip) leaves it out, and nothing is kept. A promise when the engine must first hear what other servers
   * committed before the request arrived (PostgreSQL): the request waits for it.
   */
  readVersion?(): string | Promise<string>;

  /**
   * Whether a write needs readVersion() before it is authenticated. False when the store checks a write's token in
   * the write's own transaction (Write.tokenId), which is ordered after every commit acknowledged before the request
   * was sent: the write then skips the round trip readVersion() may cost. Absent is true.
   */
  readonly fencesWrites?: boolean;

  /**
   * The version of one organization's data: as readVersion(), but changed only by what may change that organization's
   * reads (its own writes, a token's, another process's or an administrator's), so that one organization's writes keep
   * another's answers (docs/contract.md, "Operating behind a load balancer"). Read once readVersion() has resolved for
   * the request, and before the data. Undefined when nothing may be kept now. Optional: without it, answers are kept
   * by readVersion().
   */
  dataVersion?(orgId: number): string | undefined;

  /**
   * The version of the tokens (and organizations): as readVersion(), but changed only by what may change whom a token
   * stands for (a token created or revoked, by this process or another), so that what authentication keeps outlives
   * writes of data. Read once readVersion() has resolved for the request, and before the token is looked up. Undefined
   * when nothing may be kept now. Optional: without it, known tokens are kept by readVersion().
   */
  tokensVersion?(): string | undefined;

  /**
   * Why the store cannot serve right now (a database that does not answer, a LISTEN connection that is down), or
   * undefined when it can: the readiness of docs/contract.md, "Operating behind a load balancer". One round trip at
   * most. Optional: a store without it is ready while it is open.
   */
  unready?(): Promise<string | undefined>;

  /** What the store uses of a database server (PostgreSQL), for metrics; absent for the embedded engine. */
  usage?(): StoreUsage;

  /**
   * Present when failed authentications are counted in the storage itself, so that every server over it shares one
   * limit (PostgreSQL); absent when each server counts in its own memory (SQLite).
   */
  readonly authFailures?: AuthFailureLimit;

  /**
   * Copies the data, as of one moment and while writes go on, into a new data dir that `kb serve --data-dir` can
   * serve. Present for the embedded engine only: a database server has its own tools (pg_dump).
   */
  backup?(destDir: string): Promise<{ path: string; bytes: number }>;

  /** The change log of GET /v1/watch (changes.ts); absent for a store that keeps none. */
  readonly changeLog?: ChangeLog;

  close(): Promise<void>;
}

export { StoreOpenError, StoreUnreachableError } from './errors.js';
