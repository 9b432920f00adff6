import type { Base, Namespace } from '../api/schemas.js';
import type { KbClient } from '../client/client.js';
import { ApiError, BaseListUnsupportedError, exitCodeFor, NetworkError } from '../client/errors.js';
import { CliError } from '../cli/errors.js';
import { onInterrupt } from '../cli/interrupt.js';
import { paint, type IO } from '../cli/io.js';
import { fit } from '../cli/output.js';
import { confirm } from '../cli/prompt.js';
import { byKey, type BaseEntry, type Resources } from './resources-file.js';
import { EXIT } from '../client/exit-codes.js';
import { escapeJsonControls } from '../text/controls.js';

/** What export, apply and import need of a client; tests pass an in-memory one. */
export type SyncClient = Pick<KbClient, 'nsList' | 'baseList' | 'baseListAll' | 'nsCreate' | 'nsUpdate' | 'baseCreate' | 'baseUpdate' | 'baseDelete'>;

export type Change =
  | { action: 'create'; type: 'namespace'; key: string; description: string | null }
  | { action: 'update'; type: 'namespace'; key: string; description: string | null; previous: string | null }
  | { action: 'create'; type: 'base'; namespace: string; key: string; description: string | null }
  | { action: 'update'; type: 'base'; namespace: string; key: string; description: string | null; previous: string | null }
  | { action: 'delete'; type: 'base'; namespace: string; key: string; previous: string | null };

export type Action = Change['action'];

export interface Plan {
  /** In the order they are applied: namespaces, then bases created or updated, then bases deleted. */
  changes: Change[];
  counts: Record<Action, number>;
  /** On the deployment but not in the file, and left as they are (bases only without --prune; namespaces always). */
  kept: { namespaces: number; bases: number };
}

/** What the deployment holds of the namespaces a file names: every namespace, and the bases of those in the file. */
export interface CurrentState {
  namespaces: Namespace[];
  /** By namespace; a namespace with no bases may have no entry. */
  bases: Map<string, BaseEntry[]>;
}

/** Several requests at a time, results in the order of the items. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** base_list requests at a time, against a deployment without base_list_all. */
const READ_CONCURRENCY = 16;
/** More namespaces than this are read with one base_list_all where the deployment offers it, rather than one by one. */
const ALL_AT_ONCE_AFTER = 16;

/** The bases of the namespaces, by namespace, each list ordered by key; a namespace with none may have no entry. */
async function basesOf(
  client: SyncClient,
  namespaces: readonly string[],
  doing: string,
  /** base_list_all's answer when it was asked for already (undefined inside: not offered). */
  asked?: { all: readonly Base[] | undefined },
): Promise<Map<string, BaseEntry[]>> {
  const bases = new Map<string, BaseEntry[]>();
  if (asked !== undefined || namespaces.length > ALL_AT_ONCE_AFTER) {
    const all = asked === undefined ? await client.baseListAll() : asked.all;
    if (all !== undefined) {
      // Only the namespaces that have bases get a list: most of a big organization's have none.
      const named = new Set(namespaces);
      for (const base of all) {
        if (!named.has(base.namespace)) continue;
        const list = bases.get(base.namespace);
        const entry = { key: base.key, description: base.description };
        if (list === undefined) bases.set(base.namespace, [entry]);
        else list.push(entry);
      }
      for (const list of bases.values()) if (list.length > 1) list.sort(byKey);
      return bases;
    }
  }
  try {
    const lists = await mapLimit(namespaces, READ_CONCURRENCY, (ns) => client.baseList(ns));
    namespaces.forEach((ns, i) => bases.set(ns, (lists[i] ?? []).map((base) => ({ key: base.key, description: base.description })).sort(byKey)));
    return bases;
  } catch (error) {
    if (!(error instanceof BaseListUnsupportedError)) throw error;
    throw new CliError(
      `Cannot ${doing}: this deployment does not offer base_list (an extension of kb serve), so the bases of a namespace cannot be listed`,
      EXIT.usage,
      doing === 'export' ? 'Nothing was written.' : 'Nothing was changed. Only namespaces that do not exist yet can be applied to such a deployment.',
    );
  }
}

/**
 * The organization's namespaces and their bases, as `kb export` writes them: all of them, or those named (each must
 * exist). Bases come through base_list; a deployment without it is an error, never an export with bases missing.
 */
export async function readResources(client: SyncClient, options: { namespaces?: readonly string[] } = {}): Promise<Resources> {
  const all = await client.nsList();
  let chosen = all;
  if (options.namespaces && options.namespaces.length > 0) {
    const wanted = new Set(options.namespaces);
    const missing = [...wanted].filter((key) => !all.some((ns) => ns.key === key)).sort();
    // Worded as the server words a missing namespace (src/store/failures.ts).
    const message = missing.length === 1 ? `Namespace ${missing[0]} not found` : `Namespaces ${missing.join(', ')} not found`;
    if (missing.length > 0) throw new CliError(message, EXIT.notFound, 'Nothing was written. `kb ns list` shows the namespaces.');
    chosen = all.filter((ns) => wanted.has(ns.key));
  }
  const bases = await basesOf(client, chosen.map((ns) => ns.key), 'export');
  return {
    namespaces: chosen
      .map((ns) => ({ key: ns.key, description: ns.description, bases: bases.get(ns.key) ?? [] }))
      .sort(byKey),
  };
}

/** What the plan for `desired` must know: every namespace, and the bases of those the file names that exist. */
export async function readCurrentState(client: SyncClient, desired: Resources): Promise<CurrentState> {
  // A file of many namespaces: every base at once, asked for beside the namespaces rather than after them.
  const [namespaces, all] = await Promise.all([
    client.nsList(),
    desired.namespaces.length > ALL_AT_ONCE_AFTER ? client.baseListAll().then((bases) => ({ all: bases })) : undefined,
  ]);
  const existing = new Set(namespaces.map((ns) => ns.key));
  const named = desired.namespaces.map((ns) => ns.key).filter((key) => existing.has(key));
  return { namespaces, bases: await basesOf(client, named, 'apply the file', all) };
}

/** The list in key order: itself when it is already (as a normalized file is), else a sorted copy. */
function inKeyOrder<T extends { key: string }>(list: readonly T[]): readonly T[] {
  for (let i = 1; i < list.length; i++) if (byKey(list[i - 1] as T, list[i] as T) > 0) return [...list].sort(byKey);
  return list;
}

/**
 * The changes that make the deployment match the file. Namespaces the file does not name are left alone (apply never
 * deletes one; `kb ns delete` does); with `prune`, bases of a named namespace that the file does not list are deleted.
 */
export function planChanges(current: CurrentState, desired: Resources, options: { prune: boolean }): Plan {
  const namespaceChanges: Change[] = [];
  const baseChanges: Change[] = [];
  const deletes: Change[] = [];
  let keptBases = 0;
  const currentNamespaces = new Map(current.namespaces.map((ns) => [ns.key, ns]));
  for (const ns of inKeyOrder(desired.namespaces)) {
    const existing = currentNamespaces.get(ns.key);
    if (!existing) namespaceChanges.push({ action: 'create', type: 'namespace', key: ns.key, description: ns.description });
    else if (existing.description !== ns.description) {
      namespaceChanges.push({ action: 'update', type: 'namespace', key: ns.key, description: ns.description, previous: existing.description });
    }
    const haveList = existing ? (current.bases.get(ns.key) ?? []) : [];
    // Most namespaces of a big file have no bases, here or there: nothing to compare, nothing to allocate.
    if (haveList.length === 0 && ns.bases.length === 0) continue;
    const have = new Map(haveList.map((base) => [base.key, base]));
    const want = new Set(ns.bases.map((base) => base.key));
    for (const base of inKeyOrder(ns.bases)) {
      const before = have.get(base.key);
      if (!before) baseChanges.push({ action: 'create', type: 'base', namespace: ns.key, key: base.key, description: base.description });
      else if (before.description !== base.description) {
        baseChanges.push({ action: 'update', type: 'base', namespace: ns.key, key: base.key, description: base.description, previous: before.description });
      }
    }
    for (const base of [...have.values()].sort(byKey)) {
      if (want.has(base.key)) continue;
      if (options.prune) deletes.push({ action: 'delete', type: 'base', namespace: ns.key, key: base.key, previous: base.description });
      else keptBases++;
    }
  }
  const named = new Set(desired.namespaces.map((ns) => ns.key));
  const changes = [...namespaceChanges, ...baseChanges, ...deletes];
  const counts: Record<Action, number> = { create: 0, update: 0, delete: 0 };
  for (const change of changes) counts[change.action]++;
  return { changes, counts, kept: { namespaces: current.namespaces.filter((ns) => !named.has(ns.key)).length, bases: keptBases } };
}

function target(change: Change): string {
  return change.type === 'namespace' ? `namespace ${change.key}` : `base ${change.namespace}/${change.key}`;
}

function shown(description: string | null): string {
  return description === null ? 'none' : fit(escapeJsonControls(JSON.stringify(description)), 60);
}

/** "create namespace docs", for messages. */
export function describeChange(change: Change): string {
  const verb = change.action === 'update' ? 'update the description of' : change.action;
  return `${verb} ${target(change)}`;
}

const MARKS = { create: ['+', 'green'], update: ['~', 'yellow'], delete: ['-', 'red'] } as const;

/** One line of a plan: `+ base docs/faq (description "...")`. */
export function changeLine(io: Pick<IO, 'color'>, change: Change): string {
  const [mark, color] = MARKS[change.action];
  let detail = '';
  if (change.action === 'create') detail = ` (description: ${shown(change.description)})`;
  else if (change.action === 'update') detail = `: description ${shown(change.previous)} -> ${shown(change.description)}`;
  return `${paint(io, color, mark)} ${target(change)}${detail}`;
}

/** The creates and updates of a plan shown on a terminal without --verbose: the counts come first, then these, then every delete. */
const PLAN_SHOWN = 20;

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * The plan as people read it: one line a change, the counts, and what is left as it is, a line each, saying what
 * would delete it: `--prune` where the command has it (apply), `apply --prune` where it has not (import).
 */
export function renderPlan(io: Pick<IO, 'color'> & Partial<Pick<IO, 'isStderrTTY'>>, plan: Plan, options: { pruneFlag: boolean; verbose?: boolean }): string {
  const lines: string[] = [];
  const counts = `${plan.counts.create} to create, ${plan.counts.update} to update, ${plan.counts.delete} to delete.`;
  if (plan.changes.length === 0) lines.push('No changes: the deployment already matches the file.');
  else if (io.isStderrTTY === true && options.verbose !== true && plan.changes.length > PLAN_SHOWN) {
    // A person reads the counts, then a screenful: hundreds of lines would scroll the counts away. Every delete is
    // shown all the same (they come last in the plan): nobody is asked to confirm deletes they have not seen.
    const others = plan.changes.filter((change) => change.action !== 'delete');
    lines.push(`Plan: ${counts}`);
    for (const change of others.slice(0, PLAN_SHOWN)) lines.push(`  ${changeLine(io, change)}`);
    if (others.length > PLAN_SHOWN) {
      const more = plural(others.length - PLAN_SHOWN, 'more change');
      lines.push(`  … and ${more}${plan.counts.delete > 0 ? ' to create or update' : ''} (--verbose shows every one).`);
    }
    for (const change of plan.changes) if (change.action === 'delete') lines.push(`  ${changeLine(io, change)}`);
  } else {
    lines.push('Plan:');
    for (const change of plan.changes) lines.push(`  ${changeLine(io, change)}`);
    lines.push(counts);
  }
  const kept: string[] = [];
  if (plan.kept.namespaces > 0) {
    kept.push(`  ${plural(plan.kept.namespaces, 'namespace')} (never deleted from a file; \`kb ns delete\` deletes ${plan.kept.namespaces === 1 ? 'it' : 'them'})`);
  }
  if (plan.kept.bases > 0) {
    const them = plan.kept.bases === 1 ? 'it' : 'them';
    kept.push(`  ${plural(plan.kept.bases, 'base')} (${options.pruneFlag ? `--prune deletes ${them}` : `import never deletes; apply --prune deletes ${them}`})`);
  }
  if (kept.length > 0) lines.push('Left as they are, on the deployment but not in the file:', ...kept);
  return `${lines.join('\n')}\n`;
}

/** Whether a change that failed with `cause` may have been applied all the same (its request ran, its reply lost). */
function mayHaveRun(cause: unknown): boolean {
  return (cause instanceof NetworkError || cause instanceof ApiError) && cause.mayHaveRun;
}

/**
 * A plan that stopped part-way: what was applied, the change that failed first (its cause is the error's, and its exit
 * code), and what was not applied (other changes that failed at the same time, then those never sent). A change whose
 * request may have run on the server with no reply coming back (its connection lost after it was sent, its first
 * request still running, or a gateway answering for the server: NetworkError and ApiError's mayHaveRun) is neither:
 * `unknown` holds those, and the report lists them apart. Applying again settles them: its plan finds each done or
 * still to do.
 */
export class ApplyError extends Error {
  override readonly name = 'ApplyError';
  readonly exitCode: number;
  readonly help: string | undefined;

  constructor(
    readonly applied: readonly Change[],
    readonly failed: Change,
    readonly pending: readonly Change[],
    override readonly cause: unknown,
    /** Of `failed` and `pending`, those that may have been applied: sent, and no reply came. */
    readonly unknown: ReadonlySet<Change> = new Set(),
  ) {
    super(`Could not ${describeChange(failed)}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.exitCode = exitCodeFor(cause);
    const help = (cause as { help?: unknown } | undefined)?.help;
    // For a change that may have been applied, the command's own way to settle it, not a look by hand.
    if (unknown.size > 0) this.help = 'Apply the same file again once the deployment answers: it finds each change done or still to do.';
    else this.help = typeof help === 'string' && help !== '' ? help : undefined;
  }

  /**
   * The report for stderr: every change applied, then every change sent with no reply (it may have been applied), then
   * every change not applied; the failed one first of its list.
   */
  report(io: Pick<IO, 'color'>): string {
    const total = this.applied.length + 1 + this.pending.length;
    const lines = [`Stopped after ${this.applied.length} of ${total} changes.`];
    const listed = (changes: readonly Change[]) => changes.map((change) => `  ${changeLine(io, change)}`);
    if (this.applied.length > 0) lines.push('Applied:', ...listed(this.applied));
    const rest = [this.failed, ...this.pending];
    const unknown = rest.filter((change) => this.unknown.has(change));
    const notApplied = rest.filter((change) => !this.unknown.has(change));
    if (unknown.length > 0) lines.push('Maybe applied (sent, but the outcome is unknown; applying again settles them):', ...listed(unknown));
    if (notApplied.length > 0) lines.push('Not applied:', ...listed(notApplied));
    return `${lines.join('\n')}\n`;
  }
}

async function applyChange(client: SyncClient, change: Change): Promise<void> {
  switch (change.action) {
    case 'create':
      if (change.type === 'namespace') await client.nsCreate({ key: change.key, description: change.description });
      else await client.baseCreate({ namespace: change.namespace, key: change.key, description: change.description });
      return;
    case 'update':
      if (change.type === 'namespace') await client.nsUpdate({ namespace: change.key, data: { description: change.description } });
      else await client.baseUpdate({ namespace: change.namespace, base: change.key, data: { description: change.description } });
      return;
    case 'delete':
      await client.baseDelete({ namespace: change.namespace, base: change.key });
  }
}

/**
 * Changes sent at once: the server commits concurrent writes together (its group commit), so a plan of many changes
 * takes a fraction of the time it takes one by one. Bounded, so that a big plan does not open hundreds of requests.
 */
export const APPLY_CONCURRENCY = 64;

/** The phases of a plan, each applied once the one before is done: namespaces, then bases created or updated, then deletes. */
function phaseOf(change: Change): number {
  if (change.type === 'namespace') return 0;
  return change.action === 'delete' ? 2 : 1;
}

/**
 * Applies the changes, phase by phase (a namespace before its bases, creates and updates before deletes), up to
 * `concurrency` at a time within a phase. At the first failure nothing more is sent; the changes already on their way
 * finish, and an ApplyError says exactly which were applied and which were not (in the plan's order).
 */
export async function applyChanges(
  client: SyncClient,
  changes: readonly Change[],
  onApplied?: (change: Change) => void,
  options: { concurrency?: number } = {},
): Promise<number> {
  const concurrency = Math.max(1, options.concurrency ?? APPLY_CONCURRENCY);
  const applied = new Set<number>();
  const failures: Array<{ index: number; cause: unknown }> = [];
  for (let phase = 0; phase <= 2 && failures.length === 0; phase++) {
    const queue = changes.flatMap((change, index) => (phaseOf(change) === phase ? [index] : []));
    let next = 0;
    const worker = async () => {
      while (next < queue.length && failures.length === 0) {
        const index = queue[next++] as number;
        try {
          await applyChange(client, changes[index] as Change);
        } catch (cause) {
          failures.push({ index, cause });
          continue;
        }
        applied.add(index);
        onApplied?.(changes[index] as Change);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  }
  const [first, ...others] = failures;
  if (first === undefined) return changes.length;
  const failedAlso = new Set(others.map((failure) => failure.index));
  const inOrder = (keep: (index: number) => boolean) => changes.filter((_change, index) => keep(index));
  throw new ApplyError(
    inOrder((index) => applied.has(index)),
    changes[first.index] as Change,
    [...inOrder((index) => failedAlso.has(index)), ...inOrder((index) => !applied.has(index) && !failedAlso.has(index) && index !== first.index)],
    first.cause,
    new Set(failures.filter((failure) => mayHaveRun(failure.cause)).map((failure) => changes[failure.index] as Change)),
  );
}

/** Plans longer than this show their progress on a terminal (done/total), instead of a line per change. */
const PROGRESS_AFTER = 20;

/**
 * Plans of at most this many changes are sent with V8's optimizing compiler (TurboFan) off. It compiles on threads of
 * its own, and for a short plan its compiles cost more CPU than its code saves: the client's code is hot only while
 * the plan lasts, and a local kb serve wants the same cores. Measured on kb apply of new namespaces into a kb serve
 * (Node 20, the built kb against the same build with this off, alternated rounds, CPU of the kb process, medians;
 * docs/performance.md): 2,000 changes, 880 ms against 1,100 (a fifth less); 500 changes, 715 against 725 (within the
 * rounds' spread). The baseline compiler (Sparkplug), and Maglev where V8 has it, still compile.
 */
export const SHORT_PLAN = 2000;

/**
 * Runs `work` with TurboFan off, and turns it back on after: V8 stamps a code cache with its flags, and refuses one
 * made under others (scripts/vendor-load.mjs writes kb's own at exit on Node 22 and later).
 */
async function withoutOptimizingCompiler<T>(work: () => Promise<T>): Promise<T> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--no-turbofan');
  try {
    return await work();
  } finally {
    setFlagsFromString('--turbofan');
  }
}

export interface SyncOptions {
  prune: boolean;
  /** Whether the command has --prune (apply), for what the plan says about the bases it leaves. */
  pruneFlag: boolean;
  dryRun: boolean;
  /** Delete without asking. */
  yes: boolean;
  /** --json: the plan and result go to stdout as JSON; nothing but errors on stderr. */
  json: boolean;
  /** --verbose: on a terminal too, every change of the plan, not the first ones. */
  verbose?: boolean;
}

export interface SyncResult {
  dryRun: boolean;
  changes: Change[];
  counts: Record<Action, number>;
  kept: Plan['kept'];
  /** How many changes were applied: 0 on a dry run or when there was nothing to do. */
  applied: number;
}

/**
 * `kb apply` and `kb import`: reads what the deployment holds, prints the plan (stderr), asks before deleting (or
 * needs --yes without a terminal), applies the changes, and reports. With dryRun, changes nothing.
 */
export async function syncResources(client: SyncClient, io: IO, desired: Resources, options: SyncOptions): Promise<SyncResult> {
  const plan = planChanges(await readCurrentState(client, desired), desired, { prune: options.prune });
  const result: SyncResult = { dryRun: options.dryRun, changes: plan.changes, counts: plan.counts, kept: plan.kept, applied: 0 };
  const say = (text: string) => {
    if (!options.json) io.stderr(text);
  };
  say(renderPlan(io, plan, options));
  if (options.dryRun) {
    if (plan.changes.length > 0) say('Dry run: nothing was changed.\n');
    return result;
  }
  if (plan.changes.length === 0) return result;
  if (plan.counts.delete > 0 && !options.yes) {
    // Nobody confirms what they have not seen: with --json the plan was not shown yet.
    if (options.json && io.canPrompt) io.stderr(renderPlan(io, plan, options));
    const sure = await confirm(
      io,
      `Delete ${plural(plan.counts.delete, 'base')}, with all their data?`,
      `Pass --yes to delete the ${plural(plan.counts.delete, 'base')} of the plan without confirmation.`,
    );
    if (!sure) throw new CliError('Cancelled: nothing was changed.', EXIT.failure);
  }
  // A long plan on a terminal shows how far it is (one line, rewritten); otherwise a line per change applied.
  const total = plan.changes.length;
  const live = !options.json && io.isStderrTTY && io.animate && total > PROGRESS_AFTER;
  let done = 0;
  let shownAt = 0;
  const progress = () => io.stderr(`\r\u001B[KApplying: ${done}/${total} changes`);
  // The lines of changes answered together go out in one write, at the end of that turn of the event loop: a write
  // to a pipe or a file is synchronous, and one a line cost more CPU than the request it reports. Ctrl-C and the
  // end of the plan write what is waiting first.
  let waiting = '';
  const flush = () => {
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    say(text);
  };
  const onApplied = (change: Change) => {
    done++;
    if (!live) {
      if (waiting === '') setImmediate(flush);
      waiting += `${paint(io, 'green', '✓')} ${changeLine(io, change)}\n`;
      return;
    }
    const now = Date.now();
    if (now - shownAt >= 100 || done === total) {
      shownAt = now;
      progress();
    }
  };
  if (live) progress();
  const stopFlushing = onInterrupt(flush);
  try {
    const apply = () => applyChanges(client, plan.changes, onApplied);
    result.applied = await (total <= SHORT_PLAN ? withoutOptimizingCompiler(apply) : apply());
  } catch (error) {
    flush();
    if (live) io.stderr('\r\u001B[K');
    if (error instanceof ApplyError) io.stderr(error.report(io));
    throw error;
  } finally {
    stopFlushing();
  }
  flush();
  if (live) io.stderr('\r\u001B[K');
  say(`Applied ${plural(result.applied, 'change')}: ${plan.counts.create} created, ${plan.counts.update} updated, ${plan.counts.delete} deleted.\n`);
  return result;
}
