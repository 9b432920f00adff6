import type { Base, Namespace } from '../api/schemas.js';

/** Who a request acts for: the organization its token names. */
export interface Principal {
  orgId: number;
  org: string;
  tokenId: string;
}

export interface TokenInfo {
  id: string;
  org: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A description change: a string sets it, null clears it, undefined leaves it as it is. */
export interface DescriptionPatch {
  description?: string | null | undefined;
}

/**
 * The storage behind `kb serve`. Async so that a networked database can implement it; every write
 * resolves only once it is durable. Failures are KbApiError (not_found, conflict, insufficient_storage).
 */
export interface Store {
  /** The organization of an active token, looked up by the SHA-256 of the token; null when unknown or revoked. */
  authenticate(tokenHash: Buffer): Promise<Principal | null>;
  /** Creates the organization when new, and a token for it stored by hash only. */
  createToken(org: string, id: string, tokenHash: Buffer): Promise<TokenInfo>;
  listTokens(): Promise<TokenInfo[]>;
  /** Marks a token revoked; null when there is no such token. Revoking twice is harmless. */
  revokeToken(id: string): Promise<TokenInfo | null>;

  nsList(orgId: number): Promise<Namespace[]>;
  nsCreate(orgId: number, ns: Namespace): Promise<Namespace>;
  nsUpdate(orgId: number, key: string, patch: DescriptionPatch): Promise<Namespace>;

  baseList(orgId: number, namespace: string): Promise<Base[]>;
  /** Creates the base, and its namespace in the same transaction when that does not exist. */
  baseCreate(orgId: number, base: Base): Promise<Base>;
  baseUpdate(orgId: number, namespace: string, key: string, patch: DescriptionPatch): Promise<Base>;
  baseDelete(orgId: number, namespace: string, key: string): Promise<Base>;

  close(): Promise<void>;
}

/** Raised when a data dir cannot be opened safely; the message says why and what to do. */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}
