import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTasklineError } from '../../src/core/errors.js';
import { ScriptedLLM, type ScriptedRequest } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** An inline task with an explicit id, so scripts can key on the id. */
class ColorTask extends voice.AgentTask<string> {
  constructor() {
    super({
      id: 'color_task',
      instructions: 'Ask for the favourite colour.',
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

/** The caller-facing agent (id "desk", derived from the class name by upstream). */
class Desk extends voice.Agent {
  readonly colors: string[] = [];

  constructor() {
    super({
      instructions: 'Front desk.',
      tools: {
        ask_color: llm.tool({
          description: 'Ask the caller for a colour.',
          execute: async () => {
            const color = await new ColorTask().run();
            this.colors.push(color);
            return `colour is ${color}`;
          },
        }),
        lookup: llm.tool({
          description: 'Look something up.',
          parameters: z.object({ q: z.string() }),
          execute: async ({ q }) => ({ found: q, count: q.length }),
        }),
      },
    });
  }
}

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function call(model: ScriptedLLM, agent: voice.Agent = new Desk()) {
  caller = await SimulatedCaller.start({ agent, llm: model });
  return caller;
}

/** The calls a turn made, as (name, callId) pairs. */
function calls(run: voice.testing.RunResult): Array<[string, string]> {
  return run.events.flatMap((e) =>
    e.type === 'function_call' ? [[e.item.name, e.item.callId] as [string, string]] : [],
  );
}

function thrown(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('ScriptedLLM keying', () => {
  it('answers by agent class and by task id, counting turns per key', async () => {
    const model = new ScriptedLLM()
      .for(Desk, [{ toolCalls: [{ name: 'ask_color' }] }, { say: 'Teal, lovely.' }])
      .for('color_task', [
        { say: 'What is your favourite colour?' },
        { toolCalls: [{ name: 'submit', args: { color: 'teal' } }] },
      ]);
    const desk = new Desk();
    const c = await call(model, desk);
    await c.say('I want to tell you my colour');
    await c.say('teal');

    expect(c.agentLines).toEqual(['What is your favourite colour?', 'Teal, lovely.']);
    expect(desk.colors).toEqual(['teal']);
    expect(model.requests.map((r) => [r.agentId, r.key, r.turn])).toEqual([
      ['desk', 'Desk', 0],
      ['color_task', 'color_task', 0],
      ['color_task', 'color_task', 1],
      ['desk', 'Desk', 1],
    ]);
    expect(model.requestsFor(Desk).map((r) => r.turn)).toEqual([0, 1]);
    expect(model.requestsFor('color_task').map((r) => r.turn)).toEqual([0, 1]);
    expect(model.requestsFor(ColorTask)).toEqual(model.requestsFor('color_task'));
    expect(model.requestsFor(Desk).every((r) => r.agent === desk)).toBe(true);
    model.assertComplete();
  });

  it('prefers an id script over a class script for the same agent', async () => {
    const model = new ScriptedLLM()
      .for(Desk, [{ say: 'by class' }])
      .for('desk', [{ say: 'by id' }]);
    const c = await call(model);
    await c.say('hi');
    expect(c.agentLines).toEqual(['by id']);
    expect(model.requests[0]?.key).toBe('desk');
    expect(() => model.assertComplete()).toThrow(/Desk: 1 step\(s\) never used/);
  });

  it('appends steps when the same key is scripted twice', async () => {
    const model = new ScriptedLLM().for(Desk, [{ say: 'one' }]).for(Desk, [{ say: 'two' }]);
    const c = await call(model);
    await c.say('a');
    await c.say('b');
    expect(c.agentLines).toEqual(['one', 'two']);
    model.assertComplete();
  });

  it('falls back to "*" for an agent with no script of its own', async () => {
    const model = new ScriptedLLM().for('*', [{ say: 'fallback answer' }]);
    const c = await call(model);
    await c.say('hello');
    expect(c.agentLines).toEqual(['fallback answer']);
    expect(model.requests.map((r) => [r.agentId, r.key, r.turn])).toEqual([['desk', '*', 0]]);
    model.assertComplete();
  });

  it('does not fall back to "*" once an agent has used up its own script', async () => {
    const model = new ScriptedLLM()
      .for(Desk, [{ say: 'scripted hello' }])
      .for('*', [{ say: 'fallback answer' }]);
    const c = await call(model);
    await c.say('hello');
    await c.say('anything else?');
    expect(c.agentLines).toEqual(['scripted hello']);
    expect(model.unscripted.map((r) => [r.agentId, r.key, r.lastUserText])).toEqual([
      ['desk', undefined, 'anything else?'],
    ]);
  });

  it('answers with the "*" script when not bound to a session', async () => {
    const model = new ScriptedLLM().for('*', [{ say: 'unbound reply' }]);
    model.on('error', () => undefined);
    const chatCtx = llm.ChatContext.empty();
    chatCtx.addMessage({ role: 'user', content: 'hi' });
    const chunks: llm.ChatChunk[] = [];
    for await (const chunk of model.chat({ chatCtx })) chunks.push(chunk);
    expect(chunks.map((ch) => ch.delta?.content)).toEqual(['unbound reply']);
    expect(model.requests.map((r) => [r.agentId, r.agent, r.key])).toEqual([
      ['unbound', undefined, '*'],
    ]);
  });
});

describe('ScriptedLLM steps', () => {
  it('lets a step be a function of the request (tool output parsed, user text, turn)', async () => {
    const seen: ScriptedRequest[] = [];
    const model = new ScriptedLLM().for(Desk, [
      { toolCalls: [{ name: 'lookup', args: { q: 'bus times' } }] },
      (req) => {
        seen.push(req);
        const value = req.lastToolOutput?.value as { found: string; count: number };
        return { say: `Found ${value.found} (${value.count}) on turn ${req.turn}.` };
      },
    ]);
    const c = await call(model);
    await c.say('when is the bus?');
    expect(c.agentLines).toEqual(['Found bus times (9) on turn 1.']);
    expect(seen[0]?.lastUserText).toBe('when is the bus?');
    expect(seen[0]?.lastToolOutput).toEqual({
      name: 'lookup',
      output: '{"found":"bus times","count":9}',
      value: { found: 'bus times', count: 9 },
      isError: false,
    });
    model.assertComplete();
  });

  it('sends unscripted requests to the respond hatch; undefined leaves them unscripted', async () => {
    const model = new ScriptedLLM({
      respond: (req) =>
        req.lastUserText === 'ping' ? { say: `pong from ${req.agentId}` } : undefined,
    });
    const c = await call(model);
    await c.say('ping');
    await c.say('something else');
    expect(c.agentLines).toEqual(['pong from desk']);
    expect(model.requests.map((r) => [r.key, r.lastUserText])).toEqual([
      [undefined, 'ping'],
      [undefined, 'something else'],
    ]);
    expect(model.unscripted.map((r) => r.lastUserText)).toEqual(['something else']);
    expect(() => model.assertComplete()).toThrow(/unscripted call #0 while desk was active/);
  });

  it('gives every tool call a unique call id, within and across turns', async () => {
    const model = new ScriptedLLM().for(Desk, [
      {
        toolCalls: [
          { name: 'lookup', args: { q: 'a' } },
          { name: 'lookup', args: { q: 'b' } },
        ],
      },
      { say: 'Two found.' },
      { toolCalls: [{ name: 'lookup', args: { q: 'c' } }] },
      { say: 'One found.' },
    ]);
    const c = await call(model);
    const first = await c.say('find a and b');
    const second = await c.say('find c');
    const all = [...calls(first), ...calls(second)];
    expect(all.map(([name]) => name)).toEqual(['lookup', 'lookup', 'lookup']);
    expect(new Set(all.map(([, id]) => id)).size).toBe(3);
    expect(c.agentLines).toEqual(['Two found.', 'One found.']);
    model.assertComplete();
  });

  it('makes a failing step surface as a session error, and the call goes on', async () => {
    const model = new ScriptedLLM().for(Desk, [
      { fail: 'model outage' },
      { say: 'Sorry, I am back.' },
    ]);
    const c = await call(model);
    const errors: string[] = [];
    c.session.on(voice.AgentSessionEventTypes.Error, (ev) => {
      const error = 'error' in ev.error ? ev.error.error : undefined;
      errors.push(error instanceof Error ? error.message : String(error));
    });
    await c.say('hello?');
    expect(errors).toEqual(['scripted failure: model outage']);
    expect(c.agentLines).toEqual([]);
    await c.say('hello again');
    expect(c.agentLines).toEqual(['Sorry, I am back.']);
    expect(model.requests.map((r) => r.turn)).toEqual([0, 1]);
    model.assertComplete();
  });
});

describe('ScriptedLLM recording and assertComplete', () => {
  it('records the messages and the tools offered on every call', async () => {
    const model = new ScriptedLLM().for(Desk, [{ say: 'Hi there.' }, { say: 'Bye.' }]);
    const c = await call(model);
    await c.say('hello');
    await c.say('goodbye');
    const [first, second] = model.requests;
    expect(first?.tools.sort()).toEqual(['ask_color', 'lookup']);
    expect(first?.messages).toEqual([
      { role: 'system', text: 'Front desk.' },
      { role: 'user', text: 'hello' },
    ]);
    expect(second?.messages).toEqual([
      { role: 'system', text: 'Front desk.' },
      { role: 'user', text: 'hello' },
      { role: 'assistant', text: 'Hi there.' },
      { role: 'user', text: 'goodbye' },
    ]);
    expect(second?.lastUserText).toBe('goodbye');
    expect(second?.lastToolOutput).toBeUndefined();
  });

  it('records the task tools while a task is active', async () => {
    const model = new ScriptedLLM()
      .for(Desk, [{ toolCalls: [{ name: 'ask_color' }] }])
      .for('color_task', [{ say: 'Which colour?' }]);
    const c = await call(model);
    await c.say('colour time');
    expect(model.requestsFor('color_task')[0]?.tools).toEqual(['submit']);
    expect(model.requestsFor('color_task')[0]?.messages[0]).toEqual({
      role: 'system',
      text: 'Ask for the favourite colour.',
    });
  });

  it('lists every unconsumed step and every unscripted call in one error', async () => {
    const model = new ScriptedLLM()
      .for(Desk, [{ say: 'Hello.' }])
      .for('color_task', [{ say: 'never' }, { say: 'never either' }])
      .for('*', [{ say: 'spare' }]);
    const c = await call(model);
    await c.say('hi');
    await c.say('are you there?');
    const error = thrown(() => model.assertComplete());
    expect(isTasklineError(error) && error.code).toBe('script_mismatch');
    expect((error as Error).message).toBe(
      [
        'The scripted model did not run as written:',
        '  color_task: 2 step(s) never used',
        '  *: 1 step(s) never used',
        '  unscripted call #0 while desk was active',
      ].join('\n'),
    );
  });

  it('passes when every step was used and nothing was unscripted', async () => {
    const model = new ScriptedLLM().for(Desk, [{ say: 'Hello.' }]);
    const c = await call(model);
    expect(() => model.assertComplete()).toThrow(/Desk: 1 step\(s\) never used/);
    await c.say('hi');
    expect(() => model.assertComplete()).not.toThrow();
  });
});
