import type { EventSourceMessage } from 'eventsource-parser';
import { WATCH_CURSOR_HEADER, type WatchChange } from '../api/watch.js';
import type { KbClient } from './client.js';
import { ApiError, KbClientError } from './errors.js';
import { EXIT } from './exit-codes.js';

// The client side of GET /v1/watch (docs/contract.md, Live changes), the one stream of kb watch, the lists' --watch,
// kb wait (src/cli/watch-stream.ts) and the TUI: through the client's own dispatcher (its proxies and CA), resumed with
// its last cursor after a dropped connection or a server restart, so that nothing is lost or repeated.

/** What the stream needs of a client. */
export type StreamClient = Pick<KbClient, 'stream' | 'baseUrl'>;

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
  /** The stream is open (each time it is, after a drop too): what it says from now on is live. */
  onOpen?(): void;
  /** A dropped connection, about to be resumed. */
  onRetry?(reason: string): void;
}

/** Thrown when the deployment does not serve GET /v1/watch (a 404): kb watch says so (exit 3); `follow` polls instead. */
export class WatchUnsupportedError extends KbClientError {
  override readonly name = 'WatchUnsupportedError';
  readonly code = 'watch_unsupported';
  readonly exitCode = EXIT.notFound;
  readonly help = 'Use `kb ns list` or `kb base list NS` to see the current state.';

  constructor(readonly url: string) {
    super(`${url} does not serve GET /v1/watch (kb serve's extension for live changes)`);
  }
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/**
 * Streams the changes to the handlers until `signal` aborts; resolves then. Reconnects after a dropped connection
 * with the last cursor; a refusal (401, 404, 410, 400) ends it with an error (WatchUnsupportedError for a 404).
 */
export async function watchChanges(client: StreamClient, scope: WatchScope, handlers: WatchHandlers, signal: AbortSignal): Promise<void> {
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
        delay = RETRY_MIN_MS;
        const header = stream.headers[WATCH_CURSOR_HEADER];
        if (!initial) cursor ??= Array.isArray(header) ? header[0] : header;
        handlers.onOpen?.();
        for (const chunk of early.splice(0)) parser.feed(decoder.decode(chunk, { stream: true }));
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
      throw new ApiError({ status, message: envelope.message ?? `GET /v1/watch answered ${status}`, help: envelope.help, url: `${client.baseUrl}/v1${path}`, method: 'GET' });
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

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
