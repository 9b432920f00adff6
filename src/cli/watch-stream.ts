import type { EventSourceMessage } from 'eventsource-parser';
import type { Base, Namespace } from '../api/schemas.js';
import { WATCH_CURSOR_HEADER, type WatchChange } from '../api/watch.js';
import type { KbClient } from '../client/client.js';
import { ApiError, NetworkError } from '../client/errors.js';
import { EXIT } from '../client/exit-codes.js';
import { CliError } from './errors.js';
import { escapeControls } from './text.js';

// The client side of GET /v1/watch (docs/contract.md, Live changes), the one stream module of kb watch, the lists'
// --watch, kb wait and the TUI: one stream through the client's own dispatcher (its proxies and CA), resumed with its
// last cursor after a dropped connection or a server restart, so that nothing is lost or repeated. `follow` adds the
// current state first (?initial=true), and polls instead against a deployment without the route.

/** A change as the stream hands it on: the event's data and its cursor (none for a change seen by polling). */
export type CursorChange = WatchChange & { cursor?: string | undefined };

/** What to watch: one namespace and its bases, or the whole organization. */
export interface WatchScope {
  namespace?: string | undefined;
  /** Resume after this cursor; without it (and without `initial`) the stream starts now. */
  since?: string | undefined;
  /** Send the current objects first, as `created` changes handed to `onSynced` (no cursor given with `since`). */
  initial?: boolean | undefined;
}

export interface WatchHandlers {
  onChange(change: CursorChange): void;
  /** With `initial`: the objects current at `cursor`, before any change after it. */
  onSynced?(objects: WatchChange[], cursor: string): void;
  /** A dropped connection, about to be resumed. */
  onRetry?(reason: string): void;
}

/** Thrown when the deployment does not serve GET /v1/watch (a 404): kb watch says so (exit 3); `follow` polls instead. */
export class WatchUnsupportedError extends CliError {
  constructor(url: string) {
    super(`${url} does not serve GET /v1/watch (kb serve's extension for live changes)`, EXIT.notFound, 'Use `kb ns list` or `kb base list NS` to see the current state.');
  }
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;
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

/**
 * Streams the changes to the handlers until `signal` aborts; resolves then. Reconnects after a dropped connection
 * with the last cursor; a refusal (401, 404, 410, 400) ends it with an error (WatchUnsupportedError for a 404).
 */
export async function watchChanges(client: KbClient, scope: WatchScope, handlers: WatchHandlers, signal: AbortSignal): Promise<void> {
  const { createParser } = await import('eventsource-parser');
  let cursor = scope.since;
  let delay = RETRY_MIN_MS;
  const retry = async (reason: string) => {
    handlers.onRetry?.(reason);
    await pause(delay, signal);
    delay = Math.min(delay * 2, RETRY_MAX_MS);
  };
  while (!signal.aborted) {
    // Until the first `synced`, a new connection asks for the state again: the objects of a cut one were not all read.
    const initial = scope.initial === true && cursor === undefined;
    const query = new URLSearchParams();
    if (scope.namespace !== undefined) query.set('namespace', scope.namespace);
    if (cursor !== undefined) query.set('since', cursor);
    else if (initial) query.set('initial', 'true');
    const objects: WatchChange[] = [];
    const parser = createParser({
      onEvent(message: EventSourceMessage) {
        if (message.event === 'synced' && message.id !== undefined && initial && cursor === undefined) {
          cursor = message.id;
          handlers.onSynced?.(objects.splice(0), message.id);
          return;
        }
        if (message.event !== 'change') return;
        const change = JSON.parse(message.data) as WatchChange;
        // The state's objects come without ids, before `synced`.
        if (message.id === undefined) objects.push(change);
        else {
          cursor = message.id;
          handlers.onChange({ ...change, cursor: message.id });
        }
      },
    });
    const decoder = new TextDecoder();
    let status = 0;
    // Chunks may come before the status is read here (in the same turn): kept until it is.
    const early: Buffer[] = [];
    const path = `/watch${query.size === 0 ? '' : `?${query.toString()}`}`;
    try {
      const stream = await client.stream(path, signal, (chunk) => {
        if (status === 200) parser.feed(decoder.decode(chunk, { stream: true }));
        else early.push(chunk);
      });
      status = stream.status;
      if (status === 200) {
        for (const chunk of early.splice(0)) parser.feed(decoder.decode(chunk, { stream: true }));
        delay = RETRY_MIN_MS;
        const header = stream.headers[WATCH_CURSOR_HEADER];
        if (!initial) cursor ??= Array.isArray(header) ? header[0] : header;
      }
      await stream.ended;
    } catch (error) {
      if (signal.aborted) return;
      if (status === 0) {
        await retry(`cannot reach ${client.baseUrl} (${reasonOf(error)})`);
        continue;
      }
      // Cut (a server stopped, a network dropped): resumed below.
    }
    if (signal.aborted) return;
    if (status !== 200) {
      const envelope = parseEnvelope(Buffer.concat(early).toString('utf8'));
      if (status === 404) throw new WatchUnsupportedError(client.baseUrl);
      if (status >= 500 || status === 429) {
        await retry(`${client.baseUrl} answered ${status}`);
        continue;
      }
      const code = status === 401 || status === 403 ? EXIT.auth : EXIT.usage;
      throw new CliError(envelope.message ?? `GET /v1/watch answered ${status}`, code, envelope.help);
    }
    handlers.onRetry?.('the stream ended; resuming');
    await pause(RETRY_MIN_MS, signal);
  }
}

function parseEnvelope(body: string): { message?: string; help?: string } {
  try {
    return JSON.parse(body) as { message?: string; help?: string };
  } catch {
    return {};
  }
}

function reasonOf(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : typeof message === 'string' ? message : String(error);
}

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
export async function follow(client: KbClient, scope: FollowScope, handlers: FollowHandlers, signal: AbortSignal): Promise<void> {
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

function apply(state: WatchedState, change: WatchChange): void {
  const object = change.object as Namespace & Base;
  const [map, key] = change.kind === 'namespace' ? [state.namespaces as Map<string, unknown>, object.key] : [state.bases as Map<string, unknown>, `${object.namespace}/${object.key}`];
  if (change.type === 'deleted') map.delete(key);
  else map.set(key, object);
}

async function poll(client: KbClient, scope: FollowScope, state: WatchedState, handlers: FollowHandlers, signal: AbortSignal): Promise<void> {
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

/** The lists in scope; a namespace that does not exist (404) has no bases, so that kb wait can wait for it. */
async function readState(client: KbClient, scope: FollowScope): Promise<WatchedState> {
  const namespaces = await client.nsList();
  let bases: Base[] = [];
  if (scope.bases && scope.namespace !== undefined && namespaces.some((ns) => ns.key === scope.namespace)) {
    try {
      bases = await client.baseList(scope.namespace);
    } catch (error) {
      // Deleted between the two requests: none.
      if (!(error instanceof ApiError && error.status === 404 && !error.local)) throw error;
    }
  }
  const inScope = namespaces.filter((ns) => scope.namespace === undefined || ns.key === scope.namespace);
  return { namespaces: new Map(inScope.map((ns) => [ns.key, ns])), bases: new Map(bases.map((base) => [`${base.namespace}/${base.key}`, base])) };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
