import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callOf } from '../../src/core/call.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

class AskColor extends voice.AgentTask<string> {
  constructor() {
    super({
      instructions: 'Ask the caller for their favourite colour.',
      tools: {
        submit: llm.tool({
          description: 'Record the colour.',
          parameters: z.object({ color: z.string() }),
          execute: async ({ color }) => {
            this.complete(color);
          },
        }),
      },
    });
  }
  override async onEnter(): Promise<void> {
    this.session.generateReply();
  }
}

class Front extends voice.Agent {
  results: string[] = [];
  constructor() {
    super({
      instructions: 'Front desk.',
      tools: {
        ask_color: llm.tool({
          description: 'Ask for a colour.',
          execute: async () => {
            const color = await new AskColor().run();
            this.results.push(color);
            return `colour is ${color}`;
          },
        }),
        wait_key: llm.tool({
          description: 'Wait for one key or 5 s.',
          execute: async () => {
            const key = await callOf(this.session).nextDtmf(5000);
            return key ? `key ${key.digit}` : 'no key';
          },
        }),
      },
    });
  }
  override async onEnter(): Promise<void> {
    this.session.generateReply();
  }
}

describe('SimulatedCaller + ScriptedLLM', () => {
  it('plays a call through an inline task, keyed by agent and turn', async () => {
    const model = new ScriptedLLM()
      .for(Front, [
        { say: 'Hello, how can I help?' },
        { toolCalls: [{ name: 'ask_color' }] },
        { say: 'Blue it is.' },
      ])
      .for(AskColor, [
        { say: 'What is your favourite colour?' },
        { toolCalls: [{ name: 'submit', args: { color: 'blue' } }] },
      ]);
    const agent = new Front();
    const caller = await SimulatedCaller.start({ agent, llm: model });
    try {
      await caller.say('I want to tell you my colour');
      expect(caller.session.currentAgent).toBeInstanceOf(AskColor);
      const run = await caller.say('blue');
      run.expect.containsFunctionCall({ name: 'submit', args: { color: 'blue' } });
      expect(agent.results).toEqual(['blue']);
      expect(caller.session.currentAgent).toBe(agent);
      expect(caller.agentLines).toEqual([
        'Hello, how can I help?',
        'What is your favourite colour?',
        'Blue it is.',
      ]);
      model.assertComplete();
      const taskRequests = model.requestsFor(AskColor);
      expect(taskRequests.map((r) => r.turn)).toEqual([0, 1]);
      expect(taskRequests[1]!.tools).toContain('submit');
      expect(taskRequests[1]!.lastUserText).toBe('blue');
    } finally {
      await caller.close();
    }
  });

  it('delivers DTMF through the call context and fires timers on the virtual clock', async () => {
    const model = new ScriptedLLM().for(Front, [
      { say: 'Hi.' },
      { toolCalls: [{ name: 'wait_key' }] },
      (req) => ({ say: `Got ${req.lastToolOutput?.value}.` }),
      { toolCalls: [{ name: 'wait_key' }] },
      (req) => ({ say: `Then ${req.lastToolOutput?.value}.` }),
    ]);
    const caller = await SimulatedCaller.start({ agent: new Front(), llm: model });
    try {
      await caller.say('press a key');
      expect(caller.call.isWaitingForCaller).toBe(true);
      expect(caller.clock.pendingTimers).toBe(1);
      await caller.dtmf('7');
      expect(caller.agentLines.at(-1)).toBe('Got key 7.');
      await caller.say('again');
      const before = caller.clock.now();
      await caller.silence(5000);
      expect(caller.clock.now() - before).toBe(5000);
      expect(caller.agentLines.at(-1)).toBe('Then no key.');
      expect(caller.call.isWaitingForCaller).toBe(false);
      model.assertComplete();
    } finally {
      await caller.close();
    }
  });

  it('hang-up ends the call through the call context', async () => {
    const model = new ScriptedLLM().for(Front, [
      { say: 'Hi.' },
      { toolCalls: [{ name: 'wait_key' }] },
    ]);
    const caller = await SimulatedCaller.start({ agent: new Front(), llm: model });
    await caller.say('press');
    await caller.hangup();
    expect(caller.isClosed).toBe(true);
    expect(caller.call.hungUp?.reason).toBe('caller hung up');
    await expect(caller.say('hello?')).rejects.toThrow(/call has ended/);
  });

  it('reports unconsumed steps and unscripted calls', async () => {
    const model = new ScriptedLLM().for(Front, [{ say: 'Hi.' }, { say: 'never used' }]);
    const caller = await SimulatedCaller.start({ agent: new Front(), llm: model });
    try {
      expect(() => model.assertComplete()).toThrow(/Front: 1 step\(s\) never used/);
    } finally {
      await caller.close();
    }
  });
});
