import { describe, expect, it } from 'vitest';
import { check, type Op } from '../helpers/history.js';

/** The crash test's checker must be able to fail: it is tested on histories with known faults. */
describe('the history checker of the crash test', () => {
  const created = (key: string, acked = true): Op => ({ kind: 'create', key, acked });
  it('accepts a state that matches the history', () => {
    const history: Op[] = [created('a'), { kind: 'update', key: 'a', value: 'x', acked: true }, created('b'), { kind: 'delete', key: 'b', acked: true }, created('c', false)];
    expect(check(history, new Map([['a', 'x']]))).toEqual([]);
    expect(check(history, new Map([['a', 'x'], ['c', null]]))).toEqual([]);
  });
  it('reports a lost create, a resurrected delete and a lost update', () => {
    const history: Op[] = [created('a'), created('b'), { kind: 'delete', key: 'b', acked: true }, created('c'), { kind: 'update', key: 'c', value: 'new', acked: true }];
    expect(check(history, new Map([['b', null], ['c', null]]))).toEqual([
      'a: acknowledged create, missing',
      'b: acknowledged delete, still present',
      'c: description null not in new',
    ]);
  });
  it('allows an unacknowledged update after the last acknowledged one to have landed, but not an older value', () => {
    const history: Op[] = [created('a'), { kind: 'update', key: 'a', value: 'v1', acked: true }, { kind: 'update', key: 'a', value: 'v2', acked: true }, { kind: 'update', key: 'a', value: 'v3', acked: false }];
    expect(check(history, new Map([['a', 'v3']]))).toEqual([]);
    expect(check(history, new Map([['a', 'v1']]))).toHaveLength(1);
  });
});
