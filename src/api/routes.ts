import { ROUTE_TABLE, type RouteEntry, type RouteName } from './route-table.js';
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
  NsDeleteBody,
  NsUpdateBody,
} from './schemas.js';

export { API_PREFIX, type RouteName } from './route-table.js';

export interface RouteSpec<Input extends z.ZodMiniType = z.ZodMiniType, Output extends z.ZodMiniType = z.ZodMiniType> extends Omit<RouteEntry, 'from'> {
  /** Where the input comes from: the JSON body, or the query string for GETs. */
  input: { from: 'body' | 'query'; schema: Input };
  output: Output;
}

/** A route of the table (src/api/route-table.ts) with its schemas. */
function route<N extends RouteName, I extends z.ZodMiniType, O extends z.ZodMiniType>(name: N, schema: I, output: O): RouteSpec<I, O> & { name: N } {
  const { from, ...entry } = ROUTE_TABLE[name];
  return { ...entry, input: { from, schema }, output };
}

/** The API's route table (docs/api.md), plus the base_list extension (docs/contract.md, The local server). */
export const ROUTES = {
  health: route('health', EmptyQuery, z.literal('alive')),
  auth: route('auth', EmptyQuery, z.string()),
  base_create: route('base_create', BaseCreateBody, Base),
  base_update: route('base_update', BaseUpdateBody, Base),
  base_delete: route('base_delete', BaseDeleteBody, Base),
  base_list: route('base_list', BaseListQuery, z.array(Base)),
  base_list_all: route('base_list_all', EmptyQuery, z.array(Base)),
  ns_create: route('ns_create', NsCreateBody, Namespace),
  ns_update: route('ns_update', NsUpdateBody, Namespace),
  ns_delete: route('ns_delete', NsDeleteBody, Namespace),
  ns_list: route('ns_list', EmptyQuery, z.array(Namespace)),
} as const;

export type Routes = typeof ROUTES;
export type RouteInput<N extends RouteName> = z.infer<Routes[N]['input']['schema']>;
export type RouteOutput<N extends RouteName> = z.infer<Routes[N]['output']>;
