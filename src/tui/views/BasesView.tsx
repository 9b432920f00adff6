import { useEffect, useRef, useState } from 'react';
import { ApiError, BaseListUnsupportedError } from '../../client/errors.js';
import { useTui } from '../context.js';
import { useRemote } from '../hooks/useRemote.js';
import { removeRow, upsertRow } from '../text.js';
import type { Row, Status } from '../types.js';
import type { RowOps } from '../hooks/useRowFlow.js';
import type { Command } from '../keymap.js';
import { BaseView } from './BaseView.js';
import { type ListOps, ListView } from './ListView.js';

/** What the app remembers across namespaces: whether the deployment lists bases, and the bases opened by key without it. */
export interface BaseListMemory {
  /** Undefined until a namespace has been opened. */
  supported: boolean | undefined;
  /** Without base_list: the bases opened or created this session, by namespace. */
  session: Map<string, readonly Row[]>;
}

interface Bases {
  /** False when the deployment lacks the base_list extension. */
  supported: boolean;
  rows: readonly Row[];
}

export interface BasesViewProps {
  /** The organization, the first crumb. */
  organization: string;
  namespace: string;
  memory: BaseListMemory;
  active: boolean;
  visible: boolean;
  width: number;
  height: number;
  onBack(): void;
}

function toRow(base: { key: string; description: string | null }): Row {
  return { key: base.key, description: base.description };
}

function isRemoteNotFound(error: unknown): boolean {
  return error instanceof ApiError && !error.local && error.status === 404;
}

// Two lines that fit 80 columns: a narrower terminal cuts them, a wider one has room for the rest of the screen.
const NO_BASE_LIST_NOTICE = {
  lines: ['This deployment does not offer base_list (a kb serve extension).', 'Open bases by key (o) or create them (n); they stay listed this session.'],
  keys: ['openByKey', 'new'],
} as const;
// With --readonly, nothing is created: the notice names only o.
const NO_BASE_LIST_READONLY_NOTICE = {
  lines: ['This deployment does not offer base_list (a kb serve extension).', 'Open bases by key (o); they stay listed this session.'],
  keys: ['openByKey'],
} as const;

/** What a namespace that does not exist offers no key for. */
const MISSING_NAMESPACE_OFFERS_NO: readonly Command[] = ['new', 'edit', 'editInEditor', 'delete', 'mark', 'copy', 'filter', 'sortByKey', 'sortByDescription', 'open', 'openByKey'];

/**
 * The bases of a namespace, through base_list where the deployment offers it. Where it does not, the view says so,
 * opens bases by key, and lists those opened or created this session, so it still works with only the documented API.
 */
export function BasesView(props: BasesViewProps) {
  const { client, disabled, live: { subscribe } } = useTui();
  const { namespace, memory } = props;
  const [status, setStatus] = useState<Status | undefined>(undefined);
  const [openKey, setOpenKey] = useState<string | undefined>(undefined);
  const lastOpen = useRef<Row | undefined>(undefined);

  const bases = useRemote<Bases>(async () => {
    if (memory.supported !== false) {
      try {
        const listed = await client.baseList(namespace);
        memory.supported = true;
        return { supported: true, rows: listed.map(toRow) };
      } catch (error) {
        if (!(error instanceof BaseListUnsupportedError)) throw error;
        memory.supported = false;
      }
    }
    return { supported: false, rows: memory.session.get(namespace) ?? [] };
  }, [client, namespace]);

  const listed = bases.data?.supported !== false;
  // A base of this namespace created, changed or deleted elsewhere shows at once; a namespace not there yet is read
  // again once it is created.
  const { mutate, reload } = bases;
  useEffect(() => subscribe((change) => {
    if (change.kind === 'namespace') {
      if (change.object.key === namespace && change.type === 'created') reload();
      return;
    }
    if (change.object.namespace !== namespace) return;
    const row = toRow(change.object);
    mutate((data) => (data === undefined || !data.supported ? data : { ...data, rows: change.type === 'deleted' ? removeRow(data.rows, row.key) : upsertRow(data.rows, row) }));
  }), [subscribe, mutate, reload, namespace]);
  /** Applies a change to the list at once; with base_list, a reload then confirms it from the server. */
  const change = (edit: (rows: readonly Row[]) => readonly Row[]) => {
    if (!listed) memory.session.set(namespace, edit(memory.session.get(namespace) ?? []));
    bases.mutate((data) => (data === undefined ? data : { ...data, rows: edit(data.rows) }));
    if (listed) bases.reload();
  };
  /** A 404 means the base is gone: the list stops showing it. */
  const forgetIfMissing = (error: unknown, key: string): never => {
    if (isRemoteNotFound(error)) change((rows) => removeRow(rows, key));
    throw error;
  };

  const create = async ({ key, description }: { key: string | undefined; description: string | undefined }) => {
    const base = await client.baseCreate({ namespace, ...(key === undefined ? {} : { key }), ...(description === undefined ? {} : { description }) });
    change((rows) => upsertRow(rows, toRow(base)));
    return toRow(base);
  };
  const update = async (row: Row, description: string | null) => {
    const base = await client.baseUpdate({ namespace, base: row.key, data: { description } }).catch((error: unknown) => forgetIfMissing(error, row.key));
    change((rows) => upsertRow(rows, toRow(base)));
    return toRow(base);
  };
  const remove = async (row: Row) => {
    const base = await client.baseDelete({ namespace, base: row.key }).catch((error: unknown) => forgetIfMissing(error, row.key));
    change((rows) => removeRow(rows, row.key));
    return toRow(base);
  };
  const refresh = () => {
    // The deployment may have gained base_list since: ask again.
    memory.supported = undefined;
    bases.reload();
  };

  // base_list answers 404 for a namespace that does not exist (a `:ns` typo): nothing to create, edit or delete in it.
  const missing = bases.data === undefined && isRemoteNotFound(bases.error);
  const rows = bases.data?.rows;
  const found = openKey === undefined ? undefined : rows?.find((row) => row.key === openKey);
  if (found !== undefined) lastOpen.current = found;
  const detail = openKey === undefined ? undefined : (found ?? (lastOpen.current?.key === openKey ? lastOpen.current : { key: openKey, description: undefined }));
  const fallback = bases.data !== undefined && !bases.data.supported;
  const crumbs = [props.organization, namespace];
  const rowOps: RowOps = {
    noun: 'base',
    update,
    remove: { run: remove, question: (row) => `Delete base ${row.key} in namespace ${namespace}, with all its data?` },
  };
  const listOps: ListOps = { ...rowOps, create, generatedPrefix: 'kb_', createTitle: `New base in namespace ${namespace}` };
  const openByKey = (key: string) => {
    change((current) => (current.some((row) => row.key === key) ? current : upsertRow(current, { key, description: undefined })));
    setStatus(undefined);
    setOpenKey(key);
  };

  return (
    <>
      <ListView
        active={props.active && detail === undefined}
        visible={props.visible && detail === undefined}
        width={props.width}
        height={props.height}
        crumbs={crumbs}
        source={{ rows, loading: bases.loading, error: bases.error, updatedAt: bases.updatedAt, reload: refresh }}
        ops={listOps}
        autoRefresh={!fallback}
        empty={
          fallback
            ? { text: 'No base opened yet', offers: [['openByKey', 'o opens one by key'], ['new', 'n creates one']] }
            : { text: 'No bases in this namespace yet', offers: [['new', 'n creates one']] }
        }
        notice={fallback ? (disabled.includes('new') ? NO_BASE_LIST_READONLY_NOTICE : NO_BASE_LIST_NOTICE) : undefined}
        status={status}
        setStatus={setStatus}
        onOpen={(row) => {
          setStatus(undefined);
          setOpenKey(row.key);
        }}
        onBack={props.onBack}
        yamlContext={[['namespace', namespace]]}
        openByKey={fallback ? { open: openByKey, promptNow: rows?.length === 0 } : undefined}
        disabled={missing ? MISSING_NAMESPACE_OFFERS_NO : undefined}
        instead={
          missing
            ? { tone: 'error', text: `Namespace ${namespace} does not exist.`, help: 'esc goes back to the namespaces; :ns KEY opens another; r asks again.', keys: ['back', 'commandLine', 'refresh'] }
            : undefined
        }
      />
      {detail !== undefined && props.visible ? (
        <BaseView
          active={props.active}
          width={props.width}
          height={props.height}
          crumbs={crumbs}
          row={detail}
          listed={found !== undefined || bases.loading}
          ops={rowOps}
          status={status}
          setStatus={setStatus}
          onRefresh={fallback ? undefined : refresh}
          onBack={() => setOpenKey(undefined)}
        />
      ) : null}
    </>
  );
}
