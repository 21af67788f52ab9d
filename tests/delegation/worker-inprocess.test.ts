import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTasklineError } from '../../src/core/errors.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { createDelegationSender, type DelegationSender } from '../../src/service/bus/sender.js';
import { ResultSchemaRegistry } from '../../src/service/constraints.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import {
  type DelegatedTask,
  type DelegationWorker,
  serveDelegations,
} from '../../src/service/worker.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A promise with its resolve function, for handlers a test releases by hand. */
function gate<T = void>() {
  let open: (v: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    open = r;
  });
  return { promise, open };
}

describe('serveDelegations + createDelegationSender (SQLite, in-process bus)', () => {
  let store: SqliteDelegationStore;
  let bus: InProcessDelegationBus;
  let clock: VirtualClock;
  let sender: DelegationSender;
  let workers: DelegationWorker[];

  beforeEach(async () => {
    clock = new VirtualClock();
    store = await SqliteDelegationStore.open({ path: join(dir, `w-${n++}.db`), clock });
    bus = new InProcessDelegationBus();
    sender = await createDelegationSender({ agentId: 'voice-bot', bus, store, clock });
    workers = [];
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.close({ abort: true })));
    await sender.close();
    await bus.close();
    await store.close();
  });

  const serve = async (opts: Partial<Parameters<typeof serveDelegations>[0]> = {}) => {
    const worker = await serveDelegations({
      agentId: 'back-office',
      bus,
      store,
      clock,
      handler: ({ data }) => ({ balance: 42, account: data.account }),
      ...opts,
    });
    workers.push(worker);
    return worker;
  };

  it('executes a delegated sub-task and the sender gets the result', async () => {
    const seen: DelegatedTask[] = [];
    await serve({
      handler: (task) => {
        seen.push(task);
        return { balance: 42, account: task.data.account };
      },
    });
    const heard: string[] = [];
    sender.onResult((r) => heard.push(`${r.delegation_id}:${r.state}`));
    const record = await sender.delegate({
      delegation_id: 'd-1',
      target: 'back-office',
      delegation_type: 'lookup',
      sub_task_data: { account: 'A-17' },
      deadlineMs: 60_000,
    });
    expect(record.status.execution?.state).toBe('pending');
    const result = await sender.awaitResult('d-1');
    expect(result).toMatchObject({
      delegation_id: 'd-1',
      stage: 'execution',
      state: 'done',
      result: { balance: 42, account: 'A-17' },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.record.status.execution?.state).toBe('in_progress');
    expect(seen[0]?.attempt).toBe(1);
    expect((await store.get('d-1'))?.status.execution?.delegation_result).toEqual({
      balance: 42,
      account: 'A-17',
    });
    await bus.idle();
    expect(heard).toEqual(['d-1:done']);
  });

  it('a handler that throws fails the stage with its message', async () => {
    await serve({
      handler: () => {
        throw new Error('account A-17 is locked');
      },
    });
    await sender.delegate({
      delegation_id: 'd-2',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    const result = await sender.awaitResult('d-2');
    expect(result.state).toBe('failed');
    expect(result.result).toBe('account A-17 is locked');
  });

  it('checks results against the schema of the delegation type', async () => {
    const schemas = new ResultSchemaRegistry().register(
      'lookup',
      z.object({ balance: z.number(), currency: z.string().default('EUR') }),
    );
    let answer: unknown = { balance: 'lots' };
    await serve({ schemas, handler: () => answer });
    await sender.delegate({
      delegation_id: 'd-3',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    const bad = await sender.awaitResult('d-3');
    expect(bad.state).toBe('failed');
    expect(bad.result).toMatch(/^invalid_result: .*balance/s);
    answer = { balance: 10 };
    await sender.delegate({
      delegation_id: 'd-4',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    const good = await sender.awaitResult('d-4');
    expect(good).toMatchObject({ state: 'done', result: { balance: 10, currency: 'EUR' } });
  });

  it('a cancel aborts the running handler and nothing is written over it', async () => {
    const started = gate();
    let aborted: unknown;
    await serve({
      handler: ({ signal }) =>
        new Promise((_resolve, reject) => {
          started.open();
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(signal.reason);
          });
        }),
    });
    await sender.delegate({
      delegation_id: 'd-5',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    await started.promise;
    await store.setStage('d-5', 'execution', { state: 'cancelled' });
    const result = await sender.awaitResult('d-5');
    expect(result.state).toBe('cancelled');
    await bus.idle();
    expect(isTasklineError(aborted, 'cancelled')).toBe(true);
    expect((await store.get('d-5'))?.status.execution?.state).toBe('cancelled');
  });

  it('past the deadline the handler is aborted and the sender hears "expired"', async () => {
    const started = gate();
    await serve({
      handler: ({ signal }) =>
        new Promise((_resolve, reject) => {
          started.open();
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    await sender.delegate({
      delegation_id: 'd-6',
      target: 'back-office',
      delegation_type: 'lookup',
      deadlineMs: 5_000,
    });
    await started.promise;
    const outcome = sender.awaitResult('d-6');
    await clock.advance(5_001);
    expect((await outcome).state).toBe('expired');
  });

  it('re-executes a task found in_progress (its worker crashed) and ignores finished or foreign ones', async () => {
    const ran: string[] = [];
    await serve({
      handler: ({ record }) => {
        ran.push(record.delegation_id);
        return 'ok';
      },
    });
    const mk = (id: string, state: 'in_progress' | 'done', target = 'back-office') =>
      store.create({
        delegation_id: id,
        task_id: 't',
        sub_task_id: id,
        workflow_level: 0,
        delegation_type: 'lookup',
        sender_subject_id: 'voice-bot',
        target_subject_id: target,
        status: { execution: { state, time: Math.floor(clock.now() / 1000) } },
        sub_task_data: {},
      });
    await mk('crashed', 'in_progress');
    await mk('finished', 'done');
    await mk('foreign', 'in_progress', 'someone-else');
    expect((await sender.awaitResult('crashed')).result).toBe('ok');
    await bus.idle();
    expect(ran).toEqual(['crashed']);
  });

  it('a worker shut down mid-task leaves the event for the next worker', async () => {
    const started = gate();
    const first = await serve({
      handler: ({ signal }) =>
        new Promise((_resolve, reject) => {
          started.open();
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    await sender.delegate({
      delegation_id: 'd-7',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    await started.promise;
    await first.close({ abort: true });
    expect((await store.get('d-7'))?.status.execution?.state).toBe('in_progress');
    await serve({ handler: ({ attempt }) => ({ attempt }) });
    const result = await sender.awaitResult('d-7');
    expect(result).toMatchObject({ state: 'done', result: { attempt: 2 } });
  });

  it('awaitResult resolves from the store when the result is already there, and times out on the clock', async () => {
    await serve();
    await sender.delegate({
      delegation_id: 'd-8',
      target: 'back-office',
      delegation_type: 'lookup',
    });
    await sender.awaitResult('d-8');
    expect((await sender.awaitResult('d-8')).state).toBe('done');
    await store.create({
      delegation_id: 'd-9',
      task_id: 't',
      sub_task_id: 's',
      workflow_level: 0,
      delegation_type: 'lookup',
      sender_subject_id: 'voice-bot',
      target_subject_id: 'nobody-home',
      status: { execution: { state: 'pending', time: Math.floor(clock.now() / 1000) } },
      sub_task_data: {},
    });
    const waiting = sender.awaitResult('d-9', { timeoutMs: 2_000 }).catch((e: unknown) => e);
    await clock.advance(2_000);
    const error = await waiting;
    expect(isTasklineError(error, 'timeout')).toBe(true);
    const missing = await sender.awaitResult('nope').catch((e: unknown) => e);
    expect(isTasklineError(missing, 'not_found')).toBe(true);
  });
});
