// Caps with clear errors (parallel + queue, depth, model override) and resuming a
// sub-agent's conversation by task_id. Host API on the virtual clock; no call needed.
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { TaskManager, type TaskManagerOptions } from '../../src/delegation/manager.js';
import { GENERAL_PURPOSE } from '../../src/delegation/subagent.js';
import { ScriptedLLM, SimulatedCaller, VirtualClock } from '../../src/testing/index.js';
import { Desk, Lookups, researcher, researchModel, taskCall } from './helpers.js';

let manager: TaskManager | undefined;
let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await manager?.close();
  manager = undefined;
});

function make(options: Partial<TaskManagerOptions> = {}, delayMs = 5_000) {
  const clock = new VirtualClock();
  const lookups = new Lookups();
  const m: TaskManager = new TaskManager({
    clock,
    subagents: [researcher(() => m, { delayMs, lookups })],
    llm: researchModel('Found it.'),
    ...options,
  });
  manager = m;
  return { manager: m, clock, lookups };
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isTasklineError(err) ? err.code : String(err);
  }
  return undefined;
}

const research = { subagentType: 'researcher', description: 'Look it up' };

describe('caps', () => {
  it('maxParallel queues up to queueLimit, refuses more, and runs the queue in order', async () => {
    const { manager, clock, lookups } = make({ maxParallel: 1, queueLimit: 1 });
    const a = manager.start(research);
    const b = manager.start(research);
    expect([a.status, b.status]).toEqual(['running', 'queued']);
    let message = '';
    try {
      manager.start(research);
    } catch (err) {
      expect(isTasklineError(err, 'limit_exceeded')).toBe(true);
      message = (err as Error).message;
    }
    expect(message).toContain(
      '1 task(s) are running and 1 are waiting (maxParallel 1, queueLimit 1)',
    );
    await lookups.reached(1);
    await clock.advance(5_000);
    expect((await manager.wait(a.id)).status).toBe('completed');
    expect(manager.get(b.id)?.status).toBe('running');
    await lookups.reached(2);
    await clock.advance(5_000);
    expect((await manager.wait(b.id)).status).toBe('completed');
  });

  it('queueLimit 0 refuses a task when every slot is busy', () => {
    const { manager } = make({ maxParallel: 2, queueLimit: 0 });
    manager.start(research);
    manager.start(research);
    expect(code(() => manager.start(research))).toBe('limit_exceeded');
    expect(manager.list({ status: 'running' })).toHaveLength(2);
  });

  it('a cap reaches the model as a tool error it can explain', async () => {
    let m!: TaskManager;
    m = new TaskManager({
      subagents: [researcher(() => m, { delayMs: 5_000 })],
      llm: researchModel('Found it.'),
      maxParallel: 1,
      queueLimit: 0,
    });
    manager = m;
    const model = new ScriptedLLM().for(Desk, [
      taskCall({ subagent_type: 'researcher', description: 'First', run_in_background: true }),
      { say: 'On it.' },
      taskCall({ subagent_type: 'researcher', description: 'Second', run_in_background: true }),
      (req) => ({
        say:
          req.lastToolOutput?.isError && req.lastToolOutput.output.includes('limit_exceeded')
            ? 'I can only run one check at a time.'
            : '??',
      }),
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(m), llm: model });
    await caller.say('Check the first thing.');
    await caller.say('And the second.');
    expect(caller.agentLines.at(-1)).toBe('I can only run one check at a time.');
    expect(m.list()).toHaveLength(1);
    model.assertComplete();
  });

  it('maxDepth: the general-purpose sub-agent gets a task tool only below the limit', async () => {
    const sub = new ScriptedLLM({
      respond: (req) => {
        if (req.lastToolOutput) return { say: `parent got: ${req.lastToolOutput.output}` };
        if (req.tools.includes('task') && req.lastUserText === 'Split the work') {
          return {
            toolCalls: [
              {
                name: 'task',
                args: {
                  subagent_type: GENERAL_PURPOSE,
                  description: 'Do part one',
                  prompt: 'Part one',
                },
              },
            ],
          };
        }
        return {
          say: `child done, tools: ${req.tools.includes('task') ? 'with task' : 'no task'}`,
        };
      },
    });
    const { manager } = make({ llm: sub, maxDepth: 2 });
    const parent = manager.start({
      subagentType: GENERAL_PURPOSE,
      description: 'Split it',
      prompt: 'Split the work',
    });
    const result = await manager.wait(parent.id);
    expect(result.output).toContain('child done, tools: no task');
    const child = manager.list({ parentId: parent.id })[0];
    expect(child).toMatchObject({
      depth: 2,
      parentId: parent.id,
      status: 'completed',
      delivery: 'none',
    });
    expect(manager.list()).toHaveLength(2);
    // The child's result landed in the parent's workspace, then merged into the call's files.
    expect(await manager.files.read(`/tasks/${parent.id}/tasks/${child?.id}/result.md`)).toContain(
      'child done',
    );

    const shallow = make({ llm: sub, maxDepth: 1 }).manager;
    const only = shallow.start({
      subagentType: GENERAL_PURPOSE,
      description: 'Split it',
      prompt: 'Split the work',
    });
    expect((await shallow.wait(only.id)).output).toBe('child done, tools: no task');
    await shallow.close();
  });

  it('allowModelOverride: refused unless allowed; then the named model runs the sub-agent', async () => {
    const { manager } = make();
    expect(code(() => manager.start({ ...research, model: 'fast' }))).toBe('invalid_argument');
    const fast = researchModel('Fast answer.');
    const allowed = make({ allowModelOverride: true, models: { fast } }, 0).manager;
    expect(code(() => allowed.start({ ...research, model: 'slow' }))).toBe('not_found');
    const task = allowed.start({ ...research, model: 'fast' });
    expect((await allowed.wait(task.id)).output).toBe('Fast answer.');
    expect(fast.requests).toHaveLength(2);
    await allowed.close();
  });

  it('rejects unknown sub-agents, missing titles and voice specialists from the host', () => {
    const { manager } = make();
    expect(code(() => manager.start({ subagentType: 'nobody', description: 'x' }))).toBe(
      'not_found',
    );
    expect(code(() => manager.start({ subagentType: 'researcher', description: '  ' }))).toBe(
      'invalid_argument',
    );
  });
});

describe('resume by task_id', () => {
  it('continues the same sub-agent conversation and workspace with a new prompt', async () => {
    const sub = new ScriptedLLM().for('*', [
      {
        toolCalls: [
          { name: 'write_file', args: { file_path: '/notes.md', content: 'refunds: 30 days\n' } },
        ],
      },
      { say: 'Noted the refund window.' },
      { toolCalls: [{ name: 'read_file', args: { file_path: '/notes.md' } }] },
      (req) => ({
        say: `Seen ${req.messages.filter((m) => m.role === 'user').length} briefs; ${req.lastToolOutput?.output.includes('refunds: 30 days') ? 'notes kept' : 'notes lost'}.`,
      }),
    ]);
    const { manager } = make({ llm: sub });
    const first = manager.start({ subagentType: GENERAL_PURPOSE, description: 'Note refunds' });
    await manager.wait(first.id);
    const second = manager.start({
      subagentType: GENERAL_PURPOSE,
      description: 'Follow up',
      prompt: 'What did you note?',
      taskId: first.id,
    });
    expect(second).toMatchObject({ resumedFrom: first.id, conversationId: first.conversationId });
    expect((await manager.wait(second.id)).output).toBe('Seen 2 briefs; notes kept.');
    expect(await manager.files.read(`/tasks/${second.id}/notes.md`)).toBe('refunds: 30 days\n');
    sub.assertComplete();
  });

  it('refuses to continue an unknown task, a running one, or with another sub-agent', async () => {
    const { manager, clock, lookups } = make();
    expect(code(() => manager.start({ ...research, taskId: 't9' }))).toBe('not_found');
    const running = manager.start(research);
    expect(code(() => manager.start({ ...research, taskId: running.id }))).toBe('invalid_state');
    await lookups.reached(1);
    await clock.advance(5_000);
    await manager.wait(running.id);
    expect(
      code(() =>
        manager.start({ subagentType: GENERAL_PURPOSE, description: 'x', taskId: running.id }),
      ),
    ).toBe('invalid_argument');
  });
});
