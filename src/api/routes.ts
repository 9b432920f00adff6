import * as z from './zod.js';
import {
  Base,
  BaseCreateBody,
  BaseDeleteBody,
  BaseListQuery,
  BaseUpdateBody,
  EmptyQuery,
  Namespace,
  NsCreateBody,
  NsUpdateBody,
} from './schemas.js';

export const API_PREFIX = '/v1';

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
  | 'ns_list';

export interface RouteSpec<Input extends z.ZodMiniType = z.ZodMiniType, Output extends z.ZodMiniType = z.ZodMiniType> {
  name: RouteName;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  auth: boolean;
  /** Where the input comes from: the JSON body, or the query string for GETs. */
  input: { from: 'body' | 'query'; schema: Input };
  output: Output;
  summary: string;
  /** True for routes that are ours, beyond the API document. */
  extension: boolean;
}

function route<I extends z.ZodMiniType, O extends z.ZodMiniType>(spec: RouteSpec<I, O>): RouteSpec<I, O> {
  return spec;
}

/** The API's route table (docs/api.md), plus the base_list extension (docs/contract.md, The local server). */
export const ROUTES = {
  health: route({
    name: 'health', method: 'GET', path: '/health', auth: false, extension: false,
    input: { from: 'query', schema: EmptyQuery }, output: z.literal('alive'),
    summary: 'Check that the service is alive',
  }),
  auth: route({
    name: 'auth', method: 'GET', path: '/auth', auth: true, extension: false,
    input: { from: 'query', schema: EmptyQuery }, output: z.string(),
    summary: 'Test that the token is accepted; data names the organization',
  }),
  base_create: route({
    name: 'base_create', method: 'POST', path: '/base_create', auth: true, extension: false,
    input: { from: 'body', schema: BaseCreateBody }, output: Base,
    summary: 'Create a base, and its namespace when that does not exist',
  }),
  base_update: route({
    name: 'base_update', method: 'POST', path: '/base_update', auth: true, extension: false,
    input: { from: 'body', schema: BaseUpdateBody }, output: Base,
    summary: 'Update the settings of a base',
  }),
  base_delete: route({
    name: 'base_delete', method: 'DELETE', path: '/base_delete', auth: true, extension: false,
    input: { from: 'body', schema: BaseDeleteBody }, output: Base,
    summary: 'Delete a base and all related data',
  }),
  base_list: route({
    name: 'base_list', method: 'GET', path: '/base_list', auth: true, extension: true,
    input: { from: 'query', schema: BaseListQuery }, output: z.array(Base),
    summary: 'List the bases of a namespace, ordered by key (extension)',
  }),
  base_list_all: route({
    name: 'base_list_all', method: 'GET', path: '/base_list_all', auth: true, extension: true,
    input: { from: 'query', schema: EmptyQuery }, output: z.array(Base),
    summary: 'List every base of the organization in one reply, ordered by namespace key, then base key (extension)',
  }),
  ns_create: route({
    name: 'ns_create', method: 'POST', path: '/ns_create', auth: true, extension: false,
    input: { from: 'body', schema: NsCreateBody }, output: Namespace,
    summary: 'Create a namespace',
  }),
  ns_update: route({
    name: 'ns_update', method: 'POST', path: '/ns_update', auth: true, extension: false,
    input: { from: 'body', schema: NsUpdateBody }, output: Namespace,
    summary: 'Update the settings of a namespace',
  }),
  ns_list: route({
    name: 'ns_list', method: 'GET', path: '/ns_list', auth: true, extension: false,
    input: { from: 'query', schema: EmptyQuery }, output: z.array(Namespace),
    summary: 'List the namespaces of the organization, ordered by key',
  }),
} as const;

export type Routes = typeof ROUTES;
export type RouteInput<N extends RouteName> = z.infer<Routes[N]['input']['schema']>;
export type RouteOutput<N extends RouteName> = z.infer<Routes[N]['output']>;
