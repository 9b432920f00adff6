import { randomUUID } from 'node:crypto';
import type { RouteInput, RouteName, RouteOutput } from '../api/routes.js';
import type { Principal, Store, Write } from '../store/store.js';

/** The routes that change data: POST and DELETE, each a write the store runs (keyed or not). */
export type WriteRouteName = 'ns_create' | 'ns_update' | 'ns_delete' | 'base_create' | 'base_update' | 'base_delete';
type ReadRouteName = Exclude<RouteName, 'health' | WriteRouteName>;

/** Generated keys, docs/contract.md, Requests and keys: ns_<uuid v4> and kb_<uuid v4>. */
export const generateNamespaceKey = (): string => `ns_${randomUUID()}`;
export const generateBaseKey = (): string => `kb_${randomUUID()}`;

/** What each authenticated read answers, once its input has been validated against src/api. */
export const READS: { [N in ReadRouteName]: (store: Store, principal: Principal, input: RouteInput<N>) => Promise<RouteOutput<N>> } = {
  auth: async (_store, principal) => principal.org,
  ns_list: (store, principal) => store.nsList(principal.orgId),
  base_list: (store, principal, input) => store.baseList(principal.orgId, input.namespace),
  base_list_all: (store, principal) => store.baseListAll(principal.orgId),
};

/** The write each authenticated write route asks of the store, once its input has been validated against src/api. */
export const WRITES: { [N in WriteRouteName]: (principal: Principal, input: RouteInput<N>) => Write } = {
  ns_create: (principal, input) => ({
    op: 'nsCreate',
    orgId: principal.orgId,
    ns: { key: input.key ?? generateNamespaceKey(), description: input.description ?? null },
  }),
  ns_update: (principal, input) => ({ op: 'nsUpdate', orgId: principal.orgId, key: input.namespace, patch: input.data }),
  ns_delete: (principal, input) => ({ op: 'nsDelete', orgId: principal.orgId, key: input.namespace, cascade: input.cascade === true }),
  base_create: (principal, input) => ({
    op: 'baseCreate',
    orgId: principal.orgId,
    base: { namespace: input.namespace, key: input.key ?? generateBaseKey(), description: input.description ?? null },
  }),
  base_update: (principal, input) => ({
    op: 'baseUpdate',
    orgId: principal.orgId,
    namespace: input.namespace,
    key: input.base,
    patch: input.data,
  }),
  base_delete: (principal, input) => ({ op: 'baseDelete', orgId: principal.orgId, namespace: input.namespace, key: input.base }),
};
