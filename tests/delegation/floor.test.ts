// When a background result is spoken: never between a question and its answer by default.
// A read-back that is waiting for its yes keeps it, whatever finishes meanwhile; the host
// may choose `idle` (after every step) or `interrupt` (at once, the question asked again).
import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callOf } from '../../src/core/call.js';
import { type DeliverAt, Floor } from '../../src/delegation/floor.js';
import { TaskManager } from '../../src/delegation/manager.js';
import { flow } from '../../src/flows/builder.js';
import { phone, yesNo } from '../../src/tasks/prebuilt.js';
import { TaskAwareTurnDetector } from '../../src/tasks/turn-detector.js';
import { ScriptedLLM, type ScriptedRequest, SimulatedCaller } from '../../src/testing/index.js';
import { Desk, deliveries, Lookups, recordEvents, researcher, researchModel } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const READ_BACK = 'I have 4 1 5, 5 5 5, 0 1 9 9. Is that right?';
const system = (req: ScriptedRequest) =>
  req.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.text)
    .join('\n');

/** A desk that saves a callback number (a phone read-back) while a lookup runs in the background. */
function deskCall(deliverAt?: DeliverAt, resultLine?: string) {
  let manager!: TaskManager;
  const lookups = new Lookups();
  manager = new TaskManager({
    subagents: [researcher(() => manager, { delayMs: 2_000, lookups })],
    llm: researchModel('Complaint ticket FB-4815 is filed.'),
    ...(deliverAt ? { deliverAt } : {}),
    ...(resultLine ? { resultLine: () => resultLine } : {}),
  });
  let saved: unknown;
  const number = phone({
    name: 'callback',
    question: 'What number should we call?',
    confirm: 'always',
  });
  const desk = new Desk(manager, {
    save_number: llm.tool({
      description: 'Ask for and save a callback number.',
      execute: async () => {
        const outcome = await number.run();
        saved = outcome;
        return outcome.status === 'ok' ? `saved ${outcome.value}` : `not saved: ${outcome.status}`;
      },
    }),
  });
  const model = new ScriptedLLM({
    respond: (req) => {
      if (system(req).includes('Delegated task results are ready')) {
        return {
          say: system(req).includes('FB-4815') ? 'An update: ticket FB-4815 is filed.' : '??',
        };
      }
      if (req.agentId === 'callback') return { say: 'Quick note: ticket FB-4815 is filed.' };
      const out = req.lastToolOutput;
      if (out?.name === 'task') return { say: 'I am filing your complaint.' };
      if (out?.name === 'save_number') return { say: `Done: ${String(out.value)}.` };
      if (/complain/.test(req.lastUserText ?? '')) {
        return {
          toolCalls: [
            {
              name: 'task',
              args: {
                subagent_type: 'researcher',
                description: 'File a complaint',
                run_in_background: true,
              },
            },
          ],
        };
      }
      return { toolCalls: [{ name: 'save_number' }] };
    },
  });
  return { manager, lookups, desk, model, events: recordEvents(manager), saved: () => saved };
}

async function readBackThenYes(call: ReturnType<typeof deskCall>) {
  caller = await SimulatedCaller.start({ agent: call.desk, llm: call.model });
  await caller.say('I want to complain about my delivery.');
  await call.lookups.reached(1);
  await caller.say('Please call me back.');
  await caller.say('four one five five five five zero one nine nine');
  expect(caller.agentLines.at(-1)).toBe(READ_BACK);
  // The complaint is filed while the read-back waits for its answer.
  await caller.silence(3_000);
  await call.manager.wait('t1');
  await caller.settle();
  await caller.say('yes');
  return caller;
}

describe('results wait for a safe moment', () => {
  it('a read-back waiting for its yes keeps it; the result is spoken after the answer (default)', async () => {
    const call = deskCall();
    const c = await readBackThenYes(call);
    expect(call.saved()).toMatchObject({ status: 'ok', value: '+14155550199', confirmed: true });
    const lines = c.agentLines;
    expect(lines.slice(lines.indexOf(READ_BACK))).toEqual([
      READ_BACK,
      'Done: saved +14155550199.',
      'An update: ticket FB-4815 is filed.',
    ]);
    expect(lines.join('\n')).not.toMatch(/Sorry|Quick note/);
    expect(deliveries(call.events, 't1')).toHaveLength(1);
    expect(call.manager.get('t1')?.delivery).toBe('spoken');
  });

  it('interrupt: spoken at once over the open read-back, which is asked again and still confirmed', async () => {
    const call = deskCall('interrupt', 'An update on your complaint: ticket FB-4815 is filed.');
    const c = await readBackThenYes(call);
    const lines = c.agentLines;
    expect(lines.slice(lines.indexOf(READ_BACK))).toEqual([
      READ_BACK,
      'An update on your complaint: ticket FB-4815 is filed.',
      READ_BACK,
      'Done: saved +14155550199.',
    ]);
    expect(call.saved()).toMatchObject({ status: 'ok', value: '+14155550199', confirmed: true });
    expect(call.manager.get('t1')?.delivery).toBe('spoken');
  });

  it('step: a result line is said at the step boundary of a flow, before the next question', async () => {
    let manager!: TaskManager;
    const lookups = new Lookups();
    manager = new TaskManager({
      subagents: [researcher(() => manager, { delayMs: 2_000, lookups })],
      llm: researchModel('FB-4815'),
      resultLine: (t) => `Your complaint is filed as ticket ${t.result?.summary}.`,
    });
    const survey = flow('feedback')
      .step('happy', yesNo({ name: 'happy', question: 'Were you happy with the delivery?' }))
      .step('again', yesNo({ name: 'again', question: 'Would you order again?' }));
    const agent = new FlowDesk(manager, survey);
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    expect(caller.agentLines).toEqual(['Were you happy with the delivery?']);
    await lookups.reached(1);
    await caller.silence(3_000); // filed while the first question waits
    await manager.wait('t1');
    await caller.settle();
    expect(caller.agentLines).toEqual(['Were you happy with the delivery?']);
    await caller.say('no');
    expect(caller.agentLines).toEqual([
      'Were you happy with the delivery?',
      'Your complaint is filed as ticket FB-4815.',
      'Would you order again?',
    ]);
    await caller.say('yes');
    expect(agent.answers).toEqual({ happy: false, again: true });
  });

  it('idle: a result line waits until no step is in progress (after the flow)', async () => {
    let manager!: TaskManager;
    const lookups = new Lookups();
    manager = new TaskManager({
      subagents: [researcher(() => manager, { delayMs: 2_000, lookups })],
      llm: researchModel('FB-4815'),
      deliverAt: 'idle',
      resultLine: (t) => `Your complaint is filed as ticket ${t.result?.summary}.`,
    });
    const survey = flow('feedback')
      .step('happy', yesNo({ name: 'happy', question: 'Were you happy with the delivery?' }))
      .step('again', yesNo({ name: 'again', question: 'Would you order again?' }));
    const agent = new FlowDesk(manager, survey);
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    // Upstream's waitForIdle() leaves abort listeners on the activity (more while the caller
    // speaks): the floor never uses it, however many handoffs it watches.
    const idleWaits = vi.spyOn(caller.session, 'waitForIdle');
    await lookups.reached(1);
    await caller.silence(3_000);
    await manager.wait('t1');
    await caller.say('no');
    expect(caller.agentLines.at(-1)).toBe('Would you order again?');
    await caller.say('yes');
    expect(caller.agentLines.slice(-2)).toEqual([
      'Would you order again?',
      'Your complaint is filed as ticket FB-4815.',
    ]);
    expect(idleWaits).not.toHaveBeenCalled();
  });

  it('a host-started result is spoken in text mode with default settings (no silence needed)', async () => {
    let manager!: TaskManager;
    manager = new TaskManager({
      subagents: [researcher(() => manager)],
      llm: researchModel('FB-4815'),
      resultLine: (t) => `Ticket ${t.result?.summary} is filed.`,
    });
    const survey = flow('feedback')
      .step('happy', yesNo({ name: 'happy', question: 'Were you happy with the delivery?' }))
      .step('again', yesNo({ name: 'again', question: 'Would you order again?' }));
    const agent = new FlowDesk(manager, survey, false);
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    manager.attach(caller.session);
    manager.start({ subagentType: 'researcher', description: 'File a complaint' });
    await manager.wait('t1');
    await caller.say('no');
    await caller.say('yes');
    expect(caller.agentLines).toEqual([
      'Were you happy with the delivery?',
      'Ticket FB-4815 is filed.',
      'Would you order again?',
    ]);
    expect(manager.get('t1')?.delivery).toBe('spoken');
  });

  it('interrupt: nothing is said between the turn acknowledgement ("Okay.") and the answer to the turn', async () => {
    const call = deskCall();
    caller = await SimulatedCaller.start({ agent: call.desk, llm: call.model });
    await caller.say('Please call me back.');
    await caller.say('four one five five five five zero one nine nine');
    expect(caller.agentLines.at(-1)).toBe(READ_BACK);
    // The caller's "yes" is judged complete: the agent says "Okay." while the turn is open.
    const detector = new TaskAwareTurnDetector().bind(caller.session);
    const spoken: string[][] = [];
    const floor = new Floor<string>(caller.session, callOf(caller.session), 'interrupt', {
      speak: (held) => {
        spoken.push([...held, `after ${caller?.agentLines.length} lines`]);
        return [];
      },
    });
    const turn = llm.ChatContext.empty();
    turn.addMessage({ role: 'assistant', content: READ_BACK });
    turn.addMessage({ role: 'user', content: 'yes' });
    const judged = detector.predictEndOfTurn(turn);
    floor.hold(['An update on your complaint.']);
    // Resolves once the acknowledgement has played (and the turn stayed open a moment): the
    // line looks idle, but the turn is still the caller's.
    expect(await judged).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(caller.session.agentState).toBe('listening');
    expect(spoken).toEqual([]);
    await caller.say('yes');
    expect(call.saved()).toMatchObject({ status: 'ok', value: '+14155550199', confirmed: true });
    expect(spoken).toHaveLength(1);
    expect(caller.agentLines.slice(caller.agentLines.indexOf(READ_BACK))).toEqual([
      READ_BACK,
      'Done: saved +14155550199.',
    ]);
    floor.close();
  });

  it('deliverAt is checked', () => {
    expect(() => new TaskManager({ deliverAt: 'later' as DeliverAt })).toThrow(
      /deliverAt must be one of step, idle, interrupt/,
    );
  });
});

/** Runs a flow from onEnter; the host starts the complaint task when the call begins. */
class FlowDesk extends voice.Agent {
  answers: unknown;
  constructor(
    private readonly manager: TaskManager,
    private readonly survey: { run(): Promise<{ answers: unknown }> },
    private readonly startTask = true,
  ) {
    super({ instructions: 'You run a short feedback call.' });
  }

  override async onEnter(): Promise<void> {
    if (this.startTask) {
      this.manager.attach(this.session);
      this.manager.start({ subagentType: 'researcher', description: 'File a complaint' });
    }
    const result = await this.survey.run();
    this.answers = result.answers;
  }
}
