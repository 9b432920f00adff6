import { useCallback, useMemo, useRef, useState } from 'react';
import { KEY_ORDER, sortRows, type SortOrder } from '../text.js';
import type { Row } from '../types.js';

/** A filter as typed, made a test of a row's key and description. */
export interface CompiledFilter {
  test(text: string): boolean;
  /** Whether `!` came first: the rows that do not match pass. */
  inverted: boolean;
  /** Not a regular expression (`[`, say): matched as plain text instead. */
  invalid: boolean;
}

/**
 * The filter of `/`, as k9s reads it: a regular expression, ignoring case; `!` first inverts it. One that does not
 * compile is matched as plain text (and said to be invalid).
 */
export function compileFilter(filter: string): CompiledFilter {
  const trimmed = filter.trim();
  const inverted = trimmed.startsWith('!');
  const pattern = inverted ? trimmed.slice(1) : trimmed;
  try {
    const regex = new RegExp(pattern, 'i');
    return { test: (text) => regex.test(text), inverted, invalid: false };
  } catch {
    const needle = pattern.toLowerCase();
    return { test: (text) => text.toLowerCase().includes(needle), inverted, invalid: true };
  }
}

/** The rows whose key or description matches `filter` (see compileFilter); all rows when it is empty. */
export function filterRows<T extends Row>(rows: readonly T[], filter: string): readonly T[] {
  const trimmed = filter.trim();
  if (trimmed === '' || trimmed === '!') return rows;
  const compiled = compileFilter(trimmed);
  return rows.filter((row) => (compiled.test(row.key) || compiled.test(row.description ?? '')) !== compiled.inverted);
}

/**
 * The first row to show in a window of `height` rows so that `selected` is in view, moving the window as little
 * as possible from `top` (the previous first row); never past the end, so a short list fills the window.
 */
export function windowTop(top: number, selected: number, height: number, count: number): number {
  const size = Math.max(1, height);
  let next = top;
  if (selected < next) next = selected;
  if (selected >= next + size) next = selected - size + 1;
  return Math.max(0, Math.min(next, count - size));
}

export interface ListState<T extends Row> {
  /** The rows that pass the filter, in the order chosen. */
  rows: readonly T[];
  order: SortOrder;
  /** `s`: key order, or its reverse when the list is in key order already. */
  sortByKey(): void;
  /** `S`: description order, or its reverse when the list is in description order already. */
  sortByDescription(): void;
  /** Index of the selection in `rows`; -1 when there are none. */
  index: number;
  selected: T | undefined;
  /** Index in `rows` of the first row on screen. */
  top: number;
  /** The filter applied to the list. */
  filter: string;
  move(delta: number): void;
  moveTo(index: number): void;
  /** Selects the row with this key, once it is in the list (e.g. just created). */
  select(key: string): void;
  /** Sets the filter; the first match becomes the selection. */
  setFilter(filter: string): void;
  /** Removes the filter; the selected row stays selected. */
  clearFilter(): void;
}

interface Cursor {
  /** The selected key: the selection follows its row through refreshes and inserts. */
  key: string | undefined;
  /** Where the selection was, for when its key is gone (deleted, filtered out). */
  index: number;
}

/** Selection, filter and scrolling of a list of `height` visible rows; renders nothing, keeps no copy of the rows. */
export function useList<T extends Row>(all: readonly T[], height: number): ListState<T> {
  const [filter, setFilterText] = useState('');
  // On the first row from the start when the rows are in hand (the first screen's are): no second pass to anchor it.
  const [cursor, setCursor] = useState<Cursor>(() => ({ key: all[0]?.key, index: 0 }));
  const [order, setOrder] = useState<SortOrder>(KEY_ORDER);
  const rows = useMemo(() => sortRows(filterRows(all, filter), order), [all, filter, order]);

  const index = useMemo(() => {
    if (rows.length === 0) return -1;
    const found = cursor.key === undefined ? -1 : rows.findIndex((row) => row.key === cursor.key);
    return found >= 0 ? found : Math.min(Math.max(0, cursor.index), rows.length - 1);
  }, [rows, cursor]);
  // The selection holds on to its key from the first frame on, so a refresh that adds rows above it does not move it.
  const anchor = index >= 0 ? rows[index]?.key : undefined;
  if (cursor.key === undefined && anchor !== undefined) setCursor({ key: anchor, index });

  // The window moves only when the selection leaves it; a ref, since it depends on where it was last render.
  const topRef = useRef(0);
  const top = windowTop(topRef.current, Math.max(0, index), height, rows.length);
  topRef.current = top;

  const moveTo = useCallback(
    (target: number) => {
      if (rows.length === 0) return;
      const next = Math.max(0, Math.min(rows.length - 1, target));
      setCursor({ key: rows[next]?.key, index: next });
    },
    [rows],
  );
  const move = useCallback((delta: number) => moveTo(Math.max(0, index) + delta), [index, moveTo]);
  const select = useCallback((key: string) => setCursor((previous) => ({ key, index: previous.index })), []);
  const setFilter = useCallback((text: string) => {
    setFilterText(text);
    setCursor({ key: undefined, index: 0 });
  }, []);
  const selectedKey = index >= 0 ? rows[index]?.key : undefined;
  const clearFilter = useCallback(() => {
    setFilterText('');
    setCursor({ key: selectedKey, index: 0 });
  }, [selectedKey]);

  const sortByKey = useCallback(() => setOrder((now) => ({ by: 'key', descending: now.by === 'key' && !now.descending })), []);
  const sortByDescription = useCallback(() => setOrder((now) => ({ by: 'description', descending: now.by === 'description' && !now.descending })), []);

  return {
    rows, order, sortByKey, sortByDescription, index, selected: index >= 0 ? rows[index] : undefined, top, filter,
    move, moveTo, select, setFilter, clearFilter,
  };
}
