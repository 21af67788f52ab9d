// The in-memory DelegationStore (the TaskManager's default) through the shared store
// contract, plus what is particular to it: private copies in, read-only records out.
import { describe, expect, it } from 'vitest';
import { MemoryDelegationStore } from '../../src/delegation/memory-store.js';
import { describeDelegationStoreSuite, makeRecord } from './store-suite.js';

describeDelegationStoreSuite(
  'memory',
  ({ clock }) => new MemoryDelegationStore({ now: () => clock.now() }),
);

describe('MemoryDelegationStore', () => {
  it('keeps its own copy of caller data and hands out read-only records', async () => {
    const store = new MemoryDelegationStore();
    const data = { account: 'A-17', items: [1, 2] };
    const result = { balance: 42 };
    await store.create(makeRecord('m-1', { sub_task_data: data }));
    await store.setStage('m-1', 'execution', { state: 'done', delegation_result: result });
    data.items.push(3);
    result.balance = 0;
    const record = await store.get('m-1');
    expect(record?.sub_task_data).toEqual({ account: 'A-17', items: [1, 2] });
    expect(record?.status.execution?.delegation_result).toEqual({ balance: 42 });
    expect(Object.isFrozen(record)).toBe(true);
    const items = record?.sub_task_data.items as number[];
    expect(() => items.push(4)).toThrow(TypeError);
    await store.close();
  });

  it('copies flat data exactly as JSON would, own "__proto__" key and all', async () => {
    const store = new MemoryDelegationStore();
    const symbol = Symbol('hidden');
    const withToJson = { a: 1 };
    Object.defineProperty(withToJson, 'toJSON', { value: () => ({ b: 2 }) });
    const cases: Array<Record<string | symbol, unknown>> = [
      { text: 'a', n: 1.5, yes: true, none: null },
      JSON.parse('{"__proto__": "own key", "x": 1}') as Record<string, unknown>,
      { zero: -0, big: 1e308 },
      { inf: Number.POSITIVE_INFINITY, nan: Number.NaN, gone: undefined },
      { [symbol]: 'not JSON', kept: 'yes' },
      { nested: { deep: [1, { x: 2 }] } },
      withToJson,
    ];
    for (const [i, data] of cases.entries()) {
      const stored = await store.create(makeRecord(`flat-${i}`, { sub_task_data: data }));
      const viaJson = JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
      expect(stored.sub_task_data, `case ${i}`).toStrictEqual(viaJson);
      expect(Object.getPrototypeOf(stored.sub_task_data)).toBe(Object.prototype);
      expect(Object.getOwnPropertySymbols(stored.sub_task_data)).toEqual([]);
      expect(Object.isFrozen(stored.sub_task_data)).toBe(true);
    }
    // An enumerable key inherited from a polluted Object.prototype is not JSON's either.
    Object.defineProperty(Object.prototype, 'polluted', {
      value: 'no',
      enumerable: true,
      configurable: true,
    });
    let polluted: Promise<unknown>;
    try {
      polluted = store.create(makeRecord('flat-polluted', { sub_task_data: { own: 'yes' } }));
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    await polluted;
    expect(Object.keys((await store.get('flat-polluted'))?.sub_task_data ?? {})).toEqual(['own']);
    const own = (await store.get('flat-1'))?.sub_task_data;
    expect(Object.hasOwn(own ?? {}, '__proto__')).toBe(true);
    expect(Object.is((await store.get('flat-2'))?.sub_task_data.zero, 0)).toBe(true);
    await store.close();
  });

  it('refuses data JSON cannot hold, and everything after close', async () => {
    const store = new MemoryDelegationStore();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(store.create(makeRecord('m-2', { sub_task_data: cyclic }))).rejects.toThrow(
      /plain JSON data|nested deeper/,
    );
    await store.close();
    await expect(store.get('m-2')).rejects.toThrow(/closed/);
  });
});
