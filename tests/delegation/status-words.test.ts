// One word for a task that ended well: `completed` inside (snapshots, filters, what the model
// reads), `done` only on the wire (the durable record's state), translated in one place; a
// JavaScript caller still filtering by the old word gets its tasks and a deprecation notice.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { recordState } from '../../src/delegation/task-record.js';
import type { TaskStatus } from '../../src/delegation/types.js';
import { VirtualClock } from '../../src/testing/index.js';
import { Lookups, researcher, researchModel } from './helpers.js';

let manager: TaskManager | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await manager?.close();
  manager = undefined;
});

describe('task status words', () => {
  it('a task that ended well is completed; its record on the wire says done', () => {
    const wire: Record<TaskStatus, string> = {
      queued: 'pending',
      running: 'in_progress',
      completed: 'done',
      failed: 'failed',
      cancelled: 'cancelled',
      timeout: 'expired',
    };
    for (const [status, state] of Object.entries(wire)) {
      expect(recordState(status as TaskStatus)).toBe(state);
    }
  });

  it("list({ status: 'done' }) from JavaScript finds the completed tasks, with one deprecation notice", async () => {
    const clock = new VirtualClock();
    const lookups = new Lookups();
    const m: TaskManager = new TaskManager({
      clock,
      subagents: [researcher(() => m, { delayMs: 1_000, lookups })],
      llm: researchModel('Found it.'),
    });
    manager = m;
    const finished = m.start({ subagentType: 'researcher', description: 'Look it up' });
    await lookups.reached(1);
    await clock.advance(1_000);
    expect((await m.wait(finished.id)).status).toBe('completed');
    const running = m.start({ subagentType: 'researcher', description: 'Look again' });
    await lookups.reached(2);

    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    // What a JavaScript caller (no type check) may still pass.
    const oldWord = 'done' as unknown as TaskStatus;
    expect(m.list({ status: oldWord }).map((t) => t.id)).toEqual([finished.id]);
    expect(m.list({ status: [oldWord, 'running'] }).map((t) => t.id)).toEqual([
      finished.id,
      running.id,
    ]);
    expect(m.list({ status: 'completed' }).map((t) => t.id)).toEqual([finished.id]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      "TaskManager.list({ status: 'done' }): the task status 'done' is now 'completed'; write 'completed' ('done' is still read, for now).",
      { type: 'DeprecationWarning', code: 'TASKLINE_TASK_STATUS_DONE' },
    );
    await clock.advance(1_000);
    await m.wait(running.id);
  });
});
