// TaskManager options grouped by concern (turn, limits, delivery, records); the flat
// spellings the docs showed still work, and every bad number names its option and range.
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { TaskManager, type TaskManagerOptions } from '../../src/delegation/manager.js';
import { MemoryDelegationStore } from '../../src/delegation/memory-store.js';
import { VirtualClock } from '../../src/testing/index.js';
import { Lookups, researcher, researchModel } from './helpers.js';

let manager: TaskManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

function make(options: Partial<TaskManagerOptions>) {
  const clock = new VirtualClock();
  const lookups = new Lookups();
  const m: TaskManager = new TaskManager({
    clock,
    subagents: [researcher(() => m, { delayMs: 5_000, lookups })],
    llm: researchModel('Found it.'),
    ...options,
  });
  manager = m;
  return m;
}

function error(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return isTasklineError(err) ? err : { message: String(err) };
  }
  return { message: 'no error' };
}

const research = { subagentType: 'researcher', description: 'Look it up' };

describe('TaskManager options by concern', () => {
  it('limits.maxParallel and limits.queueLimit cap the tasks as the flat spellings do', () => {
    for (const options of [
      { limits: { maxParallel: 1, queueLimit: 0 } },
      { maxParallel: 1, queueLimit: 0 },
    ]) {
      const m = make(options);
      expect(m.start(research).status).toBe('running');
      expect(error(() => m.start(research))).toMatchObject({ code: 'limit_exceeded' });
    }
  });

  it('records.store and records.namespace are where the records go', async () => {
    const clock = new VirtualClock();
    const store = new MemoryDelegationStore({ now: () => clock.now() });
    const m = make({ clock, records: { store, namespace: 'grp' } });
    expect(m.store).toBe(store);
    expect(m.namespace).toBe('grp');
    const task = m.start(research);
    await m.flush();
    expect((await store.get(`grp:${task.id}`))?.delegation_id).toBe(`grp:${task.id}`);
  });

  it('refuses an option given twice, grouped and flat, naming both', () => {
    expect(error(() => make({ limits: { timeoutMs: 1_000 }, timeoutMs: 2_000 }))).toMatchObject({
      code: 'invalid_argument',
      message:
        'timeoutMs is given twice (as limits.timeoutMs and as timeoutMs); give it once, in limits.',
    });
  });

  it('names the option and its accepted range for a bad number, grouped or flat', () => {
    expect(error(() => make({ limits: { maxParallel: 0 } }))).toMatchObject({
      code: 'invalid_argument',
      message: 'maxParallel must be a whole number of at least 1 (got 0).',
    });
    expect(error(() => make({ delivery: { coalesceMs: Number.NaN } }))).toMatchObject({
      code: 'invalid_argument',
      message: 'coalesceMs must be between 0 and 2147483647 ms (got NaN).',
    });
    expect(error(() => make({ turn: { inlineWindowMs: -1 } })).message).toBe(
      'inlineWindowMs must be between 0 and 2147483647 ms (got -1).',
    );
    // 30 days: past Node's longest timer, which would fire at once and fail every task.
    expect(error(() => make({ limits: { timeoutMs: 2_592_000_000 } })).message).toBe(
      'timeoutMs must be between 1 and 2147483647 ms (got 2592000000).',
    );
    expect(error(() => make({ summaryChars: 5 })).message).toBe(
      'summaryChars must be a whole number of at least 20 (got 5).',
    );
    expect(error(() => make({ delivery: { deliverAt: 'never' as never } }))).toMatchObject({
      code: 'invalid_argument',
      message: 'deliverAt must be one of step, idle, interrupt, got "never".',
    });
  });
});
