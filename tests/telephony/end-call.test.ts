import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { endCall, endCallTool } from '../../src/telephony/end-call.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

class Concierge extends voice.Agent {
  constructor() {
    super({ instructions: 'Help the caller, then end the call.', tools: [endCallTool()] });
  }
  override async onEnter(): Promise<void> {
    this.session.generateReply();
  }
}

describe('endCallTool', () => {
  it('lets the model end the call after saying goodbye, hidden while greeting', async () => {
    const model = new ScriptedLLM().for(Concierge, [
      { say: 'Hello, how can I help?' },
      { toolCalls: [{ name: 'end_call' }] },
      { say: 'Goodbye!' },
    ]);
    const caller = await SimulatedCaller.start({ agent: new Concierge(), llm: model });
    try {
      const closed = new Promise((r) => caller.session.once(voice.AgentSessionEventTypes.Close, r));
      await caller.say("that's all, bye");
      await closed;
      expect(caller.isClosed).toBe(true);
      expect(caller.agentLines).toEqual(['Hello, how can I help?', 'Goodbye!']);
      const asked = model.requestsFor(Concierge);
      expect(asked[0]?.tools).not.toContain('end_call');
      expect(asked[1]?.tools).toContain('end_call');
      model.assertComplete();
    } finally {
      await caller.close();
    }
  });
});

describe('endCall', () => {
  class Done extends voice.Agent {
    override async onEnter(): Promise<void> {
      await endCall(this.session, { goodbye: 'Thanks for calling. Goodbye.' });
    }
  }

  it('says goodbye, then closes the session', async () => {
    const caller = await SimulatedCaller.start({
      agent: new Done({ instructions: 'x' }),
      llm: new ScriptedLLM(),
    });
    // Nobody but endCall() asked the session to close.
    expect(caller.session._closing || caller.isClosed).toBe(true);
    await caller.close();
    expect(caller.agentLines).toEqual(['Thanks for calling. Goodbye.']);
  });
});
