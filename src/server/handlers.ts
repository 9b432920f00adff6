import { randomUUID } from 'node:crypto';
import type { RouteInput, RouteName, RouteOutput } from '../api/routes.js';
import type { IdempotencyCapture, Principal, Store } from '../store/store.js';

/** `capture` keeps the reply under an Idempotency-Key, in the write's own transaction (reads take none). */
type Handler<N extends RouteName> = (
  store: Store,
  principal: Principal,
  input: RouteInput<N>,
  capture?: IdempotencyCapture,
) => Promise<RouteOutput<N>>;

/** Generated keys, docs/contract.md, Requests and keys: ns_<uuid v4> and kb_<uuid v4>. */
export const generateNamespaceKey = (): string => `ns_${randomUUID()}`;
export const generateBaseKey = (): string => `kb_${randomUUID()}`;

/** What each authenticated route does, once its input has been validated against src/api. */
export const HANDLERS: { [N in Exclude<RouteName, 'health'>]: Handler<N> } = {
  auth: async (_store, principal) => principal.org,
  ns_list: (store, principal) => store.nsList(principal.orgId),
  ns_create: (store, principal, input, capture) =>
    store.nsCreate(principal.orgId, { key: input.key ?? generateNamespaceKey(), description: input.description ?? null }, capture),
  ns_update: (store, principal, input, capture) => store.nsUpdate(principal.orgId, input.namespace, input.data, capture),
  base_list: (store, principal, input) => store.baseList(principal.orgId, input.namespace),
  base_create: (store, principal, input, capture) =>
    store.baseCreate(
      principal.orgId,
      { namespace: input.namespace, key: input.key ?? generateBaseKey(), description: input.description ?? null },
      capture,
    ),
  base_update: (store, principal, input, capture) =>
    store.baseUpdate(principal.orgId, input.namespace, input.base, input.data, capture),
  base_delete: (store, principal, input, capture) => store.baseDelete(principal.orgId, input.namespace, input.base, capture),
};
