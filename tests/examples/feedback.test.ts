// examples/feedback where its features meet: a complaint filed in the background (a sub-agent)
// while the call asks its questions; its ticket number is never said between a question and
// its answer — a callback number's read-back keeps its "yes" — and is said exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import * as demo from '../../examples/feedback/demo.js';
import { createFeedbackCall } from '../../examples/feedback/index.js';
import { SimulatedCaller } from '../../src/testing/index.js';

const READ_BACK = 'I have 4 1 5, 5 5 5, 0 1 9 9. Is that right?';
const TICKET = 'An update on your complaint: it is filed as ticket F B 4 8 1 5.';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

describe('examples/feedback', () => {
  it('the demo: the ticket is said once, right after an answer, never after a question', async () => {
    const call = demo.createCall();
    caller = await SimulatedCaller.start({ agent: call.agent, llm: demo.createScriptedModel() });
    await caller.play(demo.demoScript);
    // The sub-agent is filed beside the call: depending on when it is done, the line comes
    // after the comment or after the callback number's yes — both are step boundaries.
    const said = caller.transcript.findIndex((l) => l.text === TICKET);
    expect(caller.transcript.filter((l) => l.text === TICKET)).toHaveLength(1);
    expect(caller.transcript[said - 1]).toMatchObject({ role: 'caller' });
    expect(['the parcel was left in the rain', 'yes']).toContain(caller.transcript[said - 1]?.text);
    expect(caller.agentLines.filter((l) => l !== TICKET)).toEqual([
      'Hi, this is Taskline Delivery about your order today. Do you have a minute for a few quick questions?',
      'From 1 to 5, how was your delivery? Say it, or press it on your keypad.',
      'What could we have done better?',
      'Which number can our team call you back on?',
      READ_BACK,
      'Thank you for your feedback. Goodbye!',
    ]);
    expect(call.result()).toMatchObject({ ticket: 'FB-4815', ticketSaid: true });
    expect(call.desk.tickets).toHaveLength(1);
  });

  it('a ticket filed during the read-back waits for its yes, then is said once', async () => {
    // The help desk takes 3 s: the ticket is ready while the read-back waits for its answer.
    const call = createFeedbackCall({ complaintsModel: demo.complaintsModel({ afterMs: 3_000 }) });
    caller = await SimulatedCaller.start({ agent: call.agent, llm: demo.createScriptedModel() });
    await caller.play([
      { say: 'yes' },
      { keys: '1' },
      { say: 'it came two days late' },
      { say: 'four one five, five five five, zero one nine nine' },
    ]);
    expect(caller.agentLines.at(-1)).toBe(READ_BACK);
    await caller.silence(3_000);
    await call.agent.complaints.wait('t1');
    await caller.settle();
    expect(caller.agentLines.at(-1)).toBe(READ_BACK); // nothing said over the open question
    await caller.say('yes');
    const lines = caller.agentLines;
    expect(lines.slice(lines.indexOf(READ_BACK))).toEqual([
      READ_BACK,
      TICKET,
      'Thank you for your feedback. Goodbye!',
    ]);
    expect(lines.join('\n')).not.toMatch(/didn't catch/);
    expect(call.result()).toMatchObject({
      answers: { rating: 1, callback: '+14155550199' },
      ticket: 'FB-4815',
      ticketSaid: true,
    });
  });

  it('a ticket still being filed when the call ends is not said, and says so in the result', async () => {
    const call = createFeedbackCall({ complaintsModel: demo.complaintsModel({ afterMs: 60_000 }) });
    caller = await SimulatedCaller.start({ agent: call.agent, llm: demo.createScriptedModel() });
    await caller.play(demo.demoScript);
    expect(caller.agentLines.join('\n')).not.toContain('ticket');
    expect(call.result()).toMatchObject({ ticketSaid: false });
    expect(call.result().ticket).toBeUndefined();
  });
});
