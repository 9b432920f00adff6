import type { Dispatcher } from 'undici';

// A GET whose reply is read as it comes (GET /v1/watch, docs/contract.md, Live changes), through the client's own
// dispatcher (src/client/undici.ts), so that the proxies, and the CA the client trusts, apply to it as to any request.

/** A stream under way: its status and headers once they came, and its end. */
export interface OpenStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Resolves when the reply ends, rejects when the connection fails or `signal` aborts; the chunks went to `onChunk`. */
  ended: Promise<void>;
}

/**
 * No byte for this long ends the stream (a connection dead without a word, a proxy that dropped it): kb serve sends
 * a comment at least every 15 s, so three missed ones mean it is gone, and the caller connects again.
 */
export const STREAM_IDLE_MS = 45_000;

/**
 * Sends a GET and resolves once its status and headers came; each chunk of the body then goes to `onChunk` as it
 * arrives, whatever the status (a refusal's envelope too). `signal` ends it at any time.
 */
export function openStream(
  dispatcher: Dispatcher,
  target: { origin: string; path: string },
  headers: Record<string, string>,
  options: { headersTimeoutMs: number; signal: AbortSignal; onChunk: (chunk: Buffer) => void },
): Promise<OpenStream> {
  const { signal, onChunk } = options;
  let controller: Dispatcher.DispatchController | undefined;
  let settleEnd: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const ended = new Promise<void>((resolve, reject) => (settleEnd = { resolve, reject }));
  // Read by the caller only after `started`; a failure before then rejects `started` instead.
  ended.catch(() => undefined);
  return new Promise<OpenStream>((resolve, reject) => {
    let started = false;
    const fail = (error: Error) => {
      if (started) settleEnd?.reject(error);
      else reject(error);
    };
    const abort = () => controller?.abort(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return reject(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    const done = () => signal.removeEventListener('abort', abort);
    dispatcher.dispatch(
      { origin: target.origin, path: target.path, method: 'GET', headers, headersTimeout: options.headersTimeoutMs, bodyTimeout: STREAM_IDLE_MS },
      {
        onRequestStart(request) {
          controller = request;
          if (signal.aborted) abort();
        },
        onResponseStart(_request, statusCode, replyHeaders) {
          if (statusCode < 200) return;
          started = true;
          resolve({ status: statusCode, headers: replyHeaders as OpenStream['headers'], ended });
        },
        onResponseData(_request, chunk) {
          onChunk(chunk);
        },
        onResponseEnd() {
          done();
          settleEnd?.resolve();
        },
        onResponseError(_request, error) {
          done();
          fail(error);
        },
      },
    );
  });
}
