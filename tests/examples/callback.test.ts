import { describe, expect, it } from 'vitest';
import * as callbackDemo from '../../examples/callback/demo.js';
import callback, { CallbackDesk, type CallbackRequest } from '../../examples/callback/index.js';
import { expectCall, ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';

describe('examples/callback', () => {
  it('books a callback from the demo script with no model call inside the tasks', async () => {
    const model = callbackDemo.createScriptedModel();
    const call = callback.createCall();
    const caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
    try {
      await caller.play(callbackDemo.demoScript);
      expect(call.result()).toEqual({
        name: { first: 'Jane', last: 'Doe' },
        phone: '+14155550199',
        time: '15:30',
        textReminder: true,
        status: 'completed',
        repairs: {},
      } satisfies CallbackRequest & { status: string; repairs: object });
      expectCall(caller, model)
        .visited('name')
        .visited('phone')
        .visited('time')
        .visited('yes_no')
        .noModelCallWhile('name')
        .noModelCallWhile('phone')
        .toolCalled('book_callback')
        .agentSaid('Done: we will call Jane at 15:30.');
      model.assertComplete();
    } finally {
      await caller.close();
    }
  });

  it('keeps the call going when the caller will not give a name', async () => {
    const model = new ScriptedLLM().for(CallbackDesk, [
      { toolCalls: [{ name: 'book_callback' }] },
      (req) => ({ say: `Sorry: ${req.lastToolOutput?.value}` }),
    ]);
    const desk = new CallbackDesk();
    const caller = await SimulatedCaller.start({ agent: desk, llm: model });
    try {
      await caller.say('call me back');
      await caller.say("I'd rather not say");
      expect(desk.booking).toBeUndefined();
      expect(caller.agentLines.at(-1)).toBe('Sorry: No booking: name declined');
    } finally {
      await caller.close();
    }
  });
});
