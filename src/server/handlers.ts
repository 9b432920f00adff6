import { randomUUID } from 'node:crypto';
import type { RouteInput, RouteName, RouteOutput } from '../api/routes.js';
import type { Principal, Store } from '../store/store.js';

type Handler<N extends RouteName> = (store: Store, principal: Principal, input: RouteInput<N>) => Promise<RouteOutput<N>>;

/** Generated keys, CONTRACT section 2: ns_<uuid v4> and kb_<uuid v4>. */
export const generateNamespaceKey = (): string => `ns_${randomUUID()}`;
export const generateBaseKey = (): string => `kb_${randomUUID()}`;

/** What each authenticated route does, once its input has been validated against src/api. */
export const HANDLERS: { [N in Exclude<RouteName, 'health'>]: Handler<N> } = {
  auth: async (_store, principal) => principal.org,
  ns_list: (store, principal) => store.nsList(principal.orgId),
  ns_create: (store, principal, input) =>
    store.nsCreate(principal.orgId, { key: input.key ?? generateNamespaceKey(), description: input.description ?? null }),
  ns_update: (store, principal, input) => store.nsUpdate(principal.orgId, input.namespace, input.data),
  base_list: (store, principal, input) => store.baseList(principal.orgId, input.namespace),
  base_create: (store, principal, input) =>
    store.baseCreate(principal.orgId, {
      namespace: input.namespace,
      key: input.key ?? generateBaseKey(),
      description: input.description ?? null,
    }),
  base_update: (store, principal, input) => store.baseUpdate(principal.orgId, input.namespace, input.base, input.data),
  base_delete: (store, principal, input) => store.baseDelete(principal.orgId, input.namespace, input.base),
};
