// Every mode of the task tool, with the scripted model and the virtual clock: what the
// caller hears, when, and that each completion is delivered exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager, type TaskManagerOptions } from '../../src/delegation/manager.js';
import type { TaskEvent } from '../../src/delegation/types.js';
import { type ScriptEntry, ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import {
  Desk,
  deliveries,
  Lookups,
  lookupThenAnswer,
  nextEvent,
  recordEvents,
  researcher,
  subModel,
  systemText,
  taskCall,
  whenSpoken,
} from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

interface Setup {
  manager: TaskManager;
  events: TaskEvent[];
  voiceModel: ScriptedLLM;
  sub: ScriptedLLM;
  caller: SimulatedCaller;
  lookups: Lookups;
}

async function setup(
  voiceSteps: ScriptEntry[],
  options: { delayMs?: number; answer?: string; manager?: Partial<TaskManagerOptions> } = {},
): Promise<Setup> {
  let manager!: TaskManager;
  const lookups = new Lookups();
  const sub = subModel(lookupThenAnswer(options.answer ?? 'The refund window is 30 days.'));
  manager = new TaskManager({
    subagents: [researcher(() => manager, { delayMs: options.delayMs ?? 0, lookups })],
    llm: sub,
    ...options.manager,
  });
  const events = recordEvents(manager);
  const voiceModel = new ScriptedLLM().for(Desk, voiceSteps);
  caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: voiceModel });
  return { manager, events, voiceModel, sub, caller, lookups };
}

const released = (req: { lastToolOutput?: { output: string } }) =>
  req.lastToolOutput?.output.includes('running in the background') === true;

describe('task modes', () => {
  it('background: releases the turn at once, keeps talking, then speaks the result once', async () => {
    const { manager, events, voiceModel, sub, caller, lookups } = await setup(
      [
        taskCall({
          subagent_type: 'researcher',
          description: 'Check the refund window',
          run_in_background: true,
        }),
        (req) => ({ say: released(req) ? 'On it.' : 'not released' }),
        { say: 'We open at nine.' },
        (req) => ({
          say: systemText(req).includes('The refund window is 30 days.')
            ? 'Refunds: 30 days.'
            : '??',
        }),
      ],
      { delayMs: 5_000 },
    );
    await caller.say('How long is the refund window?');
    expect(caller.agentLines).toEqual(['On it.']);
    expect(manager.get('t1')).toMatchObject({
      status: 'running',
      mode: 'background',
      released: true,
    });
    await caller.say('When do you open?');
    expect(caller.agentLines.at(-1)).toBe('We open at nine.');
    await whenSpoken(caller, manager, 't1', async () => {
      await lookups.reached(1);
      await caller.silence(5_000);
    });
    expect(caller.agentLines).toEqual(['On it.', 'We open at nine.', 'Refunds: 30 days.']);
    expect(deliveries(events, 't1').map((e) => e.type === 'delivered' && e.via)).toEqual([
      'spoken',
    ]);
    expect(manager.get('t1')).toMatchObject({ status: 'completed', delivery: 'spoken' });
    expect(await manager.files.read('/tasks/t1/result.md')).toContain(
      'The refund window is 30 days.',
    );
    voiceModel.assertComplete();
    sub.assertComplete();
  });

  it('auto: a quick task answers inside the same turn, with no deferred reply', async () => {
    const { manager, events, voiceModel, caller } = await setup([
      taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
      (req) => ({
        say: req.lastToolOutput?.output.includes('The refund window is 30 days.')
          ? 'It is 30 days.'
          : '??',
      }),
    ]);
    await caller.say('How long is the refund window?');
    expect(caller.agentLines).toEqual(['It is 30 days.']);
    expect(manager.get('t1')).toMatchObject({
      status: 'completed',
      mode: 'auto',
      delivery: 'inline',
      released: false,
    });
    expect(deliveries(events, 't1').map((e) => e.type === 'delivered' && e.via)).toEqual([
      'inline',
    ]);
    await caller.silence(60_000);
    expect(caller.agentLines).toEqual(['It is 30 days.']);
    voiceModel.assertComplete();
  });

  it('auto: after 2 s on the call clock it releases the turn and speaks the result later', async () => {
    const { manager, events, voiceModel, caller, lookups } = await setup(
      [
        taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
        (req) => ({ say: released(req) ? 'Let me look into that.' : 'not released' }),
        (req) => ({ say: systemText(req).includes('30 days') ? 'Found it: 30 days.' : '??' }),
      ],
      { delayMs: 5_000 },
    );
    const started = nextEvent(manager, (e) => e.type === 'started');
    const turn = caller.say('How long is the refund window?');
    await started;
    // The lookup's 5 s start now, so the result is due 3 s after the turn is released.
    await lookups.reached(1);
    await caller.clock.advance(1_999);
    expect(manager.get('t1')?.released).toBe(false);
    await caller.clock.advance(1);
    await turn;
    expect(caller.agentLines).toEqual(['Let me look into that.']);
    expect(manager.get('t1')).toMatchObject({ status: 'running', released: true });
    await whenSpoken(caller, manager, 't1', async () => {
      await caller.silence(3_000);
    });
    expect(caller.agentLines).toEqual(['Let me look into that.', 'Found it: 30 days.']);
    expect(deliveries(events, 't1')).toHaveLength(1);
    voiceModel.assertComplete();
  });

  it('foreground: run_in_background false waits for the answer inline', async () => {
    const { manager, voiceModel, caller, lookups } = await setup(
      [
        taskCall({
          subagent_type: 'researcher',
          description: 'Check the refund window',
          run_in_background: false,
        }),
        (req) => ({
          say: req.lastToolOutput?.output.includes('30 days') ? 'It is 30 days.' : '??',
        }),
      ],
      { delayMs: 5_000 },
    );
    const started = nextEvent(manager, (e) => e.type === 'started');
    const turn = caller.say('How long is the refund window?');
    await started;
    await lookups.reached(1);
    await caller.clock.advance(5_000);
    await turn;
    expect(caller.agentLines).toEqual(['It is 30 days.']);
    expect(manager.get('t1')).toMatchObject({
      mode: 'foreground',
      delivery: 'inline',
      released: false,
    });
    voiceModel.assertComplete();
  });

  it('foreground is capped: past foregroundCapMs the turn is released and the result comes later', async () => {
    const { manager, events, voiceModel, caller, lookups } = await setup(
      [
        taskCall({
          subagent_type: 'researcher',
          description: 'Check the refund window',
          run_in_background: false,
        }),
        (req) => ({ say: released(req) ? 'This takes longer; I will get back to you.' : '??' }),
        (req) => ({ say: systemText(req).includes('30 days') ? 'Back with it: 30 days.' : '??' }),
      ],
      { delayMs: 30_000, manager: { foregroundCapMs: 10_000 } },
    );
    const started = nextEvent(manager, (e) => e.type === 'started');
    const turn = caller.say('How long is the refund window?');
    await started;
    await lookups.reached(1);
    await caller.clock.advance(10_000);
    await turn;
    expect(caller.agentLines).toEqual(['This takes longer; I will get back to you.']);
    await whenSpoken(caller, manager, 't1', async () => {
      await caller.silence(20_000);
    });
    expect(caller.agentLines.at(-1)).toBe('Back with it: 30 days.');
    expect(deliveries(events, 't1')).toHaveLength(1);
    voiceModel.assertComplete();
  });

  it('defaultMode applies when the model does not choose', async () => {
    const { manager, voiceModel, caller } = await setup(
      [
        taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
        (req) => ({ say: released(req) ? 'On it.' : '??' }),
        (req) => ({ say: systemText(req).includes('30 days') ? '30 days.' : '??' }),
      ],
      { manager: { defaultMode: 'background' } },
    );
    await whenSpoken(caller, manager, 't1', () => caller.say('Refund window?'));
    expect(caller.agentLines).toEqual(['On it.', '30 days.']);
    expect(manager.get('t1')?.mode).toBe('background');
    voiceModel.assertComplete();
  });

  it('the prompt falls back to the description', async () => {
    const { manager, sub, caller } = await setup([
      taskCall({ subagent_type: 'researcher', description: 'Check the refund window' }),
      { say: 'Done.' },
    ]);
    await caller.say('Refund window?');
    expect(manager.get('t1')?.prompt).toBe('Check the refund window');
    expect(sub.requests[0]?.lastUserText).toBe('Check the refund window');
  });
});
