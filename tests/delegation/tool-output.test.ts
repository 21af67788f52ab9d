// What the model reads back from the `task` tool: the structured output of the dynamic task
// tool contract, explicit reminders for arguments that are not available, and the host's
// hasRunning()/waitAllDone().
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager, type TaskManagerOptions } from '../../src/delegation/manager.js';
import { specialistFromTask } from '../../src/delegation/subagent.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import {
  type ScriptEntry,
  ScriptedLLM,
  SimulatedCaller,
  VirtualClock,
} from '../../src/testing/index.js';
import {
  Desk,
  Lookups,
  lookupThenAnswer,
  researcher,
  researchModel,
  subModel,
  taskCall,
} from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** The JSON the model got back from its last tool call. */
const outputOf = (req: { lastToolOutput?: { output: string } }): Record<string, unknown> =>
  JSON.parse(req.lastToolOutput?.output ?? 'null') as Record<string, unknown>;

async function call(voiceSteps: ScriptEntry[], options: Partial<TaskManagerOptions> = {}) {
  let manager!: TaskManager;
  manager = new TaskManager({
    subagents: [researcher(() => manager)],
    llm: subModel(lookupThenAnswer('The refund window is 30 days.', 3)),
    ...options,
  });
  const voiceModel = new ScriptedLLM().for(Desk, voiceSteps);
  caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: voiceModel });
  return { manager, voiceModel, caller };
}

describe('task tool output', () => {
  it('is {status, task_id, subagent_type, result, function_calls} with a speakable summary', async () => {
    const seen: Record<string, unknown>[] = [];
    const { caller, voiceModel } = await call([
      taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
      (req) => {
        seen.push(outputOf(req));
        return { say: 'Thirty days.' };
      },
    ]);
    await caller.say('How long is the refund window?');
    expect(seen).toEqual([
      {
        status: 'completed',
        task_id: 't1',
        subagent_type: 'researcher',
        result: 'The refund window is 30 days.',
        function_calls: ['lookup'],
        summary: 'The refund window is 30 days.',
      },
    ]);
    voiceModel.assertComplete();
  });

  it('reports a failed sub-agent as status "error" with the reason', async () => {
    const seen: Record<string, unknown>[] = [];
    const { caller } = await call(
      [
        taskCall({ subagent_type: 'general-purpose', description: 'Look it up' }),
        (req) => {
          seen.push(outputOf(req));
          return { say: 'Sorry.' };
        },
      ],
      { llm: new ScriptedLLM().for('*', [{ fail: 'model offline' }]) },
    );
    await caller.say('Look it up');
    expect(seen[0]).toMatchObject({
      status: 'error',
      task_id: 't1',
      subagent_type: 'general-purpose',
      function_calls: [],
    });
    expect(String(seen[0]?.result)).toMatch(/^failed: .*model offline/);
  });

  it('reminds a model that passes `model` while choosing models is off, and still runs the task', async () => {
    const seen: Record<string, unknown>[] = [];
    const { caller, manager } = await call([
      taskCall({
        subagent_type: 'researcher',
        description: 'Check the refund window',
        model: 'gpt-huge',
      }),
      (req) => {
        seen.push(outputOf(req));
        return { say: 'Thirty days.' };
      },
    ]);
    await caller.say('How long is the refund window?');
    expect(seen[0]).toMatchObject({ status: 'completed', result: 'The refund window is 30 days.' });
    expect(String(seen[0]?.reminder)).toMatch(/model is not available here/);
    expect(manager.get('t1')?.status).toBe('completed');
  });

  it('reminds a voice specialist call that run_in_background is not available', async () => {
    const lines: string[] = [];
    let manager!: TaskManager;
    manager = new TaskManager({
      subagents: [
        researcher(() => manager),
        specialistFromTask(yesNo({ question: 'Do you want premium?' }), {
          name: 'plan_picker',
          description: 'Asks about premium.',
        }),
      ],
      llm: subModel(lookupThenAnswer('x')),
    });
    const voiceModel = new ScriptedLLM().for(Desk, [
      taskCall({
        subagent_type: 'plan_picker',
        description: 'Ask about premium',
        run_in_background: true,
      }),
      (req) => {
        lines.push(req.lastToolOutput?.output ?? '');
        return { say: 'One question first.' };
      },
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: voiceModel });
    await caller.say('Sign me up');
    expect(lines[0]).toMatch(/run_in_background is not available here/);
  });

  it('reminds a sub-agent that passes run_in_background (its tasks always run to their end)', async () => {
    const clock = new VirtualClock();
    let nested: Record<string, unknown> | undefined;
    const sub = new ScriptedLLM({
      respond: (req) => {
        if (req.lastUserText === 'Top' && !req.lastToolOutput) {
          return {
            toolCalls: [
              {
                name: 'task',
                args: {
                  subagent_type: 'general-purpose',
                  description: 'Inner',
                  prompt: 'Inner',
                  run_in_background: true,
                },
              },
            ],
          };
        }
        if (req.lastUserText === 'Top') {
          nested = outputOf(req);
          return { say: 'outer done' };
        }
        return { say: 'inner done' };
      },
    });
    const manager = new TaskManager({ llm: sub, clock });
    const top = manager.start({
      subagentType: 'general-purpose',
      description: 'Outer',
      prompt: 'Top',
    });
    expect((await manager.wait(top.id)).output).toBe('outer done');
    expect(nested).toMatchObject({ status: 'completed', task_id: 't2', result: 'inner done' });
    expect(String(nested?.reminder)).toMatch(/run_in_background is not available here/);
    await manager.close();
  });
});

describe('TaskManager.hasRunning() and waitAllDone()', () => {
  it('tell whether work is in flight and wait for all of it, bounded on the clock', async () => {
    const clock = new VirtualClock();
    const lookups = new Lookups();
    let manager!: TaskManager;
    manager = new TaskManager({
      clock,
      timeoutMs: 60_000,
      subagents: [researcher(() => manager, { delayMs: 5_000, lookups })],
      llm: researchModel('ok'),
    });
    expect(manager.hasRunning()).toBe(false);
    expect(await manager.waitAllDone()).toBe(true);
    manager.start({ subagentType: 'researcher', description: 'One' });
    manager.start({ subagentType: 'researcher', description: 'Two' });
    expect(manager.hasRunning()).toBe(true);
    await lookups.reached(2);
    const short = manager.waitAllDone({ timeoutMs: 1_000 });
    await clock.advance(1_000);
    expect(await short).toBe(false);
    expect(manager.hasRunning()).toBe(true);
    const all = manager.waitAllDone();
    await clock.advance(4_000);
    expect(await all).toBe(true);
    expect(manager.hasRunning()).toBe(false);
    expect(manager.list().map((t) => t.status)).toEqual(['completed', 'completed']);
    await manager.close();
  });

  it('is bounded by the task timeout by default: every task has ended by then', async () => {
    const clock = new VirtualClock();
    let manager!: TaskManager;
    const lookups = new Lookups();
    manager = new TaskManager({
      clock,
      timeoutMs: 10_000,
      subagents: [researcher(() => manager, { delayMs: 999_999, lookups })],
      llm: researchModel('never'),
    });
    manager.start({ subagentType: 'researcher', description: 'Slow' });
    await lookups.reached(1);
    const waiting = manager.waitAllDone();
    await clock.advance(10_000);
    expect(await waiting).toBe(true);
    expect(manager.get('t1')?.status).toBe('timeout');
    expect(manager.hasRunning()).toBe(false);
    await manager.close();
  });
});
