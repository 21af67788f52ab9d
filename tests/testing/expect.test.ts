import { describe, expect, it } from 'vitest';
import * as callbackDemo from '../../examples/callback/demo.js';
import callback from '../../examples/callback/index.js';
import { isTasklineError } from '../../src/core/errors.js';
import { expectCall, SimulatedCaller } from '../../src/testing/index.js';

describe('expectCall', () => {
  it('reads like the call and fails with what did happen', async () => {
    const model = callbackDemo.createScriptedModel();
    const call = callback.createCall();
    const caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
    try {
      await caller.say('Could someone call me back?');
      await caller.say('Jane Doe');
      const check = expectCall(caller, model);
      check
        .agentSaid(/ask for/)
        .agentNeverSaid('PIN')
        .visited('name')
        .toolCalled('submit', { first: 'Jane' })
        .transcriptEquals([
          'agent: Thanks for calling Acme Insurance. How can I help?',
          'caller: Could someone call me back?',
          'agent: Who should we ask for?',
          'caller: Jane Doe',
          'agent: I have Jane Doe. Is that right?',
        ]);
      let error: unknown;
      try {
        check.visited('phone');
      } catch (e) {
        error = e;
      }
      expect(isTasklineError(error, 'expectation_failed')).toBe(true);
      expect(String(error)).toContain('visited: callback_desk → callback_booking → name');
      expect(() => check.toolCalled('book_callback', { x: 1 })).toThrow(/calls: book_callback/);
      expect(() => check.agentSaid('Goodbye')).toThrow(/it said:/);
    } finally {
      await caller.close();
    }
  });
});
