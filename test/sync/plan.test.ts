import { cachedDataVersionTag } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { Base, Namespace } from '../../src/api/schemas.js';
import { ApiError, BaseListUnsupportedError, exitCodeFor } from '../../src/client/errors.js';
import { memoryIO } from '../helpers/io.js';
import {
  ApplyError,
  applyChanges,
  type Change,
  planChanges,
  readCurrentState,
  readResources,
  renderPlan,
  SHORT_PLAN,
  type SyncClient,
  syncResources,
} from '../../src/sync/plan.js';
import { normalizeResources, type Resources } from '../../src/sync/resources-file.js';
import { rejection } from '../helpers/rejection.js';

const URL = 'http://kb.test/v1';

function apiError(status: number, message: string): ApiError {
  return new ApiError({ status, message, url: URL, method: 'POST' });
}

/** A deployment in memory with the client's behaviour: 404 for what is missing, 409 for a key taken. */
class FakeDeployment implements SyncClient {
  namespaces = new Map<string, string | null>();
  bases = new Map<string, Map<string, string | null>>();
  /** Every write, in order, as `route namespace/key`. */
  writes: string[] = [];
  /** Makes the write with this index (0-based) fail with this error. */
  failAt?: { index: number; error: Error };
  baseListOffered = true;

  constructor(content: Resources = { namespaces: [] }) {
    for (const ns of content.namespaces) {
      this.namespaces.set(ns.key, ns.description);
      this.bases.set(ns.key, new Map(ns.bases.map((base) => [base.key, base.description])));
    }
  }

  snapshot(): Resources {
    return normalizeResources({
      namespaces: [...this.namespaces].map(([key, description]) => ({
        key,
        description,
        bases: [...(this.bases.get(key) ?? new Map<string, string | null>())].map(([baseKey, baseDescription]) => ({ key: baseKey, description: baseDescription })),
      })),
    });
  }

  #write(label: string): void {
    if (this.failAt && this.failAt.index === this.writes.length) {
      const { error } = this.failAt;
      this.failAt = undefined;
      throw error;
    }
    this.writes.push(label);
  }

  async nsList(): Promise<Namespace[]> {
    return [...this.namespaces].map(([key, description]) => ({ key, description })).sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  /** Reads of every base at once (base_list_all), and of one namespace's (base_list). */
  reads = { all: 0, one: 0 };

  async baseListAll(): Promise<Base[] | undefined> {
    if (!this.baseListOffered) return undefined;
    this.reads.all++;
    return [...this.namespaces.keys()].sort().flatMap((namespace) =>
      [...(this.bases.get(namespace) ?? new Map<string, string | null>())].map(([key, description]) => ({ namespace, key, description })),
    );
  }

  async baseList(namespace: string): Promise<Base[]> {
    this.reads.one++;
    if (!this.baseListOffered) {
      if (this.namespaces.has(namespace)) throw new BaseListUnsupportedError(`${URL}/base_list`, namespace);
      throw apiError(404, 'No such route');
    }
    const bases = this.bases.get(namespace);
    if (!bases) throw apiError(404, `Namespace ${namespace} not found`);
    return [...bases].map(([key, description]) => ({ namespace, key, description })).sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  async nsCreate(body: { key?: string | null; description?: string | null }): Promise<Namespace> {
    const key = body.key as string;
    this.#write(`ns_create ${key}`);
    if (this.namespaces.has(key)) throw apiError(409, `Namespace ${key} already exists`);
    this.namespaces.set(key, body.description ?? null);
    this.bases.set(key, new Map());
    return { key, description: body.description ?? null };
  }

  async nsUpdate(body: { namespace: string; data: { description?: string | null } }): Promise<Namespace> {
    this.#write(`ns_update ${body.namespace}`);
    if (!this.namespaces.has(body.namespace)) throw apiError(404, `Namespace ${body.namespace} not found`);
    if (body.data.description !== undefined) this.namespaces.set(body.namespace, body.data.description);
    return { key: body.namespace, description: this.namespaces.get(body.namespace) ?? null };
  }

  async baseCreate(body: { namespace: string; key?: string | null; description?: string | null }): Promise<Base> {
    const key = body.key as string;
    this.#write(`base_create ${body.namespace}/${key}`);
    if (!this.namespaces.has(body.namespace)) {
      this.namespaces.set(body.namespace, null);
      this.bases.set(body.namespace, new Map());
    }
    const bases = this.bases.get(body.namespace) as Map<string, string | null>;
    if (bases.has(key)) throw apiError(409, `Base ${key} already exists`);
    bases.set(key, body.description ?? null);
    return { namespace: body.namespace, key, description: body.description ?? null };
  }

  async baseUpdate(body: { namespace: string; base: string; data: { description?: string | null } }): Promise<Base> {
    this.#write(`base_update ${body.namespace}/${body.base}`);
    const bases = this.bases.get(body.namespace);
    if (!bases?.has(body.base)) throw apiError(404, `Base ${body.base} not found`);
    if (body.data.description !== undefined) bases.set(body.base, body.data.description);
    return { namespace: body.namespace, key: body.base, description: bases.get(body.base) ?? null };
  }

  async baseDelete(body: { namespace: string; base: string }): Promise<Base> {
    this.#write(`base_delete ${body.namespace}/${body.base}`);
    const bases = this.bases.get(body.namespace);
    const description = bases?.get(body.base);
    if (!bases || description === undefined) throw apiError(404, `Base ${body.base} not found`);
    bases.delete(body.base);
    return { namespace: body.namespace, key: body.base, description };
  }
}

const resources = (namespaces: { key: string; description?: string | null; bases?: { key: string; description?: string | null }[] }[]): Resources =>
  normalizeResources({ namespaces });

const CURRENT = resources([
  { key: 'docs', description: 'Docs', bases: [{ key: 'faq', description: 'FAQ' }, { key: 'old', description: null }, { key: 'same', description: 'Same' }] },
  { key: 'other', description: null, bases: [{ key: 'kept', description: null }] },
]);

const DESIRED = resources([
  { key: 'docs', description: 'All the docs', bases: [{ key: 'faq', description: 'FAQ' }, { key: 'new', description: 'New' }, { key: 'same', description: 'Changed' }] },
  { key: 'fresh', bases: [{ key: 'first', description: null }] },
]);

describe('planChanges', () => {
  it('creates what is missing, updates descriptions that differ, and keeps the rest without prune', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: false });
    expect(plan.changes).toEqual<Change[]>([
      { action: 'update', type: 'namespace', key: 'docs', description: 'All the docs', previous: 'Docs' },
      { action: 'create', type: 'namespace', key: 'fresh', description: null },
      { action: 'create', type: 'base', namespace: 'docs', key: 'new', description: 'New' },
      { action: 'update', type: 'base', namespace: 'docs', key: 'same', description: 'Changed', previous: 'Same' },
      { action: 'create', type: 'base', namespace: 'fresh', key: 'first', description: null },
    ]);
    expect(plan.counts).toEqual({ create: 3, update: 2, delete: 0 });
    expect(plan.kept).toEqual({ namespaces: 1, bases: 1 });
  });

  it('with prune, deletes the bases of named namespaces that the file does not list, last, and never touches other namespaces', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
    expect(plan.changes.at(-1)).toEqual({ action: 'delete', type: 'base', namespace: 'docs', key: 'old', previous: null });
    expect(plan.changes.filter((change) => change.action === 'delete')).toHaveLength(1);
    expect(plan.counts).toEqual({ create: 3, update: 2, delete: 1 });
    expect(plan.kept).toEqual({ namespaces: 1, bases: 0 });
  });

  it('plans nothing when the deployment matches, and a namespace with an empty list of bases is pruned empty', async () => {
    const same = new FakeDeployment(CURRENT);
    expect(planChanges(await readCurrentState(same, CURRENT), CURRENT, { prune: true }).changes).toEqual([]);
    const emptied = resources([{ key: 'other', bases: [] }]);
    const plan = planChanges(await readCurrentState(same, emptied), emptied, { prune: true });
    expect(plan.changes).toEqual([{ action: 'delete', type: 'base', namespace: 'other', key: 'kept', previous: null }]);
  });

  it('tells null from a description, in both directions', async () => {
    const deployment = new FakeDeployment(resources([{ key: 'docs', description: 'x', bases: [{ key: 'faq' }] }]));
    const desired = resources([{ key: 'docs', description: null, bases: [{ key: 'faq', description: 'y' }] }]);
    const plan = planChanges(await readCurrentState(deployment, desired), desired, { prune: false });
    expect(plan.changes).toEqual([
      { action: 'update', type: 'namespace', key: 'docs', description: null, previous: 'x' },
      { action: 'update', type: 'base', namespace: 'docs', key: 'faq', description: 'y', previous: null },
    ]);
  });

  it('renders the plan with one line a change and the counts', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
    expect(renderPlan({ color: false }, plan, { pruneFlag: true }).split('\n')).toEqual([
      'Plan:',
      '  ~ namespace docs: description "Docs" -> "All the docs"',
      '  + namespace fresh (description: none)',
      '  + base docs/new (description: "New")',
      '  ~ base docs/same: description "Same" -> "Changed"',
      '  + base fresh/first (description: none)',
      '  - base docs/old',
      '3 to create, 2 to update, 1 to delete.',
      'Left as they are, on the deployment but not in the file:',
      '  1 namespace (never deleted from a file; `kb ns delete` deletes it)',
      '',
    ]);
    const none = planChanges(await readCurrentState(deployment, CURRENT), CURRENT, { prune: false });
    expect(renderPlan({ color: false }, none, { pruneFlag: true })).toBe('No changes: the deployment already matches the file.\n');
  });
});

describe('applyChanges', () => {
  it('makes the deployment match the file, and a second plan is empty', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
    expect(await applyChanges(deployment, plan.changes)).toBe(6);
    const after = deployment.snapshot();
    expect(after.namespaces.filter((ns) => ns.key !== 'other')).toEqual(DESIRED.namespaces);
    expect(after.namespaces.find((ns) => ns.key === 'other')).toEqual(CURRENT.namespaces[1]);
    expect(planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true }).changes).toEqual([]);
  });

  it('creates a namespace before its bases, so its description is set by ns_create', async () => {
    const deployment = new FakeDeployment();
    const desired = resources([{ key: 'fresh', description: 'Fresh', bases: [{ key: 'one' }] }]);
    await applyChanges(deployment, planChanges(await readCurrentState(deployment, desired), desired, { prune: false }).changes);
    expect(deployment.writes).toEqual(['ns_create fresh', 'base_create fresh/one']);
    expect(deployment.snapshot()).toEqual(desired);
  });

  it('one at a time, stops at the first failure and says what was applied and what was not, exiting as the failure does', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
    deployment.failAt = { index: 2, error: apiError(409, 'Base new already exists') };
    const error = await rejection(applyChanges(deployment, plan.changes, undefined, { concurrency: 1 }));
    expect(error).toBeInstanceOf(ApplyError);
    const failure = error as ApplyError;
    expect(failure.applied).toEqual(plan.changes.slice(0, 2));
    expect(failure.failed).toEqual(plan.changes[2]);
    expect(failure.pending).toEqual(plan.changes.slice(3));
    expect(failure.message).toBe('Could not create base docs/new: Base new already exists');
    expect(failure.exitCode).toBe(5);
    expect(exitCodeFor(failure)).toBe(5);
    expect(deployment.writes).toEqual(['ns_update docs', 'ns_create fresh']);
    expect(failure.report({ color: false }).split('\n')).toEqual([
      'Stopped after 2 of 6 changes.',
      'Applied:',
      '  ~ namespace docs: description "Docs" -> "All the docs"',
      '  + namespace fresh (description: none)',
      'Not applied:',
      '  + base docs/new (description: "New")',
      '  ~ base docs/same: description "Same" -> "Changed"',
      '  + base fresh/first (description: none)',
      '  - base docs/old',
      '',
    ]);
  });
});

describe('a change that may have run though it failed', () => {
  it('is listed apart, as maybe applied, whether its request was lost, a gateway answered for it, or it still ran', async () => {
    const causes = [
      new ApiError({ status: 504, message: 'Gateway timeout', url: URL, method: 'POST', mayHaveRun: true }),
      new ApiError({ status: 409, message: 'A request with this key is still running', url: URL, method: 'POST', stillRunning: true, mayHaveRun: true }),
    ];
    for (const cause of causes) {
      const deployment = new FakeDeployment(CURRENT);
      const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
      deployment.failAt = { index: 2, error: cause };
      const failure = (await rejection(applyChanges(deployment, plan.changes, undefined, { concurrency: 1 }))) as ApplyError;
      expect(failure.help).toBe('Apply the same file again once the deployment answers: it finds each change done or still to do.');
      expect(failure.report({ color: false }).split('\n')).toEqual([
        'Stopped after 2 of 6 changes.',
        'Applied:',
        '  ~ namespace docs: description "Docs" -> "All the docs"',
        '  + namespace fresh (description: none)',
        'Maybe applied (sent, but the outcome is unknown; applying again settles them):',
        '  + base docs/new (description: "New")',
        'Not applied:',
        '  ~ base docs/same: description "Same" -> "Changed"',
        '  + base fresh/first (description: none)',
        '  - base docs/old',
        '',
      ]);
    }
  });
});

describe('reading many namespaces', () => {
  const many = resources(
    Array.from({ length: 30 }, (_, i) => ({ key: `ns-${String(i).padStart(2, '0')}`, description: null, bases: [{ key: 'zeta' }, { key: 'alpha', description: `a${i}` }] })),
  );

  it('reads the bases of more than 16 namespaces with one base_list_all, sorted as base_list would give them', async () => {
    const deployment = new FakeDeployment(many);
    expect(await readResources(deployment)).toEqual(many);
    expect(deployment.reads).toEqual({ all: 1, one: 0 });
  });

  it('reads them one namespace at a time from a deployment without base_list_all, to the same result', async () => {
    const deployment = new FakeDeployment(many);
    const withoutAll = Object.assign(Object.create(deployment) as FakeDeployment, { baseListAll: async () => undefined });
    expect(await readResources(withoutAll)).toEqual(many);
    expect(deployment.reads).toEqual({ all: 0, one: 30 });
  });

  it('reads them several at a time from a deployment without base_list_all, never more than 16 at once', async () => {
    const bigger = resources(Array.from({ length: 100 }, (_, i) => ({ key: `ns-${String(i).padStart(3, '0')}`, description: null, bases: [{ key: `b-${i}` }] })));
    const deployment = new FakeDeployment(bigger);
    let inFlight = 0;
    let most = 0;
    const slow = Object.assign(Object.create(deployment) as FakeDeployment, {
      baseListAll: async () => undefined,
      baseList: async (namespace: string) => {
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 1));
          return await deployment.baseList(namespace);
        } finally {
          inFlight--;
        }
      },
    });
    expect(await readResources(slow)).toEqual(bigger);
    expect(deployment.reads).toEqual({ all: 0, one: 100 });
    expect(most).toBe(16);
    // And apply reads the same way: the plan of the same file is empty.
    most = 0;
    expect(planChanges(await readCurrentState(slow, bigger), bigger, { prune: true }).changes).toEqual([]);
    expect(most).toBe(16);
  });

  it('reads a few namespaces one by one', async () => {
    const deployment = new FakeDeployment(many);
    await readResources(deployment, { namespaces: ['ns-01', 'ns-02'] });
    expect(deployment.reads).toEqual({ all: 0, one: 2 });
  });
});

describe('applyChanges, several at a time', () => {
  /** A deployment whose writes each take a while, counting how many are on their way at once. */
  class SlowDeployment extends FakeDeployment {
    inFlight = 0;
    most = 0;
    async #slow<T>(write: () => Promise<T>): Promise<T> {
      this.inFlight++;
      this.most = Math.max(this.most, this.inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return await write();
      } finally {
        this.inFlight--;
      }
    }
    override nsCreate(body: Parameters<FakeDeployment['nsCreate']>[0]) {
      return this.#slow(() => super.nsCreate(body));
    }
    override baseCreate(body: Parameters<FakeDeployment['baseCreate']>[0]) {
      return this.#slow(() => super.baseCreate(body));
    }
  }

  it('sends up to 64 changes at once, every namespace before any base, and applies them all', async () => {
    const desired = resources(
      Array.from({ length: 80 }, (_, i) => ({ key: `ns-${String(i).padStart(2, '0')}`, description: `n${i}`, bases: [{ key: 'only' }] })),
    );
    const deployment = new SlowDeployment();
    const plan = planChanges(await readCurrentState(deployment, desired), desired, { prune: false });
    expect(await applyChanges(deployment, plan.changes)).toBe(160);
    expect(deployment.most).toBe(64);
    const lastNamespace = Math.max(...deployment.writes.map((write, i) => (write.startsWith('ns_create') ? i : -1)));
    const firstBase = deployment.writes.findIndex((write) => write.startsWith('base_create'));
    expect(lastNamespace).toBeLessThan(firstBase);
    expect(deployment.snapshot()).toEqual(desired);
  });

  it('at a failure sends nothing more, lets what was on its way finish, and reports exactly, in the plan\'s order', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const plan = planChanges(await readCurrentState(deployment, DESIRED), DESIRED, { prune: true });
    deployment.failAt = { index: 2, error: apiError(409, 'Base new already exists') };
    const error = (await rejection(applyChanges(deployment, plan.changes))) as ApplyError;
    expect(error).toBeInstanceOf(ApplyError);
    expect(error.message).toBe('Could not create base docs/new: Base new already exists');
    expect(error.exitCode).toBe(5);
    // The namespaces went first; the bases went together, so two finished beside the failed one; the delete, a later
    // phase, was never sent.
    expect(deployment.writes).toEqual(['ns_update docs', 'ns_create fresh', 'base_update docs/same', 'base_create fresh/first']);
    expect(error.report({ color: false }).split('\n')).toEqual([
      'Stopped after 4 of 6 changes.',
      'Applied:',
      '  ~ namespace docs: description "Docs" -> "All the docs"',
      '  + namespace fresh (description: none)',
      '  ~ base docs/same: description "Same" -> "Changed"',
      '  + base fresh/first (description: none)',
      'Not applied:',
      '  + base docs/new (description: "New")',
      '  - base docs/old',
      '',
    ]);
    expect(deployment.snapshot().namespaces.find((ns) => ns.key === 'docs')?.bases.map((base) => base.key)).toContain('old');
  });
});

describe('syncResources', () => {
  it('with dryRun prints the plan and writes nothing', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const io = memoryIO();
    const result = await syncResources(deployment, io, DESIRED, { prune: true, pruneFlag: true, dryRun: true, yes: false, json: false });
    expect(deployment.writes).toEqual([]);
    expect(deployment.snapshot()).toEqual(CURRENT);
    expect(result).toMatchObject({ dryRun: true, applied: 0, counts: { create: 3, update: 2, delete: 1 } });
    expect(io.err).toContain('  - base docs/old\n');
    expect(io.err.endsWith('Dry run: nothing was changed.\n')).toBe(true);
    expect(io.out).toBe('');
  });

  it('refuses to delete without a terminal or --yes, before any change, naming the flag', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const error = await rejection(syncResources(deployment, memoryIO(), DESIRED, { prune: true, pruneFlag: true, dryRun: false, yes: false, json: false }));
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringContaining('--yes') });
    expect(deployment.writes).toEqual([]);
  });

  it('needs no --yes when nothing is deleted, even with prune', async () => {
    const deployment = new FakeDeployment();
    const result = await syncResources(deployment, memoryIO(), DESIRED, { prune: true, pruneFlag: true, dryRun: false, yes: false, json: false });
    expect(result.applied).toBe(6);
    expect(deployment.snapshot()).toEqual(DESIRED);
  });

  it('says so when there is nothing to do, and with json prints nothing on stderr', async () => {
    const deployment = new FakeDeployment(CURRENT);
    const io = memoryIO();
    expect(await syncResources(deployment, io, CURRENT, { prune: true, pruneFlag: true, dryRun: false, yes: true, json: false })).toMatchObject({ applied: 0, changes: [] });
    expect(io.err).toBe('No changes: the deployment already matches the file.\n');
    const quiet = memoryIO();
    await syncResources(deployment, quiet, DESIRED, { prune: true, pruneFlag: true, dryRun: false, yes: true, json: true });
    expect(quiet.err).toBe('');
    expect(deployment.writes).toHaveLength(6);
  });

  it('writes the lines of changes applied together in one write, every line once, before the summary', async () => {
    const desired = resources(Array.from({ length: 40 }, (_, i) => ({ key: `ns-${String(i).padStart(2, '0')}`, description: `n${i}` })));
    const io = memoryIO();
    const writes: string[] = [];
    const write = io.stderr;
    io.stderr = (text) => {
      writes.push(text);
      write(text);
    };
    const result = await syncResources(new FakeDeployment(), io, desired, { prune: false, pruneFlag: true, dryRun: false, yes: false, json: false });
    expect(result.applied).toBe(40);
    const done = io.err.split('\n').filter((line) => line.startsWith('✓ '));
    expect(done.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `✓ + namespace ns-${String(i).padStart(2, '0')} (description: "n${i}")`));
    expect(io.err.endsWith('Applied 40 changes: 40 created, 0 updated, 0 deleted.\n')).toBe(true);
    // The plan, the lines of the 40 creates (sent together, answered together), the summary: not a write a line.
    expect(writes.length).toBeLessThanOrEqual(6);
  });

  describe('V8\'s optimizing compiler (its flags are in the tag V8 stamps code caches with)', () => {
    /** A deployment noting the tag while each namespace is created. */
    class Tagging extends FakeDeployment {
      tags = new Set<number>();
      override nsCreate(body: Parameters<FakeDeployment['nsCreate']>[0]) {
        this.tags.add(cachedDataVersionTag());
        return super.nsCreate(body);
      }
    }
    const many = (count: number) => resources(Array.from({ length: count }, (_, i) => ({ key: `ns-${String(i).padStart(5, '0')}`, description: null })));
    const options = { prune: false, pruneFlag: true, dryRun: false, yes: false, json: true };

    it('is off while a short plan is sent, and on again after, also when a change fails', async () => {
      const before = cachedDataVersionTag();
      const deployment = new Tagging();
      expect((await syncResources(deployment, memoryIO(), many(SHORT_PLAN), options)).applied).toBe(SHORT_PLAN);
      expect([...deployment.tags]).toHaveLength(1);
      expect(deployment.tags.has(before)).toBe(false);
      expect(cachedDataVersionTag()).toBe(before);
      const failing = new Tagging();
      failing.failAt = { index: 3, error: apiError(500, 'Internal server error') };
      expect(await rejection(syncResources(failing, memoryIO(), many(10), options))).toBeInstanceOf(ApplyError);
      expect(failing.tags.has(before)).toBe(false);
      expect(cachedDataVersionTag()).toBe(before);
    });

    it('stays on for a longer plan', async () => {
      const before = cachedDataVersionTag();
      const deployment = new Tagging();
      expect((await syncResources(deployment, memoryIO(), many(SHORT_PLAN + 1), options)).applied).toBe(SHORT_PLAN + 1);
      expect([...deployment.tags]).toEqual([before]);
    });
  });

  it('reports part-way failures on stderr even with json', async () => {
    const deployment = new FakeDeployment(CURRENT);
    deployment.failAt = { index: 1, error: apiError(500, 'Internal server error') };
    const io = memoryIO();
    const error = await rejection(syncResources(deployment, io, DESIRED, { prune: false, pruneFlag: true, dryRun: false, yes: false, json: true }));
    expect(error).toBeInstanceOf(ApplyError);
    expect((error as ApplyError).exitCode).toBe(1);
    expect(io.err.split('\n').slice(0, 4)).toEqual([
      'Stopped after 1 of 5 changes.',
      'Applied:',
      '  ~ namespace docs: description "Docs" -> "All the docs"',
      'Not applied:',
    ]);
  });

  it('can create namespaces that do not exist yet on a deployment without base_list, but not compare existing ones', async () => {
    const deployment = new FakeDeployment(CURRENT);
    deployment.baseListOffered = false;
    const fresh = resources([{ key: 'fresh', bases: [{ key: 'first' }] }]);
    await syncResources(deployment, memoryIO(), fresh, { prune: false, pruneFlag: true, dryRun: false, yes: false, json: true });
    expect(deployment.writes).toEqual(['ns_create fresh', 'base_create fresh/first']);
    const error = await rejection(syncResources(deployment, memoryIO(), DESIRED, { prune: false, pruneFlag: true, dryRun: false, yes: false, json: true }));
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringContaining('does not offer base_list') });
    expect(deployment.writes).toHaveLength(2);
  });
});

describe('readResources', () => {
  it('reads every namespace with its bases, sorted', async () => {
    expect(await readResources(new FakeDeployment(CURRENT))).toEqual(CURRENT);
  });

  it('reads only the namespaces asked for, and fails with exit 3 naming one that does not exist', async () => {
    const deployment = new FakeDeployment(CURRENT);
    expect(await readResources(deployment, { namespaces: ['other'] })).toEqual({ namespaces: [CURRENT.namespaces[1]] });
    const error = await rejection(readResources(deployment, { namespaces: ['other', 'nope'] }));
    expect(error).toMatchObject({ exitCode: 3, message: 'Namespace nope not found' });
    const both = await rejection(readResources(deployment, { namespaces: ['zz', 'nope'] }));
    expect(both).toMatchObject({ exitCode: 3, message: 'Namespaces nope, zz not found' });
  });

  it('fails plainly against a deployment without base_list, rather than export namespaces without their bases', async () => {
    const deployment = new FakeDeployment(CURRENT);
    deployment.baseListOffered = false;
    const error = await rejection(readResources(deployment));
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^Cannot export: this deployment does not offer base_list/) });
  });
});
