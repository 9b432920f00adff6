import { copyFileSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, type ExpectStatic, it } from 'vitest';
import { isolatedEnv, runKb, type ServeProcess, startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The data dir under accidents (docs/contract.md, Files and start-up; SQLite's "How To Corrupt An SQLite Database File",
 * sections 1 and 2), proven over a space of sequences rather than examples: fast-check draws sequences of acknowledged
 * writes, token commands beside the server, kill -9, SIGTERM, starts, `kb serve backup`, the README's restore, copies of
 * a data dir, of kb.db alone and of one sidecar from another dir, hard and symbolic links, and kb.db, -wal and -shm
 * deleted, moved or replaced, while kb serve runs and while it is stopped, all run on the built bin/run.js. A model
 * keeps every write and token answered 200 for each data dir; at every start it checks the invariant: the start serves
 * every one of them, or it refuses, naming the data dir, leaving every file as it was, and only after an accident (a
 * refusal with no accident since the last good start is a failure too). KB_ACCIDENT_RUNS sets the number of sequences
 * (`npm test` 200, `npm run test:torture` thousands); KB_ACCIDENT_SEED and KB_ACCIDENT_PATH replay the one a failure printed.
 */

const RUNS = Number(process.env.KB_ACCIDENT_RUNS ?? 200);
const WHICH = ['', '-wal', '-shm'] as const;
type Which = (typeof WHICH)[number];

interface DirModel {
  /** Namespaces answered 200. */
  acked: Set<string>;
  /** Tokens `kb serve token create` printed (exit 0). */
  tokens: Set<string>;
  /** A token of the dir's database, for the API (the first start's, or inherited by a copy). */
  apiToken: string | undefined;
  /** An accident touched its files since its last good start: a refusal is allowed. */
  tainted: boolean;
  /** Its last server stopped cleanly (or never ran): kb.db holds everything, with no -wal. */
  clean: boolean;
}

interface World {
  root: string;
  env: NodeJS.ProcessEnv;
  dirs: Map<string, DirModel>;
  server: { name: string; process: ServeProcess } | undefined;
  counter: number;
  expect: ExpectStatic;
  log: string[];
}

const pathOf = (world: World, name: string) => join(world.root, name);
const fileOf = (world: World, name: string, which: Which) => join(pathOf(world, name), `kb.db${which}`);
const pick = <T>(items: readonly T[], index: number): T => items[index % items.length] as T;
const names = (world: World) => [...world.dirs.keys()];
/** A dir an accident or a command beside the server touches: the running server's one time in two. */
const target = (world: World, index: number): string => (world.server && index % 2 === 0 ? world.server.name : pick(names(world), index >> 1));

function fresh(): DirModel {
  return { acked: new Set(), tokens: new Set(), apiToken: undefined, tainted: false, clean: true };
}

function copyModel(source: DirModel, tainted: boolean): DirModel {
  return { acked: new Set(source.acked), tokens: new Set(source.tokens), apiToken: source.apiToken, tainted, clean: source.clean };
}

function newDir(world: World): string {
  const name = `d${world.counter++}`;
  mkdirSync(pathOf(world, name), { mode: 0o700 });
  return name;
}

/** Whether two paths name one file (a hard link). */
function sameFile(a: string, b: string): boolean {
  const [x, y] = [statSync(a, { throwIfNoEntry: false }), statSync(b, { throwIfNoEntry: false })];
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

/** Every file of a dir with its bytes, to tell that a refusal changed nothing. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    try {
      files.set(name, readFileSync(join(dir, name)).toString('base64'));
    } catch {
      files.set(name, 'unreadable');
    }
  }
  return files;
}

async function api(world: World, path: string, token: string, body?: unknown): Promise<Response> {
  const server = world.server as { process: ServeProcess };
  return fetch(`${server.process.url}/v1/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

type Step = { label: string; run(world: World): Promise<void> };

const start = (index: number): Step => ({
  label: `start(${index})`,
  async run(world) {
    if (world.server) return;
    const name = pick(names(world), index);
    const model = world.dirs.get(name) as DirModel;
    const dir = pathOf(world, name);
    const before = snapshot(dir);
    let server: ServeProcess;
    try {
      server = await startServe(['--data-dir', dir], world.env);
    } catch (error) {
      const message = (error as Error).message;
      world.log.push(`  refused: ${message.split('\n').slice(1).join(' ').slice(0, 300)}`);
      world.expect(model.tainted, `a start refused with no accident since the last good start: ${message}`).toBe(true);
      world.expect(message).toContain(dir);
      world.expect(snapshot(dir), 'a refusal changed the data dir').toEqual(before);
      // The refusal is checked: the dir starts again from nothing.
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { mode: 0o700 });
      world.dirs.set(name, fresh());
      return;
    }
    world.server = { name, process: server };
    model.clean = false;
    model.apiToken ??= /kbt_[A-Za-z0-9_-]{43}/.exec(server.stdout())?.[0];
    const token = model.apiToken as string;
    const listed = await api(world, 'ns_list', token);
    world.expect(listed.status, 'the dir\'s token works after a start').toBe(200);
    const keys = new Set(((await listed.json()) as { data: { key: string }[] }).data.map((ns) => ns.key));
    const lost = [...model.acked].filter((key) => !keys.has(key));
    world.expect(lost, `writes answered 200 and lost in ${name}`).toEqual([]);
    for (const acked of model.tokens) world.expect((await api(world, 'auth', acked)).status, 'a token printed by kb serve token create').toBe(200);
    model.tainted = false;
  },
});

const write = (): Step => ({
  label: 'write',
  async run(world) {
    if (!world.server) return;
    const model = world.dirs.get(world.server.name) as DirModel;
    const key = `key-${world.counter++}`;
    const reply = await api(world, 'ns_create', model.apiToken as string, { key });
    world.expect([200, 503], `ns_create ${key}: ${reply.status === 200 || reply.status === 503 ? '' : await reply.text()}`).toContain(reply.status);
    if (reply.status === 200) model.acked.add(key);
    else world.log.push(`  503: ${await reply.text()}`);
  },
});

const stop = (signal: 'SIGKILL' | 'SIGTERM'): Step => ({
  label: signal === 'SIGKILL' ? 'kill -9' : 'SIGTERM',
  async run(world) {
    if (!world.server) return;
    const { process, name } = world.server;
    process.child.kill(signal);
    const exit = await process.exited;
    world.server = undefined;
    if (signal === 'SIGTERM') {
      world.expect(exit.code, process.stderr()).toBe(0);
      (world.dirs.get(name) as DirModel).clean = true;
    }
  },
});

const token = (index: number): Step => ({
  label: `token create(${index})`,
  async run(world) {
    const name = target(world, index);
    const model = world.dirs.get(name) as DirModel;
    const result = await runKb(['serve', 'token', 'create', '--org', 'local', '--data-dir', pathOf(world, name)], { env: world.env, timeoutMs: 60_000 });
    if (result.code === 0) {
      const created = result.stdout.trim().split('\n').pop() as string;
      model.tokens.add(created);
      // Into a dir with no database yet, the token command makes it: its token is the dir's, and the next start, which
      // finds a token, prints none of its own.
      model.apiToken ??= created;
      return;
    }
    world.log.push(`  token refused: ${result.stderr.slice(0, 300)}`);
    world.expect(model.tainted, `token create refused with no accident: ${result.stderr}`).toBe(true);
  },
});

const backup = (index: number): Step => ({
  label: `backup(${index})`,
  async run(world) {
    const name = pick(names(world), index);
    if (world.dirs.size >= 6 || !existsSync(fileOf(world, name, ''))) return;
    const model = world.dirs.get(name) as DirModel;
    const dest = `d${world.counter++}`;
    const result = await runKb(['serve', 'backup', pathOf(world, dest), '--data-dir', pathOf(world, name)], { env: world.env, timeoutMs: 60_000 });
    if (result.code === 0) {
      // A kb.db whose log was lost is copied as it is, saying so: the copy holds what it holds, which no model knows.
      if (/^Warning: .*not closed cleanly/m.test(result.stderr)) {
        world.expect(model.tainted, `backup warned with no accident: ${result.stderr}`).toBe(true);
        rmSync(pathOf(world, dest), { recursive: true, force: true });
        return;
      }
      world.dirs.set(dest, { ...copyModel(model, false), clean: true });
      return;
    }
    world.expect(model.tainted, `backup refused with no accident: ${result.stderr}`).toBe(true);
  },
});

/** The README's restore: the old data dir aside as a whole, then the backup's kb.db alone in a new one. */
const restore = (index: number, target: number): Step => ({
  label: `restore(${index} -> ${target})`,
  async run(world) {
    const from = pick(names(world), index);
    const to = pick(names(world), target);
    if (from === to || world.server?.name === to || world.server?.name === from || !existsSync(fileOf(world, from, ''))) return;
    // Copied first: a kb.db that is a symbolic link into the dir set aside would point nowhere after.
    const copy = join(world.root, `restore-${world.counter++}`);
    copyFileSync(fileOf(world, from, ''), copy);
    const aside = `d${world.counter++}`;
    renameSync(pathOf(world, to), pathOf(world, aside));
    world.dirs.set(aside, world.dirs.get(to) as DirModel);
    mkdirSync(pathOf(world, to), { mode: 0o700 });
    renameSync(copy, fileOf(world, to, ''));
    const source = world.dirs.get(from) as DirModel;
    // Only a cleanly stopped database is whole without its -wal: another must be refused or served whole.
    world.dirs.set(to, copyModel(source, !source.clean || source.tainted));
  },
});

const copyDir = (index: number, alone: boolean): Step => ({
  label: alone ? `copy kb.db alone(${index})` : `copy dir(${index})`,
  async run(world) {
    const from = pick(names(world), index);
    if (world.dirs.size >= 6 || world.server?.name === from || !existsSync(fileOf(world, from, ''))) return;
    const to = newDir(world);
    if (alone) copyFileSync(fileOf(world, from, ''), fileOf(world, to, ''));
    else cpSync(pathOf(world, from), pathOf(world, to), { recursive: true });
    const source = world.dirs.get(from) as DirModel;
    world.dirs.set(to, copyModel(source, source.tainted || (alone && !source.clean)));
  },
});

/** One file of a dir replaced by a copy of the same file of another dir (older, newer, of the same lineage or another). */
const copySidecar = (index: number, into: number, whichIndex: number): Step => ({
  label: `copy kb.db${pick(WHICH, whichIndex)}(${index} -> ${into})`,
  async run(world) {
    const which = pick(WHICH, whichIndex);
    const from = pick(names(world), index);
    const to = target(world, into);
    if (from === to || !existsSync(fileOf(world, from, which)) || sameFile(fileOf(world, from, which), fileOf(world, to, which))) return;
    const hadLog = existsSync(fileOf(world, to, '-wal')) || existsSync(fileOf(world, to, '-shm'));
    // The kb.db a server has open (at this name or another) is replaced by a rename, as a restore moved into place:
    // bytes written over an open kb.db are the one accident kb does not detect (docs/reliability.md; SQLite's section
    // 1.1, a rogue write). A copy of an older kb.db written over it, then its -wal moved, is served mixed with no word.
    // So is the -shm a server has mapped: written over in place, its wal-index changes under SQLite (short reads, and
    // SIGBUS while the copy has cut it short), the same rogue write.
    const open = (which === '' || which === '-shm') && world.server !== undefined && sameFile(fileOf(world, to, which), fileOf(world, world.server.name, which));
    // Any other file is written in place: every hard link of it gets the bytes too.
    const sharing = which === '' && !open ? names(world).filter((name) => name !== to && sameFile(fileOf(world, name, ''), fileOf(world, to, ''))) : [];
    if (open) {
      const copy = join(world.root, `replace-${world.counter++}`);
      copyFileSync(fileOf(world, from, which), copy);
      renameSync(copy, fileOf(world, to, which));
    } else {
      copyFileSync(fileOf(world, from, which), fileOf(world, to, which));
    }
    for (const name of [to, ...sharing]) {
      const hadItsLog = name === to ? hadLog : existsSync(fileOf(world, name, '-wal')) || existsSync(fileOf(world, name, '-shm'));
      (world.dirs.get(name) as DirModel).tainted = true;
      // kb.db replaced while stopped with no log beside it: a restore by hand, which brings the other database's data.
      if (which === '' && world.server?.name !== name && !hadItsLog) world.dirs.set(name, copyModel(world.dirs.get(from) as DirModel, true));
    }
  },
});

const link = (index: number, symbolic: boolean): Step => ({
  label: `${symbolic ? 'symlink' : 'hard link'} kb.db(${index})`,
  async run(world) {
    const from = pick(names(world), index);
    if (world.dirs.size >= 6 || !existsSync(fileOf(world, from, ''))) return;
    const to = newDir(world);
    if (symbolic) symlinkSync(fileOf(world, from, ''), fileOf(world, to, ''));
    else linkSync(fileOf(world, from, ''), fileOf(world, to, ''));
    const source = world.dirs.get(from) as DirModel;
    world.dirs.set(to, copyModel(source, true));
    if (!symbolic) source.tainted = true;
  },
});

/** kb.db, its -wal or -shm deleted, or moved aside in the same dir. */
const remove = (index: number, whichIndex: number, move: boolean): Step => ({
  label: `${move ? 'move' : 'delete'} kb.db${pick(WHICH, whichIndex)}(${index})`,
  async run(world) {
    const which = pick(WHICH, whichIndex);
    const name = target(world, index);
    const file = fileOf(world, name, which);
    if (!existsSync(file)) return;
    if (move) renameSync(file, `${file}.moved-${world.counter++}`);
    else rmSync(file);
    const model = world.dirs.get(name) as DirModel;
    model.tainted = true;
    // The last file of the database gone while stopped (kb.db, or a sidecar after kb.db went): nothing of it is left
    // to start from, and starting afresh is what was asked. A symlink counts, even one that points nowhere.
    const left = WHICH.some((suffix) => lstatSync(fileOf(world, name, suffix), { throwIfNoEntry: false }) !== undefined);
    if (world.server?.name !== name && !left) world.dirs.set(name, { ...fresh(), tainted: true });
  },
});

/** A failing sequence is printed as its steps' labels. */
const labelled = (step: Step): Step => Object.assign(step, { [fc.toStringMethod]: () => step.label });

const stepArb: fc.Arbitrary<Step> = fc
  .oneof(
  { arbitrary: fc.constant(null).map(write), weight: 6 },
  { arbitrary: fc.nat().map(start), weight: 4 },
  { arbitrary: fc.constant('SIGKILL' as const).map(stop), weight: 2 },
  { arbitrary: fc.constant('SIGTERM' as const).map(stop), weight: 2 },
  { arbitrary: fc.nat().map(token), weight: 2 },
  { arbitrary: fc.nat().map(backup), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => restore(a, b)), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([a, alone]) => copyDir(a, alone)), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.nat()).map(([a, b, w]) => copySidecar(a, b, w)), weight: 3 },
  { arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([a, symbolic]) => link(a, symbolic)), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.boolean()).map(([a, w, move]) => remove(a, w, move)), weight: 5 },
  )
  .map(labelled);

/** A sequence always begins with a start and a write, and ends with a SIGTERM and a start of every dir: the final check. */
async function play(steps: Step[], expect: ExpectStatic): Promise<void> {
  const world: World = {
    root: tempDir('kb-accidents-'),
    env: isolatedEnv(),
    dirs: new Map(),
    server: undefined,
    counter: 0,
    expect,
    log: [],
  };
  mkdirSync(pathOf(world, 'a'), { mode: 0o700 });
  world.dirs.set('a', fresh());
  const all = [start(0), write(), ...steps];
  try {
    for (const step of all) {
      world.log.push(step.label);
      await step.run(world);
    }
    await stop('SIGKILL').run(world);
    for (let i = 0; i < world.dirs.size; i++) {
      world.log.push(`final start(${i})`);
      await start(i).run(world);
      await stop('SIGTERM').run(world);
    }
  } catch (error) {
    (error as Error).message += `\nsteps:\n${world.log.join('\n')}`;
    throw error;
  } finally {
    world.server?.process.child.kill('SIGKILL');
    await world.server?.process.exited;
    rmSync(world.root, { recursive: true, force: true });
  }
}

/** Sequences the model found failing, which the first shard plays first on every run (not when replaying one). */
const FOUND: Step[][] = [
  // Seed 2041704294, path 26: a -shm deleted after kb.db was moved, while stopped, leaves an empty dir that starts afresh.
  [
    start(1675636807),
    link(1352520238, true),
    copySidecar(181669486, 883830179, 2),
    remove(639499751, 0, true),
    remove(1153557083, 1, true),
    write(),
    stop('SIGTERM'),
    write(),
    remove(1327162983, 2, false),
    write(),
  ],
];

/**
 * The sequences are drawn by SHARDS properties at once, each with a seed of its own: a sequence spends most of its
 * time waiting on the processes it started, so several keep the machine busy where one would leave it idle. A failure
 * prints its seed and path; KB_ACCIDENT_SEED and KB_ACCIDENT_PATH replay it, alone.
 */
const REPLAY = process.env.KB_ACCIDENT_SEED === undefined ? undefined : { seed: Number(process.env.KB_ACCIDENT_SEED), path: process.env.KB_ACCIDENT_PATH };
const SHARDS = REPLAY === undefined ? Math.min(4, RUNS) : 1;
const firstSeed = REPLAY?.seed ?? randomInt(2 ** 31);
const shards = Array.from({ length: SHARDS }, (_, shard) => ({
  shard,
  seed: firstSeed + shard,
  runs: Math.floor(RUNS / SHARDS) + (shard < RUNS % SHARDS ? 1 : 0),
}));

describe.concurrent('the data dir under accidents: a model of every write answered 200', () => {
  it.for(shards)(
    `keeps every acknowledged write and token, or refuses by name changing nothing (sequences $runs, seed $seed)`,
    { timeout: 60_000 + Math.ceil(RUNS / SHARDS) * 60_000 },
    async ({ shard, seed, runs }, { expect }) => {
      await fc.assert(fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 12 }), (steps) => play(steps, expect)), {
        numRuns: runs,
        endOnFailure: true,
        seed,
        ...(REPLAY?.path === undefined ? {} : { path: REPLAY.path }),
        ...(REPLAY === undefined && shard === 0 ? { examples: FOUND.map((steps): [Step[]] => [steps.map(labelled)]) } : {}),
      });
    },
  );
});
