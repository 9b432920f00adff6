import { useRef, useState } from 'react';
import type { Namespace } from '../../api/schemas.js';
import { useTui } from '../context.js';
import { useRemote } from '../hooks/useRemote.js';
import { upsertRow } from '../text.js';
import type { Status } from '../types.js';
import { CollectionView } from './CollectionView.js';

export interface NamespacesViewProps {
  active: boolean;
  visible: boolean;
  width: number;
  height: number;
  /** The first list, asked for already; refreshes ask again. */
  initial?: Promise<readonly Namespace[]> | undefined;
  onOpen(namespace: string): void;
}

/** The organization's namespaces: the first screen. */
export function NamespacesView(props: NamespacesViewProps) {
  const { client } = useTui();
  const initial = useRef(props.initial);
  const namespaces = useRemote<readonly Namespace[]>(() => {
    const first = initial.current;
    initial.current = undefined;
    return first ?? client.nsList();
  }, [client]);
  const [status, setStatus] = useState<Status | undefined>(undefined);

  return (
    <CollectionView
      active={props.active}
      visible={props.visible}
      width={props.width}
      height={props.height}
      title="Namespaces"
      noun="namespace"
      rows={namespaces.data}
      loading={namespaces.loading}
      error={namespaces.error}
      emptyText="No namespaces yet: n creates one."
      status={status}
      setStatus={setStatus}
      createTitle="New namespace"
      generatedPrefix="ns_"
      onRefresh={namespaces.reload}
      onCreate={async ({ key, description }) => {
        const created = await client.nsCreate({ ...(key === undefined ? {} : { key }), ...(description === undefined ? {} : { description }) });
        namespaces.mutate((rows) => upsertRow(rows, created));
        namespaces.reload();
        return created;
      }}
      onUpdate={async (row, description) => {
        const updated = await client.nsUpdate({ namespace: row.key, data: { description } });
        namespaces.mutate((rows) => upsertRow(rows, updated));
        namespaces.reload();
        return updated;
      }}
      cannotDelete="Namespaces cannot be deleted: the kb API has no namespace delete. Open one (enter) to delete its bases."
      onOpen={(row) => props.onOpen(row.key)}
    />
  );
}
