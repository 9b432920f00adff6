import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, killedAfterEach, runKb, startServe } from '../helpers/cli.js';
import { createTestDatabase, droppedAfterAll, ENGINE } from '../helpers/database.js';
import { acknowledged, check, type Op } from '../helpers/history.js';

/** `npm test` runs 10 cycles; `npm run test:torture` sets KB_CRASH_CYCLES=200. */
const CYCLES = Number(process.env.KB_CRASH_CYCLES ?? 10);
const WRITERS = 32;

const running = killedAfterEach();
const databases = droppedAfterAll();

describe(`durability under kill -9 (${ENGINE})`, () => {
  it(`loses no acknowledged create, update or delete, keyed or not, through ${CYCLES} crashes under ${WRITERS} concurrent writers`, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = isolatedEnv(database.env);
    const token = (await runKb(['serve', 'token', 'create', '--org', 'crash'], { env })).stdout.trim();
    const history: Op[] = [];

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const server = await startServe([], env);
      running.push(server);
      let stop = false;
      const writers = Array.from({ length: WRITERS }, async (_, writer) => {
        const mine: string[] = [];
        // Odd writers send every write with an Idempotency-Key, as the CLI does; even ones send none.
        const keyed = writer % 2 === 1;
        const send = async (op: Op, method: string, path: string, body: unknown) => {
          const idempotencyKey = keyed ? `${op.kind}-${op.key}-${history.length}` : undefined;
          op.request = { method, path, body, idempotencyKey };
          history.push(op);
          op.acked = await acknowledged(server.url, token, method, path, body, idempotencyKey);
        };
        for (let n = 0; !stop; n++) {
          const roll = Math.random();
          const target = mine[Math.floor(Math.random() * mine.length)];
          if (roll < 0.6 || target === undefined) {
            const key = `c${cycle}-w${writer}-n${n}`;
            const op: Op = { kind: 'create', key, acked: false };
            await send(op, 'POST', '/base_create', { namespace: 'crash', key });
            if (op.acked) mine.push(key);
          } else if (roll < 0.85) {
            const op: Op = { kind: 'update', key: target, value: `v${cycle}-${n}`, acked: false };
            await send(op, 'POST', '/base_update', { namespace: 'crash', base: target, data: { description: op.value } });
          } else {
            mine.splice(mine.indexOf(target), 1);
            await send({ kind: 'delete', key: target, acked: false }, 'DELETE', '/base_delete', { namespace: 'crash', base: target });
          }
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 350));
      server.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await server.exited;

      if (ENGINE === 'sqlite') {
        const db = new Database(join(env.KB_DATA_DIR as string, 'kb.db'), { readonly: true });
        try {
          expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        } finally {
          db.close();
        }
      }
    }

    const server = await startServe([], env);
    running.push(server);
    const response = await fetch(`${server.url}/v1/base_list?namespace=crash`, { headers: { authorization: `Bearer ${token}` } });
    const bases = ((await response.json()) as { data: Array<{ key: string; description: string | null }> }).data;
    const stored = new Map(bases.map((base) => [base.key, base.description]));
    const acked = history.filter((op) => op.acked);
    expect(acked.filter((op) => op.kind === 'create').length).toBeGreaterThan(CYCLES * 10);
    expect(acked.some((op) => op.kind === 'delete')).toBe(true);
    expect(acked.some((op) => op.kind === 'update')).toBe(true);
    expect(check(history, stored)).toEqual([]);

    // A keyed write acknowledged before a crash is replayed after it: its repeat gets the first reply, not a rerun.
    const keyedAcked = acked.filter((op) => op.request?.idempotencyKey !== undefined);
    expect(keyedAcked.length).toBeGreaterThan(CYCLES * 5);
    for (const op of keyedAcked.filter((_, i) => i % Math.ceil(keyedAcked.length / 50) === 0)) {
      const { method, path, body, idempotencyKey } = op.request as Required<NonNullable<Op['request']>>;
      const repeat = await fetch(`${server.url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
      });
      expect(`${op.kind} ${op.key}: ${repeat.status} ${repeat.headers.get('idempotent-replayed')}`).toBe(`${op.kind} ${op.key}: 200 true`);
    }
    console.info(
      `crash test (${ENGINE}): ${CYCLES} kill -9 cycles, ${history.length} operations, ${acked.length} acknowledged ` +
        `(${acked.filter((op) => op.kind === 'create').length} creates, ${acked.filter((op) => op.kind === 'update').length} updates, ` +
        `${acked.filter((op) => op.kind === 'delete').length} deletes), all present as acknowledged`,
    );
  }, 60_000 + CYCLES * 5_000);
});
