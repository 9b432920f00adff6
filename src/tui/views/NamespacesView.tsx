import { useEffect, useMemo, useRef, useState } from 'react';
import type { Namespace } from '../../api/schemas.js';
import { ApiError } from '../../client/errors.js';
import { useTui } from '../context.js';
import { useRemote } from '../hooks/useRemote.js';
import { removeRow, upsertRow } from '../text.js';
import type { Row, Status } from '../types.js';
import { type ListOps, ListView } from './ListView.js';

export interface NamespacesViewProps {
  active: boolean;
  visible: boolean;
  width: number;
  height: number;
  /** The organization, the first crumb. */
  organization: string;
  /** The first list, in hand or asked for already; refreshes ask again. */
  initial?: readonly Namespace[] | Promise<readonly Namespace[]> | undefined;
  onOpen(namespace: string): void;
}

/** The organization's namespaces: the first screen. */
export function NamespacesView(props: NamespacesViewProps) {
  const { client, namespaceKeys, live: { subscribe } } = useTui();
  const initial = useRef(props.initial);
  const namespaces = useRemote<readonly Namespace[]>(
    () => {
      const first = initial.current;
      initial.current = undefined;
      return first instanceof Promise ? first : client.nsList();
    },
    [client],
    props.initial instanceof Promise ? undefined : props.initial,
  );
  const [status, setStatus] = useState<Status | undefined>(undefined);
  const { mutate, reload } = namespaces;
  // A namespace created, changed or deleted elsewhere shows at once; the selection follows its key, the filter stays.
  useEffect(() => subscribe((change) => {
    if (change.kind !== 'namespace') return;
    const row = { key: change.object.key, description: change.object.description };
    mutate((rows) => (rows === undefined ? rows : change.type === 'deleted' ? removeRow(rows, row.key) : upsertRow(rows, row)));
  }), [subscribe, mutate]);
  // For Tab after `:ns ` on any screen.
  if (namespaces.data !== undefined) namespaceKeys.current = namespaces.data.map((namespace) => namespace.key);

  const ops = useMemo((): ListOps => {
    const apply = (row: Namespace): Row => {
      mutate((rows) => upsertRow(rows, row));
      reload();
      return row;
    };
    // Gone from the list once deleted, or once a 404 says it was already (deleted elsewhere).
    const removed = async (row: Row, request: Promise<Namespace>): Promise<Row> => {
      try {
        const ns = await request;
        mutate((rows) => (rows === undefined ? rows : removeRow(rows, ns.key)));
        reload();
        return ns;
      } catch (error) {
        if (error instanceof ApiError && !error.local && error.status === 404) mutate((rows) => (rows === undefined ? rows : removeRow(rows, row.key)));
        throw error;
      }
    };
    return {
      noun: 'namespace',
      generatedPrefix: 'ns_',
      createTitle: 'New namespace',
      create: async ({ key, description }) => apply(await client.nsCreate({ ...(key === undefined ? {} : { key }), ...(description === undefined ? {} : { description }) })),
      update: async (row, description) => apply(await client.nsUpdate({ namespace: row.key, data: { description } })),
      // As `kb ns delete`: an empty namespace goes at once; one with bases is refused (409), then asked for again
      // with their count, and deleted with them (cascade).
      remove: {
        question: (row) => `Delete namespace ${row.key}?`,
        run: (row) => removed(row, client.nsDelete({ namespace: row.key })),
        cascade: {
          count: async (row) => (await client.baseList(row.key)).length,
          question: (row, count) => `Namespace ${row.key} holds ${bases(count)}: delete it and them, with all their data?`,
          run: (row) => removed(row, client.nsDelete({ namespace: row.key, cascade: true })),
          what: (row, count) => `namespace ${row.key} and its ${bases(count)}`,
        },
      },
    };
  }, [client, mutate, reload]);

  return (
    <ListView
      active={props.active}
      visible={props.visible}
      width={props.width}
      height={props.height}
      crumbs={[props.organization]}
      source={{ rows: namespaces.data, loading: namespaces.loading, error: namespaces.error, updatedAt: namespaces.updatedAt, reload }}
      ops={ops}
      autoRefresh
      empty={{ text: 'No namespaces yet', offers: [['new', 'n creates one']] }}
      status={status}
      setStatus={setStatus}
      onOpen={(row) => props.onOpen(row.key)}
    />
  );
}

/** "3 bases", or "its bases" where the count could not be read. */
function bases(count: number | undefined): string {
  return count === undefined ? 'bases' : `${count} ${count === 1 ? 'base' : 'bases'}`;
}
