/**
 * The API's routes as plain data, without their schemas: what the client needs to send a request. Their schemas
 * (src/api/routes.ts) are zod's, loaded by the CLI only when a value is refused and must be explained.
 */

export const API_PREFIX = '/v1';

/** Headers of kb serve's `GET /auth` reply: the token's scope (full or read-only), and its expiry (ISO 8601) when it has one. */
export const TOKEN_SCOPE_HEADER = 'kb-token-scope';
export const TOKEN_EXPIRES_HEADER = 'kb-token-expires';

export type RouteName =
  | 'health'
  | 'auth'
  | 'base_create'
  | 'base_update'
  | 'base_delete'
  | 'base_list'
  | 'base_list_all'
  | 'ns_create'
  | 'ns_update'
  | 'ns_delete'
  | 'ns_list';

export interface RouteEntry {
  name: RouteName;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  auth: boolean;
  /** Where the input comes from: the JSON body, or the query string for GETs. */
  from: 'body' | 'query';
  summary: string;
  /** True for routes that are ours, beyond the API document. */
  extension: boolean;
}

/** The API's route table (docs/api.md), plus kb serve's extensions (docs/contract.md, The local server). */
export const ROUTE_TABLE: { readonly [N in RouteName]: RouteEntry & { name: N } } = {
  health: {
    name: 'health', method: 'GET', path: '/health', auth: false, extension: false, from: 'query',
    summary: 'Check that the service is alive',
  },
  auth: {
    name: 'auth', method: 'GET', path: '/auth', auth: true, extension: false, from: 'query',
    summary: 'Test that the token is accepted; data names the organization',
  },
  base_create: {
    name: 'base_create', method: 'POST', path: '/base_create', auth: true, extension: false, from: 'body',
    summary: 'Create a base, and its namespace when that does not exist',
  },
  base_update: {
    name: 'base_update', method: 'POST', path: '/base_update', auth: true, extension: false, from: 'body',
    summary: 'Update the settings of a base',
  },
  base_delete: {
    name: 'base_delete', method: 'DELETE', path: '/base_delete', auth: true, extension: false, from: 'body',
    summary: 'Delete a base and all related data',
  },
  base_list: {
    name: 'base_list', method: 'GET', path: '/base_list', auth: true, extension: true, from: 'query',
    summary: 'List the bases of a namespace, ordered by key (extension)',
  },
  base_list_all: {
    name: 'base_list_all', method: 'GET', path: '/base_list_all', auth: true, extension: true, from: 'query',
    summary: 'List every base of the organization in one reply, ordered by namespace key, then base key (extension)',
  },
  ns_create: {
    name: 'ns_create', method: 'POST', path: '/ns_create', auth: true, extension: false, from: 'body',
    summary: 'Create a namespace',
  },
  ns_update: {
    name: 'ns_update', method: 'POST', path: '/ns_update', auth: true, extension: false, from: 'body',
    summary: 'Update the settings of a namespace',
  },
  ns_delete: {
    name: 'ns_delete', method: 'DELETE', path: '/ns_delete', auth: true, extension: true, from: 'body',
    summary: 'Delete a namespace: an empty one, or with its bases when cascade is true (extension)',
  },
  ns_list: {
    name: 'ns_list', method: 'GET', path: '/ns_list', auth: true, extension: false, from: 'query',
    summary: 'List the namespaces of the organization, ordered by key',
  },
};
