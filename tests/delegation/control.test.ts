// Task control: barge-in does not cancel, cancel, timeout with partial output, session end,
// and a failing sub-agent that leaves the call going.
import { llm } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TaskManager, type TaskManagerOptions } from '../../src/delegation/manager.js';
import { MemoryDelegationStore } from '../../src/delegation/memory-store.js';
import { defineSubAgent } from '../../src/delegation/subagent.js';
import { type ScriptEntry, ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import {
  Desk,
  deliveries,
  Lookups,
  nextEvent,
  recordEvents,
  researcher,
  researchModel,
  systemText,
  taskCall,
  whenSpoken,
} from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start(
  voiceSteps: ScriptEntry[],
  options: { delayMs?: number; sub?: llm.LLM; manager?: Partial<TaskManagerOptions> } = {},
) {
  let manager!: TaskManager;
  const lookups = new Lookups();
  manager = new TaskManager({
    subagents: [researcher(() => manager, { delayMs: options.delayMs ?? 5_000, lookups })],
    llm: options.sub ?? researchModel('The refund window is 30 days.'),
    ...options.manager,
  });
  const events = recordEvents(manager);
  const model = new ScriptedLLM().for(Desk, voiceSteps);
  caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
  return { manager, events, model, caller, lookups };
}

const background = taskCall({
  subagent_type: 'researcher',
  description: 'Check the refund window',
  run_in_background: true,
});

describe('task control', () => {
  it('a barge-in does not cancel a background task', async () => {
    const { manager, events, model, caller, lookups } = await start([
      background,
      { say: 'Looking into it, this may take a moment while I check every policy.' },
      { say: 'It is ten past nine.' },
      (req) => ({ say: systemText(req).includes('30 days') ? 'Refunds take 30 days.' : '??' }),
    ]);
    await caller.say('How long do refunds take?');
    await caller.bargeIn('Actually, what time is it?');
    expect(caller.agentLines.at(-1)).toBe('It is ten past nine.');
    expect(manager.get('t1')?.status).toBe('running');
    await whenSpoken(caller, manager, 't1', async () => {
      await lookups.reached(1);
      await caller.silence(5_000);
    });
    expect(caller.agentLines.at(-1)).toBe('Refunds take 30 days.');
    expect(deliveries(events, 't1')).toHaveLength(1);
    model.assertComplete();
  });

  it('an interruption while the task call is still waiting inline does not cancel it either', async () => {
    const { manager, events, model, caller, lookups } = await start([
      taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
      (req) => ({ say: systemText(req).includes('30 days') ? 'About refunds: 30 days.' : '??' }),
    ]);
    const started = nextEvent(manager, (e) => e.type === 'started');
    const turn = caller.say('How long do refunds take?');
    await started;
    await caller.session.interrupt({ force: true });
    await turn;
    expect(manager.get('t1')).toMatchObject({ status: 'running', released: false });
    await whenSpoken(caller, manager, 't1', async () => {
      await lookups.reached(1);
      await caller.silence(5_000);
    });
    expect(caller.agentLines.at(-1)).toBe('About refunds: 30 days.');
    expect(deliveries(events, 't1')).toHaveLength(1);
    model.assertComplete();
  });

  it('task_cancel stops the sub-agent and nothing is spoken later', async () => {
    const { manager, events, model, caller } = await start([
      background,
      { say: 'On it.' },
      { toolCalls: [{ name: 'task_cancel', args: { task_id: 't1' } }] },
      (req) => ({
        say: req.lastToolOutput?.output.includes('Cancelled task t1') ? 'Cancelled.' : '??',
      }),
    ]);
    await caller.say('How long do refunds take?');
    await caller.say('Never mind, cancel that.');
    expect(caller.agentLines).toEqual(['On it.', 'Cancelled.']);
    expect(manager.get('t1')).toMatchObject({ status: 'cancelled', delivery: 'none' });
    await caller.silence(60_000);
    expect(caller.agentLines).toEqual(['On it.', 'Cancelled.']);
    expect(deliveries(events, 't1')).toHaveLength(0);
    model.assertComplete();
  });

  it('a host cancel is told to the caller once', async () => {
    const { manager, model, caller } = await start([
      background,
      { say: 'On it.' },
      (req) => ({
        say: systemText(req).includes('was cancelled') ? 'That check was stopped.' : '??',
      }),
    ]);
    await caller.say('How long do refunds take?');
    await whenSpoken(caller, manager, 't1', () => manager.cancel('t1', 'Stopped by a supervisor.'));
    expect(caller.agentLines).toEqual(['On it.', 'That check was stopped.']);
    expect(manager.get('t1')?.result?.error?.message).toBe('Stopped by a supervisor.');
    expect(await manager.cancel('t1')).toBe(false);
    model.assertComplete();
  });

  it('a timeout returns the partial output, in the reply and in result.md', async () => {
    const sub = new ScriptedLLM().for('*', [
      {
        say: 'Two refund policies found so far.',
        toolCalls: [{ name: 'lookup', args: { query: 'more' } }],
      },
    ]);
    const store = new MemoryDelegationStore();
    const { manager, model, caller, lookups } = await start(
      [
        background,
        { say: 'On it.' },
        (req) => ({
          say:
            systemText(req).includes('timed out') &&
            systemText(req).includes('Two refund policies found so far.')
              ? 'I only got part of it: two policies so far.'
              : '??',
        }),
      ],
      { delayMs: 60_000, sub, manager: { timeoutMs: 10_000, store } },
    );
    await caller.say('How long do refunds take?');
    await whenSpoken(caller, manager, 't1', async () => {
      await lookups.reached(1);
      await caller.silence(10_000);
    });
    expect(caller.agentLines.at(-1)).toBe('I only got part of it: two policies so far.');
    const result = manager.get('t1')?.result;
    expect(result).toMatchObject({
      status: 'timeout',
      partial: true,
      output: 'Two refund policies found so far.',
    });
    const file = await manager.files.read('/tasks/t1/result.md');
    expect(file).toContain('status: timeout (partial output)');
    expect(file).toContain('Two refund policies found so far.');
    await manager.flush();
    const record = await store.get(`${manager.namespace}:t1`);
    expect(record?.status.execution?.state).toBe('expired');
    model.assertComplete();
  });

  it('the end of the call cancels running tasks; nothing is delivered', async () => {
    const store = new MemoryDelegationStore();
    const { manager, events, caller } = await start([background, { say: 'On it.' }], {
      manager: { store },
    });
    await caller.say('How long do refunds take?');
    const finished = nextEvent(manager, (e) => e.type === 'finished');
    await caller.close();
    await finished;
    expect(manager.get('t1')).toMatchObject({ status: 'cancelled', delivery: 'none' });
    expect(manager.get('t1')?.result?.error?.message).toBe('The call ended.');
    expect(deliveries(events, 't1')).toHaveLength(0);
    await manager.flush();
    expect((await store.get(`${manager.namespace}:t1`))?.status.execution?.state).toBe('cancelled');
  });

  it('with keepRunningAfterCall a task outlives the call as a durable record', async () => {
    const store = new MemoryDelegationStore();
    const { manager, caller, lookups } = await start([background, { say: 'On it.' }], {
      manager: { store, keepRunningAfterCall: true },
    });
    await caller.say('How long do refunds take?');
    await caller.close();
    expect(manager.get('t1')?.status).toBe('running');
    const result = manager.wait('t1');
    await lookups.reached(1);
    await caller.clock.advance(5_000);
    expect(await result).toMatchObject({
      status: 'completed',
      summary: 'The refund window is 30 days.',
    });
    expect(manager.get('t1')?.delivery).toBe('none');
    await manager.flush();
    const record = await store.get(`${manager.namespace}:t1`);
    expect(record?.status.execution).toMatchObject({
      state: 'done',
      delegation_result: 'The refund window is 30 days.',
    });
  });

  it('a failing sub-agent gives an error result and the call goes on', async () => {
    const sub = new ScriptedLLM().for('*', [{ fail: 'model offline' }]);
    const { manager, model, caller } = await start(
      [
        taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
        (req) => ({
          say: req.lastToolOutput?.output.includes('failed: scripted failure: model offline')
            ? 'Sorry, I could not check that right now.'
            : `?? ${req.lastToolOutput?.output}`,
        }),
        { say: 'We open at nine.' },
      ],
      { sub },
    );
    await caller.say('How long do refunds take?');
    expect(caller.agentLines).toEqual(['Sorry, I could not check that right now.']);
    expect(manager.get('t1')?.result).toMatchObject({
      status: 'failed',
      error: { code: 'failed' },
    });
    await caller.say('When do you open?');
    expect(caller.agentLines.at(-1)).toBe('We open at nine.');
    model.assertComplete();
  });

  it('a sub-agent tool that throws is an error the sub-agent sees, not a crash', async () => {
    const flaky = defineSubAgent({
      name: 'flaky',
      description: 'Has a broken tool.',
      instructions: 'Try the tool.',
      tools: {
        broken: llm.tool({
          description: 'Always fails.',
          parameters: z.object({}),
          execute: async () => {
            throw new llm.ToolError('database unavailable');
          },
        }),
      },
    });
    const sub = new ScriptedLLM().for('*', [
      { toolCalls: [{ name: 'broken' }] },
      (req) => ({
        say: req.lastToolOutput?.isError ? `Could not: ${req.lastToolOutput.output}` : '??',
      }),
    ]);
    const manager = new TaskManager({ subagents: [flaky], llm: sub, generalPurpose: false });
    const task = manager.start({ subagentType: 'flaky', description: 'Try it' });
    const result = await manager.wait(task.id);
    expect(result.status).toBe('completed');
    expect(result.output).toContain('database unavailable');
    await manager.close();
  });
});
