// Where and how often a completion is delivered: into the agent current at that moment
// (after a handoff, inside or after an inline task), exactly once, several coalesced.
import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { specialistFromTask } from '../../src/delegation/subagent.js';
import { createDelegationTools } from '../../src/delegation/task-tools.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import {
  Billing,
  Desk,
  deliveries,
  Lookups,
  lookupThenAnswer,
  nextEvent,
  recordEvents,
  researcher,
  researchModel,
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

function researchManager(delayMs: number, answer = 'The refund window is 30 days.') {
  let manager!: TaskManager;
  const lookups = new Lookups();
  const sub = researchModel(answer);
  manager = new TaskManager({
    subagents: [researcher(() => manager, { delayMs, lookups })],
    llm: sub,
  });
  return { manager, events: recordEvents(manager), sub, lookups };
}

const mentions = (text: string) => (req: { messages: { role: string; text: string }[] }) =>
  systemText(req).includes(text);

describe('delivery', () => {
  it('after a handoff, the result goes to the new agent, exactly once', async () => {
    const { manager, events, lookups } = researchManager(5_000);
    const desk = new Desk(manager, {
      transfer_to_billing: llm.tool({
        description: 'Hand the call to billing.',
        execute: async () => llm.handoff({ agent: new Billing(), returns: 'transferred' }),
      }),
    });
    const model = new ScriptedLLM()
      .for(Desk, [
        taskCall({
          subagent_type: 'researcher',
          description: 'Check the refund window',
          run_in_background: true,
        }),
        { say: 'I am checking.' },
        { toolCalls: [{ name: 'transfer_to_billing' }] },
      ])
      .for(Billing, [
        { say: 'Billing here.' },
        (req) => ({
          say: mentions('The refund window is 30 days.')(req)
            ? 'Also: refunds take 30 days.'
            : '??',
        }),
      ]);
    caller = await SimulatedCaller.start({ agent: desk, llm: model });
    await caller.say('How long do refunds take?');
    await caller.say('Put me through to billing.');
    expect(caller.agentLines).toEqual(['I am checking.', 'Billing here.']);
    await whenSpoken(caller, manager, 't1', async () => {
      await lookups.reached(1);
      await caller?.silence(5_000);
    });
    expect(caller.agentLines).toEqual([
      'I am checking.',
      'Billing here.',
      'Also: refunds take 30 days.',
    ]);
    expect(caller.session.currentAgent).toBeInstanceOf(Billing);
    expect(deliveries(events, 't1')).toHaveLength(1);
    expect(model.requests.filter(mentions('The refund window is 30 days.'))).toHaveLength(1);
    await caller.silence(60_000);
    expect(caller.agentLines).toHaveLength(3);
    model.assertComplete();
  });

  it('while an inline task asks its question, the result waits for the answer, then the agent speaks it once', async () => {
    const { manager, events, lookups } = researchManager(5_000);
    const desk = new Desk(manager, {
      place_order: llm.tool({
        description: 'Confirm and place the order.',
        execute: async () => {
          const ok = await yesNo({ question: 'Shall I place the order?' }).run();
          return ok.status === 'ok' && ok.value ? 'placed' : 'not placed';
        },
      }),
    });
    const model = new ScriptedLLM().for(Desk, [
      taskCall({
        subagent_type: 'researcher',
        description: 'Check the refund window',
        run_in_background: true,
      }),
      { say: 'I am checking.' },
      { toolCalls: [{ name: 'place_order' }] },
      (req) => ({ say: req.lastToolOutput?.value === 'placed' ? 'Your order is placed.' : '??' }),
      (req) => ({ say: mentions('30 days')(req) ? 'Quick note: refunds take 30 days.' : '??' }),
    ]);
    caller = await SimulatedCaller.start({ agent: desk, llm: model });
    await caller.say('How long do refunds take?');
    await caller.say('Place my order.');
    expect(caller.agentLines.at(-1)).toBe('Shall I place the order?');
    await lookups.reached(1);
    await caller.silence(5_000);
    await manager.wait('t1');
    await caller.settle();
    // Done, but the question is waiting for its answer: nothing is said in between.
    expect(caller.agentLines.at(-1)).toBe('Shall I place the order?');
    expect(deliveries(events, 't1')).toHaveLength(0);
    await caller.say('yes');
    expect(caller.agentLines.slice(-2)).toEqual([
      'Your order is placed.',
      'Quick note: refunds take 30 days.',
    ]);
    expect(deliveries(events, 't1')).toHaveLength(1);
    expect(model.requests.filter(mentions('30 days'))).toHaveLength(1);
    model.assertComplete();
  });

  it('a voice specialist runs in the foreground; a result ready meanwhile waits until it hands back', async () => {
    let manager!: TaskManager;
    const lookups = new Lookups();
    const sub = subModel(lookupThenAnswer('The refund window is 30 days.'));
    manager = new TaskManager({
      subagents: [
        researcher(() => manager, { delayMs: 5_000, lookups }),
        specialistFromTask(yesNo({ question: 'Would you like the premium plan?' }), {
          name: 'plan_picker',
          description: 'Asks the caller whether they want the premium plan.',
        }),
      ],
      llm: sub,
    });
    const events = recordEvents(manager);
    const order: string[] = [];
    manager.subscribe((e) => {
      if (e.type === 'finished' || e.type === 'delivered') order.push(`${e.type}:${e.task.id}`);
    });
    // After the specialist hands back, the two results may come in one reply or two.
    const model = new ScriptedLLM({
      respond: (req) => ({
        say: [
          mentions('30 days')(req) ? 'Refunds take 30 days.' : '',
          mentions('ok: true')(req) ? 'Premium it is.' : '',
        ]
          .filter(Boolean)
          .join(' '),
      }),
    }).for(Desk, [
      taskCall({
        subagent_type: 'researcher',
        description: 'Check the refund window',
        run_in_background: true,
      }),
      { say: 'I am checking.' },
      taskCall({ subagent_type: 'plan_picker', description: 'Ask about premium' }),
      (req) => ({
        say: req.lastToolOutput?.output.includes('takes over') ? 'One quick question first.' : '??',
      }),
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    await caller.say('How long do refunds take?');
    await caller.say('Sign me up.');
    expect(caller.agentLines.slice(-2)).toEqual([
      'One quick question first.',
      'Would you like the premium plan?',
    ]);
    expect(manager.get('t2')).toMatchObject({ status: 'running', subagentType: 'plan_picker' });
    await lookups.reached(1);
    await caller.silence(5_000);
    await manager.wait('t1');
    await caller.settle();
    // The research is done, but the specialist holds the floor: nothing is spoken yet.
    expect(caller.agentLines.at(-1)).toBe('Would you like the premium plan?');
    expect(deliveries(events, 't1')).toHaveLength(0);
    const bothSpoken = Promise.all([
      nextEvent(manager, (e) => e.type === 'delivered' && e.task.id === 't1'),
      nextEvent(manager, (e) => e.type === 'delivered' && e.task.id === 't2'),
    ]);
    await whenSpoken(caller, manager, 't2', () => caller!.say('yes'));
    await bothSpoken;
    await caller.settle();
    const after = caller.agentLines.slice(
      caller.agentLines.indexOf('Would you like the premium plan?') + 1,
    );
    expect(after.join(' ').match(/Refunds take 30 days\./g)).toHaveLength(1);
    expect(after.join(' ').match(/Premium it is\./g)).toHaveLength(1);
    expect(manager.get('t2')?.result?.value).toMatchObject({ status: 'ok', value: true });
    expect(order.slice(0, 2)).toEqual(['finished:t1', 'finished:t2']);
    expect(deliveries(events, 't1')).toHaveLength(1);
    expect(deliveries(events, 't2')).toHaveLength(1);
    model.assertComplete();
  });

  it('coalesces results that arrive together into one spoken reply', async () => {
    const { manager, events, lookups } = researchManager(5_000, 'Noted.');
    const model = new ScriptedLLM().for(Desk, [
      {
        toolCalls: [
          {
            name: 'task',
            args: {
              subagent_type: 'researcher',
              description: 'Check refunds',
              run_in_background: true,
            },
          },
          {
            name: 'task',
            args: {
              subagent_type: 'researcher',
              description: 'Check shipping',
              run_in_background: true,
            },
          },
        ],
      },
      { say: 'Checking both.' },
      (req) => ({
        say:
          mentions('Check refunds')(req) && mentions('Check shipping')(req)
            ? 'Both are back.'
            : '??',
      }),
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    await caller.say('Check refunds and shipping.');
    await whenSpoken(caller, manager, 't2', async () => {
      await lookups.reached(2);
      await caller?.silence(5_000);
    });
    expect(caller.agentLines).toEqual(['Checking both.', 'Both are back.']);
    expect(deliveries(events, 't1')).toHaveLength(1);
    expect(deliveries(events, 't2')).toHaveLength(1);
    model.assertComplete();
  });

  it('a task the host starts is announced into the call and spoken once', async () => {
    const { manager, events } = researchManager(0);
    const model = new ScriptedLLM().for(Desk, [
      (req) => ({
        say: mentions('The refund window is 30 days.')(req) ? 'News: refunds take 30 days.' : '??',
      }),
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    manager.attach(caller.session);
    const started = manager.start({
      subagentType: 'researcher',
      description: 'Check the refund window',
    });
    expect(started).toMatchObject({ id: 't1', origin: 'host', status: 'running' });
    await whenSpoken(caller, manager, 't1');
    expect(caller.agentLines).toEqual(['News: refunds take 30 days.']);
    expect(deliveries(events, 't1')).toHaveLength(1);
    model.assertComplete();
  });

  it('never delivers into another session: a manager serves one call', async () => {
    const { manager } = researchManager(0);
    const model = new ScriptedLLM().for(Desk, []);
    caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    manager.attach(caller.session);
    const other = new voice.AgentSession({ llm: model });
    expect(() => manager.attach(other)).toThrow(/one TaskManager per call/);
    expect(createDelegationTools(manager).task).toBeDefined();
  });
});
