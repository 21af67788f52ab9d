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
