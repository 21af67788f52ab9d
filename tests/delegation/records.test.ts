// Every task is a delegation record in the DelegationStore: created pending with its
// deadline, in_progress while it runs, and final with its result. A store failure is
// reported, never fatal to the call.
import { describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { MemoryDelegationStore } from '../../src/delegation/memory-store.js';
import type {
  DelegationRecord,
  DelegationStore,
  StageUpdate,
} from '../../src/delegation/record.js';
import { GENERAL_PURPOSE } from '../../src/delegation/subagent.js';
import { ScriptedLLM, VirtualClock } from '../../src/testing/index.js';
import { Lookups, recordEvents, researcher, researchModel } from './helpers.js';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const sec = (ms: number) => Math.floor(ms / 1000);

describe('task records', () => {
  it('move pending → in_progress → done with the result, on the clock', async () => {
    const clock = new VirtualClock(T0);
    const store = new MemoryDelegationStore({ now: () => clock.now() });
    let manager!: TaskManager;
    const lookups = new Lookups();
    manager = new TaskManager({
      clock,
      store,
      namespace: 'call7',
      agentId: 'front-desk',
      timeoutMs: 60_000,
      subagents: [researcher(() => manager, { delayMs: 2_000, lookups })],
      llm: researchModel('Thirty days.'),
    });
    const task = manager.start({
      subagentType: 'researcher',
      description: 'Refund window',
      prompt: 'How long?',
    });
    await manager.flush();
    expect(await store.get('call7:t1')).toEqual({
      delegation_id: 'call7:t1',
      task_id: 'call7',
      sub_task_id: 't1',
      workflow_level: 1,
      delegation_type: 'subagent',
      sender_subject_id: 'front-desk',
      target_subject_id: 'researcher',
      status: { execution: { state: 'in_progress', time: sec(T0), deadline: sec(T0 + 60_000) } },
      sub_task_data: {
        description: 'Refund window',
        prompt: 'How long?',
        mode: 'background',
        origin: 'host',
        conversation_id: 'c1',
      },
    });
    await lookups.reached(1);
    await clock.advance(2_000);
    await manager.wait(task.id);
    await manager.flush();
    const done = await store.get('call7:t1');
    expect(done?.status.execution).toEqual({
      state: 'done',
      time: sec(T0 + 2_000),
      deadline: sec(T0 + 60_000),
      delegation_result: 'Thirty days.',
    });
    const page = await store.query({ 'status.execution.state': 'done' });
    expect(page.items.map((r) => r.delegation_id)).toEqual(['call7:t1']);
    await manager.close();
  });

  it('exists in the store, in progress, as soon as start returns', async () => {
    const store = new MemoryDelegationStore();
    const manager: TaskManager = new TaskManager({
      store,
      namespace: 'call8',
      subagents: [researcher(() => manager, { delayMs: 0 })],
      llm: researchModel('Thirty days.'),
    });
    const task = manager.start({ subagentType: 'researcher', description: 'Refund window' });
    // No flush: the first write of a task is issued synchronously.
    expect((await store.get(`call8:${task.id}`))?.status.execution?.state).toBe('in_progress');
    expect((await manager.wait(task.id)).status).toBe('completed');
    await manager.flush();
    expect((await store.get(`call8:${task.id}`))?.status.execution?.state).toBe('done');
    await manager.close();
  });

  it('records a nested task one level down, sent by its parent sub-agent', async () => {
    const store = new MemoryDelegationStore();
    const sub = new ScriptedLLM({
      respond: (req) =>
        req.lastUserText === 'Top' && !req.lastToolOutput
          ? {
              toolCalls: [
                { name: 'task', args: { subagent_type: GENERAL_PURPOSE, description: 'Inner' } },
              ],
            }
          : { say: 'ok' },
    });
    const manager = new TaskManager({
      store,
      llm: sub,
      namespace: 'n1',
      clock: new VirtualClock(),
    });
    const top = manager.start({
      subagentType: GENERAL_PURPOSE,
      description: 'Outer',
      prompt: 'Top',
    });
    await manager.wait(top.id);
    await manager.flush();
    const inner = await store.get('n1:t2');
    expect(inner).toMatchObject({
      task_id: 'n1:t1',
      workflow_level: 2,
      sender_subject_id: `subagent:${GENERAL_PURPOSE}`,
      target_subject_id: GENERAL_PURPOSE,
      sub_task_data: { parent_task: 't1', origin: 'subagent' },
    });
    expect(inner?.status.execution?.state).toBe('done');
    await manager.close();
  });

  it('a store written in plain JavaScript that answers synchronously still records every task', async () => {
    const inner = new MemoryDelegationStore();
    const syncAnswers = {
      create: (record: DelegationRecord) => {
        void inner.create(record);
        return record;
      },
      setStage: (id: string, stage: string, update: StageUpdate) => {
        void inner.setStage(id, stage, update);
        return undefined;
      },
      close: () => inner.close(),
    };
    const store = Object.assign(Object.create(inner) as DelegationStore, syncAnswers);
    const manager: TaskManager = new TaskManager({
      store,
      namespace: 'sync',
      subagents: [researcher(() => manager, { delayMs: 0 })],
      llm: researchModel('Fine.'),
    });
    const errors: unknown[] = [];
    manager.subscribe((e) => {
      if (e.type === 'store_error') errors.push(e.error);
    });
    const task = manager.start({ subagentType: 'researcher', description: 'Quick one' });
    expect((await manager.wait(task.id)).status).toBe('completed');
    await manager.flush();
    expect(errors).toEqual([]);
    expect((await inner.get('sync:t1'))?.status.execution?.state).toBe('done');
    await manager.close();
  });

  it('close gives up on a store that stops answering after 10 s, reporting the lost write', async () => {
    const clock = new VirtualClock();
    const inner = new MemoryDelegationStore();
    const silentOnFinish = Object.assign(Object.create(inner) as DelegationStore, {
      create: (record: DelegationRecord) => inner.create(record),
      setStage: () => new Promise<DelegationRecord>(() => {}),
      close: () => inner.close(),
    });
    const manager: TaskManager = new TaskManager({
      store: silentOnFinish,
      clock,
      namespace: 'silent',
      subagents: [researcher(() => manager, { delayMs: 0 })],
      llm: researchModel('Fine.'),
    });
    const errors: Array<{ taskId: string; error: unknown }> = [];
    manager.subscribe((e) => {
      if (e.type === 'store_error') errors.push({ taskId: e.taskId, error: e.error });
    });
    const task = manager.start({ subagentType: 'researcher', description: 'Quick one' });
    expect((await manager.wait(task.id)).status).toBe('completed');
    let closed = false;
    const closing = manager.close().then(() => {
      closed = true;
    });
    for (let i = 0; i < 3 && !closed; i++) await clock.advance(10_000);
    await closing;
    expect(closed).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.taskId).toBe(task.id);
    expect(String(errors[0]?.error)).toMatch(/did not confirm a record write within 10 s/);
    expect((await inner.get('silent:t1'))?.status.execution?.state).toBe('in_progress');
  });

  it('a failing store is reported as store_error events; the task still completes', async () => {
    const broken: DelegationStore = Object.assign(new MemoryDelegationStore(), {
      create: async () => {
        throw new Error('disk full');
      },
    });
    let manager!: TaskManager;
    manager = new TaskManager({
      store: broken,
      clock: new VirtualClock(),
      subagents: [researcher(() => manager, { delayMs: 0 })],
      llm: researchModel('Fine.'),
    });
    const events = recordEvents(manager);
    const task = manager.start({ subagentType: 'researcher', description: 'Anything' });
    expect((await manager.wait(task.id)).status).toBe('completed');
    await manager.flush();
    const errors = events.filter((e) => e.type === 'store_error');
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0]?.type === 'store_error' && errors[0].error)).toContain('disk full');
    await manager.close();
  });
});
