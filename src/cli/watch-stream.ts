import type { Base, Namespace } from '../api/schemas.js';
import type { WatchChange } from '../api/watch.js';
import type { KbClient } from '../client/client.js';
import { ApiError, NetworkError } from '../client/errors.js';
import { type CursorChange, pause, watchChanges, WatchUnsupportedError } from '../client/watch.js';
import { escapeControls } from './text.js';

// What the CLI makes of the one stream of GET /v1/watch (src/client/watch.ts): kb watch's lines, and `follow`, the
// current state first (?initial=true) then its changes, polling instead against a deployment without the route.

/** How often `follow` lists again against a deployment without /v1/watch. */
export const POLL_MS = 2000;

/** What kb watch and the lists' --watch print of a change: `created base docs/faq`, control characters shown. */
export function changeLine(change: WatchChange): string {
  const name = change.kind === 'base' ? `${change.object.namespace}/${change.object.key}` : change.object.key;
  return `${change.type} ${change.kind} ${escapeControls(name)}\n`;
}

/** A change as one NDJSON line: `{"cursor","type","kind","object"}` (cursor null for one seen by polling). */
export function changeJson(change: CursorChange): string {
  return `${JSON.stringify({ cursor: change.cursor ?? null, type: change.type, kind: change.kind, object: change.object })}\n`;
}

/** What `follow` needs of a client. */
export type FollowClient = Pick<KbClient, 'stream' | 'baseUrl' | 'nsList' | 'baseList'>;

/** The state `follow` keeps: namespaces by key, bases by `NS/KEY`. */
export interface WatchedState {
  namespaces: Map<string, Namespace>;
  bases: Map<string, Base>;
}

export interface FollowHandlers {
  /** The state first (the stream's `synced`, or the first poll), then each change after it. */
  onSynced(state: WatchedState): void;
  onChange(change: CursorChange, state: WatchedState): void;
  /** A notice for a terminal: polling instead of watching, or a dropped connection being resumed. */
  onNotice?(text: string): void;
}

/** A scope to follow: `bases` says whether its bases are wanted (polling then lists them too). */
export interface FollowScope {
  namespace?: string | undefined;
  bases: boolean;
}

/**
 * The state in scope, then its changes, with nothing lost between (?initial=true): kb ns list --watch, kb base list
 * --watch and kb wait. Against a deployment without /v1/watch, lists again every POLL_MS and hands on what changed.
 */
export async function follow(client: FollowClient, scope: FollowScope, handlers: FollowHandlers, signal: AbortSignal): Promise<void> {
  const state: WatchedState = { namespaces: new Map(), bases: new Map() };
  try {
    await watchChanges(client, { namespace: scope.namespace, initial: true }, {
      onSynced(objects) {
        for (const change of objects) apply(state, change);
        handlers.onSynced(state);
      },
      onChange(change) {
        apply(state, change);
        handlers.onChange(change, state);
      },
      onRetry: handlers.onNotice,
    }, signal);
  } catch (error) {
    if (!(error instanceof WatchUnsupportedError)) throw error;
    handlers.onNotice?.(`${client.baseUrl} does not serve GET /v1/watch: listing every ${POLL_MS / 1000} s instead`);
    await poll(client, scope, state, handlers, signal);
  }
}

/**
 * kb watch against a deployment without /v1/watch: lists the scope every POLL_MS and hands on what changed since the
 * list before, as changes without cursors. The first list is the state it starts from, not a change.
 */
export async function pollChanges(client: FollowClient, scope: FollowScope, onChange: (change: WatchChange) => void, onNotice: (text: string) => void, signal: AbortSignal): Promise<void> {
  const state: WatchedState = { namespaces: new Map(), bases: new Map() };
  await poll(client, scope, state, { onSynced: () => undefined, onChange, onNotice }, signal);
}

function apply(state: WatchedState, change: WatchChange): void {
  const object = change.object as Namespace & Base;
  const [map, key] = change.kind === 'namespace' ? [state.namespaces as Map<string, unknown>, object.key] : [state.bases as Map<string, unknown>, `${object.namespace}/${object.key}`];
  if (change.type === 'deleted') map.delete(key);
  else map.set(key, object);
}

async function poll(client: FollowClient, scope: FollowScope, state: WatchedState, handlers: FollowHandlers, signal: AbortSignal): Promise<void> {
  let first = true;
  while (!signal.aborted) {
    let next: WatchedState;
    try {
      next = await readState(client, scope);
    } catch (error) {
      if (!(error instanceof NetworkError) && !(error instanceof ApiError && error.status >= 500)) throw error;
      handlers.onNotice?.(`${error.message}; listing again in ${POLL_MS / 1000} s`);
      await pause(POLL_MS, signal);
      continue;
    }
    if (signal.aborted) return;
    if (first) {
      first = false;
      for (const [key, namespace] of next.namespaces) state.namespaces.set(key, namespace);
      for (const [key, base] of next.bases) state.bases.set(key, base);
      handlers.onSynced(state);
    } else {
      // Namespaces created before their bases, bases deleted before their namespaces, as a stream would have them.
      for (const change of [...diff('namespace', state.namespaces, next.namespaces, 'created'), ...diff('base', state.bases, next.bases, 'created'), ...diff('base', state.bases, next.bases, 'deleted'), ...diff('namespace', state.namespaces, next.namespaces, 'deleted')]) {
        apply(state, change);
        handlers.onChange(change, state);
      }
    }
    await pause(POLL_MS, signal);
  }
}

/** The changes from `before` to `after` of one kind: `created` covers updates too (an object there before and changed). */
function diff(kind: WatchChange['kind'], before: Map<string, WatchChange['object']>, after: Map<string, WatchChange['object']>, which: 'created' | 'deleted'): WatchChange[] {
  const changes: WatchChange[] = [];
  if (which === 'deleted') {
    for (const [key, object] of before) if (!after.has(key)) changes.push({ type: 'deleted', kind, object });
    return changes;
  }
  for (const [key, object] of after) {
    const old = before.get(key);
    if (old === undefined) changes.push({ type: 'created', kind, object });
    else if (JSON.stringify(old) !== JSON.stringify(object)) changes.push({ type: 'updated', kind, object });
  }
  return changes;
}

/**
 * The lists in scope: its namespaces and, when wanted, the bases of each (of every namespace without one named). A
 * namespace that does not exist (404) has no bases, so that kb wait can wait for it.
 */
async function readState(client: FollowClient, scope: FollowScope): Promise<WatchedState> {
  const namespaces = (await client.nsList()).filter((ns) => scope.namespace === undefined || ns.key === scope.namespace);
  const bases = scope.bases ? (await Promise.all(namespaces.map((ns) => basesOf(client, ns.key)))).flat() : [];
  return { namespaces: new Map(namespaces.map((ns) => [ns.key, ns])), bases: new Map(bases.map((base) => [`${base.namespace}/${base.key}`, base])) };
}

async function basesOf(client: FollowClient, namespace: string): Promise<Base[]> {
  try {
    return await client.baseList(namespace);
  } catch (error) {
    // Deleted between the two requests: none.
    if (!(error instanceof ApiError && error.status === 404 && !error.local)) throw error;
    return [];
  }
}
