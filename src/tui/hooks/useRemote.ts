import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';

export interface Remote<T> {
  /** The last data loaded; kept through a refresh and through a failed refresh. */
  data: T | undefined;
  /** The error of the last load, if it failed. */
  error: unknown;
  loading: boolean;
  /** When the data was last loaded (ms since the epoch); undefined before the first success. */
  updatedAt: number | undefined;
  /** Loads again, keeping the current data on screen meanwhile. */
  reload(): void;
  /**
   * Changes the data in place, e.g. right after a create, or with a change streamed from the server. A change made
   * while a load is in flight is made again over its answer, which the server may have made before the change.
   */
  mutate(change: (data: T | undefined) => T | undefined): void;
}

interface State<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  updatedAt: number | undefined;
}

/**
 * Data from the server: loaded when `deps` change or on reload(); an answer to an older request is dropped. `known`
 * is data in hand already (the first list, come in while the UI loaded): it is drawn in the first frame, and the
 * first load is skipped.
 */
export function useRemote<T>(load: () => Promise<T>, deps: DependencyList, known?: T): Remote<T> {
  const [state, setState] = useState<State<T>>(() =>
    known === undefined
      ? { data: undefined, error: undefined, loading: true, updatedAt: undefined }
      : { data: known, error: undefined, loading: false, updatedAt: Date.now() },
  );
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const skipFirst = useRef(known !== undefined);
  /** The changes made since the load in flight was asked for (none in flight: undefined), in the order they came. */
  const sinceAsked = useRef<Array<(data: T | undefined) => T | undefined> | undefined>(undefined);

  useEffect(() => {
    if (skipFirst.current) {
      skipFirst.current = false;
      return;
    }
    const request = ++latest.current;
    sinceAsked.current = [];
    setState((previous) => (previous.loading ? previous : { ...previous, loading: true }));
    load().then(
      (data) => {
        if (latest.current !== request) return;
        const changes = sinceAsked.current ?? [];
        sinceAsked.current = undefined;
        setState({ data: changes.reduce<T | undefined>((current, change) => change(current), data), error: undefined, loading: false, updatedAt: Date.now() });
      },
      (error: unknown) => {
        if (latest.current !== request) return;
        sinceAsked.current = undefined;
        setState((previous) => ({ ...previous, error, loading: false }));
      },
    );
    return () => {
      // Unmounted or reloading: whatever this request answers is no longer wanted.
      if (latest.current === request) latest.current++;
    };
    // `load` is a new closure on every render; the caller's deps say when it means something new.
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const mutate = useCallback((change: (data: T | undefined) => T | undefined) => {
    sinceAsked.current?.push(change);
    setState((previous) => ({ ...previous, data: change(previous.data) }));
  }, []);
  return { ...state, reload, mutate };
}
