import { useEffect, useMemo, useRef, useState } from 'react';
import type { Namespace } from '../../api/schemas.js';
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
    return {
      noun: 'namespace',
      generatedPrefix: 'ns_',
      createTitle: 'New namespace',
      create: async ({ key, description }) => apply(await client.nsCreate({ ...(key === undefined ? {} : { key }), ...(description === undefined ? {} : { description }) })),
      update: async (row, description) => apply(await client.nsUpdate({ namespace: row.key, data: { description } })),
      cannotDelete: 'Namespaces cannot be deleted: the kb API has no namespace delete. Open one (enter) to delete its bases.',
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
