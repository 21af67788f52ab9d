import { Future, llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';

class Orders extends voice.Agent {
  readonly release = new Future<void>();
  constructor() {
    super({
      instructions: 'Order desk.',
      tools: {
        lookup: llm.tool({
          description: 'Look up the order; takes a while.',
          execute: async (_args, { ctx }) => {
            await ctx.update('searching the warehouse');
            await this.release.await;
            return 'shipped yesterday';
          },
        }),
      },
    });
  }
}

describe('async tools through the simulated caller (workaround for livekit/agents-js#2354)', () => {
  it('speaks the final result of an async tool after later turns', async () => {
    const model = new ScriptedLLM().for(Orders, [
      { toolCalls: [{ name: 'lookup' }] },
      { say: 'I am checking on that now.' },
      { say: 'Anything else meanwhile?' },
      (req) => ({
        say: `Update: ${req.lastToolOutput?.output.includes('shipped') ? 'it shipped' : '?'}`,
      }),
    ]);
    const agent = new Orders();
    const caller = await SimulatedCaller.start({ agent, llm: model });
    try {
      await caller.say('where is my order?');
      expect(caller.agentLines).toEqual(['I am checking on that now.']);
      await caller.say('what are your opening hours?');
      expect(caller.agentLines.at(-1)).toBe('Anything else meanwhile?');
      agent.release.resolve();
      await caller.settle();
      expect(caller.agentLines.at(-1)).toBe('Update: it shipped');
      const outputs = caller.session.history.items.flatMap((i) =>
        i.type === 'function_call_output' ? [i.output] : [],
      );
      expect(outputs.join('\n')).toContain('shipped yesterday');
      model.assertComplete();
    } finally {
      await caller.close();
    }
  });
});
