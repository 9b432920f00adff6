import type { EventSourceMessage } from 'eventsource-parser';
import { WATCH_CURSOR_HEADER, type WatchChange } from '../api/watch.js';
import { EXIT } from '../client/exit-codes.js';
import { CliError } from './errors.js';

// The client side of GET /v1/watch (docs/contract.md, Live changes), loaded by kb watch only: one stream, resumed
// with its last cursor after a dropped connection or a server restart, so that nothing is lost or repeated.

export interface WatchTarget {
  url: string;
  token: string;
  namespace?: string | undefined;
  since?: string | undefined;
}

/** A change as kb watch hands it on: the event's data and its cursor. */
export type CursorChange = WatchChange & { cursor: string };

/** Thrown when the deployment does not serve GET /v1/watch (a 404): callers may poll instead. */
export class WatchUnsupportedError extends CliError {
  constructor(url: string) {
    super(`${url} does not serve GET /v1/watch (kb serve's extension for live changes)`, EXIT.notFound, 'Use `kb ns list` or `kb base list NS` to see the current state.');
  }
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/**
 * Streams the changes to `onChange` until `signal` aborts; resolves then. Reconnects after a dropped connection
 * with the last cursor; a refusal (401, 404, 410, 400) ends it with a CliError.
 */
export async function watchChanges(target: WatchTarget, onChange: (change: CursorChange) => void, signal: AbortSignal, onRetry?: (reason: string) => void): Promise<void> {
  const { createParser } = await import('eventsource-parser');
  let cursor = target.since;
  let delay = RETRY_MIN_MS;
  while (!signal.aborted) {
    const query = target.namespace === undefined ? '' : `?namespace=${encodeURIComponent(target.namespace)}`;
    let response: Response;
    try {
      response = await fetch(`${target.url}/v1/watch${query}`, {
        headers: { authorization: `Bearer ${target.token}`, accept: 'text/event-stream', ...(cursor === undefined ? {} : { 'last-event-id': cursor }) },
        signal,
      });
    } catch (error) {
      if (signal.aborted) return;
      onRetry?.(`cannot reach ${target.url} (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message})`);
      await pause(delay, signal);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
      continue;
    }
    if (response.status !== 200) {
      const body = (await response.json().catch(() => ({}))) as { message?: string; help?: string };
      if (response.status === 404 && body.message?.startsWith('No such route')) throw new WatchUnsupportedError(target.url);
      if (response.status >= 500 || response.status === 429) {
        onRetry?.(`${target.url} answered ${response.status}`);
        await pause(delay, signal);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
        continue;
      }
      const code = response.status === 401 || response.status === 403 ? EXIT.auth : response.status === 404 ? EXIT.notFound : EXIT.usage;
      throw new CliError(body.message ?? `GET /v1/watch answered ${response.status}`, code, body.help);
    }
    delay = RETRY_MIN_MS;
    cursor ??= response.headers.get(WATCH_CURSOR_HEADER) ?? undefined;
    const parser = createParser({
      onEvent(message: EventSourceMessage) {
        if (message.event !== 'change' || message.id === undefined) return;
        cursor = message.id;
        onChange({ cursor: message.id, ...(JSON.parse(message.data) as WatchChange) });
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Cut (a server stopped, a network dropped) or aborted: resumed below unless aborted.
    }
    if (signal.aborted) return;
    onRetry?.('the stream ended; resuming');
    await pause(RETRY_MIN_MS, signal);
  }
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
