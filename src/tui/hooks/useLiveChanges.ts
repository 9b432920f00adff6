import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { WatchChange } from '../../api/watch.js';
import type { TuiClient } from '../types.js';

/**
 * How the lists learn of changes made elsewhere (docs/tui.md): `live` while GET /v1/watch streams to the TUI; `poll`
 * where the deployment does not serve it (or the client cannot stream), and while the stream is down: the lists then
 * refresh on their timer, as before there was a stream.
 */
export type LiveMode = 'live' | 'poll';

export interface LiveChanges {
  mode: LiveMode;
  /** Calls `listener` with each change of the organization while the stream is open; returns how to stop. */
  subscribe(listener: (change: WatchChange) => void): () => void;
}

/** One stream of the organization's changes for every list of the app, for as long as `client` is the one in use. */
export function useLiveChanges(client: TuiClient): LiveChanges {
  const [mode, setMode] = useState<LiveMode>('poll');
  const listeners = useRef(new Set<(change: WatchChange) => void>());
  useEffect(() => {
    const { stream, baseUrl } = client;
    if (stream === undefined || baseUrl === undefined) return;
    const stop = new AbortController();
    const streaming = { stream: stream.bind(client), baseUrl };
    void import('../../client/watch.js')
      .then(({ watchChanges }) =>
        watchChanges(streaming, {}, {
          onOpen: () => setMode('live'),
          onChange: (change) => {
            for (const listener of listeners.current) listener(change);
          },
          onRetry: () => setMode('poll'),
        }, stop.signal),
      )
      // No watch here (a 404), or refused: the lists keep to their timer.
      .catch(() => undefined)
      .finally(() => {
        if (!stop.signal.aborted) setMode('poll');
      });
    return () => {
      stop.abort();
      setMode('poll');
    };
  }, [client]);
  const subscribe = useCallback((listener: (change: WatchChange) => void) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);
  return useMemo(() => ({ mode, subscribe }), [mode, subscribe]);
}
