import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { surveyFlow, THANKS_LINE } from '../../examples/survey/index.js';
import { flow } from '../../src/flows/builder.js';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/memory.js';
import type { FlowRunOptions } from '../../src/flows/runner.js';
import type { FlowResult, StepRecord } from '../../src/flows/types.js';
import type { Outcome } from '../../src/outcome.js';
import { defineTask } from '../../src/tasks/define.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const q = (name: string) => yesNo({ name, question: `${name}?` });

/** Runs a flow from the host agent's onEnter and keeps its result. */
function host<R>(run: () => Promise<FlowResult<R>>) {
  const box: { result?: FlowResult<R> } = {};
  class Host extends voice.Agent {
    constructor() {
      super({ id: 'host', instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await run();
    }
  }
  return { agent: new Host(), box };
}

describe('the flow runner', () => {
  it('runs inline from a tool and hands the call back to the calling agent', async () => {
    const results: Array<FlowResult<unknown>> = [];
    class Desk extends voice.Agent {
      constructor() {
        super({
          id: 'desk',
          instructions: 'Front desk.',
          tools: {
            survey: llm.tool({
              description: 'Run the survey.',
              execute: async () => {
                const result = await surveyFlow.run();
                results.push(result);
                return result.status;
              },
            }),
          },
        });
      }
    }
    const model = new ScriptedLLM().for(Desk, [
      { toolCalls: [{ name: 'survey' }] },
      { say: 'Thanks, back at the front desk.' },
    ]);
    caller = await SimulatedCaller.start({ agent: new Desk(), llm: model });
    await caller.say('I can do your survey');
    await caller.say('yes');
    await caller.say('eight');
    expect(results).toMatchObject([{ status: 'completed', value: { consent: true, score: 8 } }]);
    expect(caller.agentLines.slice(-2)).toEqual([THANKS_LINE, 'Thanks, back at the front desk.']);
    expect(caller.session.currentAgent).toBeInstanceOf(Desk);
    model.assertComplete();
  });

  it('nests a flow as a step, checkpointing it under its own key', async () => {
    const address = flow('address')
      .step(
        'zip',
        defineTask({
          name: 'zip',
          instructions: 'Get the ZIP code.',
          prompt: 'Your ZIP code?',
          schema: z.object({ zip: z.string().regex(/^\d{5}$/) }),
          parse: (t) =>
            /^\d{5}$/.test(t.trim())
              ? { kind: 'match', value: { zip: t.trim() } }
              : { kind: 'nomatch' },
        }),
      )
      .step('same', q('same'));
    const outer = flow('outer')
      .step('start', q('start'))
      .step('address', address)
      .step('done', q('done'));
    const checkpoints = new MemoryCheckpointStore();
    const { agent, box } = host(() => outer.run({ checkpoints, callId: 'nested' }));
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    await caller.say('yes');
    await caller.say('94110');
    await caller.say('no');
    await caller.say('yes');
    expect(caller.agentLines).toEqual(['start?', 'Your ZIP code?', 'same?', 'done?']);
    expect(box.result).toMatchObject({
      status: 'completed',
      value: { start: true, address: { zip: { zip: '94110' }, same: false }, done: true },
    });
    const inner = await checkpoints.load({ flow: 'outer/address', callId: 'nested' });
    expect(inner?.state).toMatchObject({ status: 'completed', path: ['zip', 'same'] });
  });

  it('escalates a failed step: a value continues the flow, none ends it as escalated', async () => {
    const escalations: string[] = [];
    const f = (value: boolean | undefined) =>
      flow('esc')
        .step('a', q('a').with({ retry: { maxNoInput: 1 } }), {
          onFailure: async (outcome, ctx) => {
            escalations.push(`${ctx.step}:${outcome.status}`);
            return value === undefined
              ? { status: 'transferred', attempts: 1, reason: 'sent to a human' }
              : { status: 'ok', value, attempts: 1 };
          },
        })
        .step('b', q('b'));
    const ok = host(() => f(true).run());
    caller = await SimulatedCaller.start({ agent: ok.agent, llm: new ScriptedLLM() });
    await caller.silence(8_000);
    expect(caller.agentLines.at(-1)).toBe('b?');
    await caller.say('no');
    expect(ok.box.result).toMatchObject({ status: 'completed', value: { a: true, b: false } });
    expect(ok.box.result?.report.steps[0]).toMatchObject({
      step: 'a',
      outcome: 'escalated',
      noInput: 1,
      reason: 'no answer after 1 prompts',
    });
    await caller.close();

    const none = host(() => f(undefined).run());
    caller = await SimulatedCaller.start({ agent: none.agent, llm: new ScriptedLLM() });
    await caller.silence(8_000);
    expect(none.box.result).toMatchObject({
      status: 'escalated',
      step: 'a',
      outcome: { status: 'transferred', reason: 'sent to a human' },
    });
    expect(escalations).toEqual(['a:noinput', 'a:noinput']);
  });

  it('bounds a plain task with timeoutMs on the call clock and applies its failure policy', async () => {
    class Silent extends voice.AgentTask<Outcome<string>> {
      constructor() {
        super({ id: 'silent', instructions: 'never completes' });
      }
      override async onEnter(): Promise<void> {
        this.session.say('Hold the line.');
      }
    }
    const f = flow('plain')
      .step('wait', () => new Silent(), { timeoutMs: 30_000, onFailure: 'skip' })
      .step('after', q('after'));
    const { agent, box } = host(() => f.run());
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    expect(caller.agentLines).toEqual(['Hold the line.']);
    await caller.silence(29_999);
    expect(caller.agentLines).toEqual(['Hold the line.']);
    await caller.silence(1);
    expect(caller.agentLines.at(-1)).toBe('after?');
    await caller.say('yes');
    expect(box.result).toMatchObject({ status: 'completed', value: { after: true } });
    expect(box.result?.report.steps[0]).toMatchObject({
      step: 'wait',
      outcome: 'skipped',
      durationMs: 30_000,
      reason: 'no result within 30000 ms',
    });
  });

  it('stops a bounded loop at maxVisits', async () => {
    const f = flow('loop')
      .step('ask', q('ask'), { next: 'again', maxVisits: 2 })
      .step('again', q('again'), { next: { true: 'ask', false: 'end' } });
    const { agent, box } = host(() => f.run());
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    for (let i = 0; i < 2; i++) {
      await caller.say('yes');
      await caller.say('yes');
    }
    expect(box.result).toMatchObject({
      status: 'failed',
      step: 'ask',
      outcome: { status: 'maxRetries', reason: 'step ran 2 times, its maxVisits' },
    });
  });

  it('starts each step from a fresh context plus a typed summary of the answers (no model call)', async () => {
    const pet = defineTask({
      name: 'pet',
      instructions: 'Get the name of their pet.',
      prompt: 'What is your pet called?',
      schema: z.object({ pet: z.string() }),
    });
    const run = (options: FlowRunOptions, context?: 'full') =>
      flow('ctx', context ? { context } : {})
        .step('dog', q('dog'), { label: 'owns a dog' })
        .step('pet', pet)
        .run(options);
    const model = new ScriptedLLM().for('pet', [
      { toolCalls: [{ name: 'submit', args: { pet: 'Rex' } }] },
    ]);
    const { agent, box } = host(() => run({}));
    caller = await SimulatedCaller.start({ agent, llm: model });
    await caller.say('yes I do');
    await caller.say('he is called Rex');
    expect(box.result).toMatchObject({
      status: 'completed',
      value: { dog: true, pet: { pet: 'Rex' } },
    });
    const [request] = model.requestsFor('pet');
    expect(request?.messages.map((m) => `${m.role}: ${m.text}`)).toEqual([
      expect.stringMatching(/^system: Get the name of their pet\./),
      'system: Answers the caller already gave in this ctx flow (do not ask them again):\n- dog (owns a dog): true',
      'assistant: What is your pet called?',
      'user: he is called Rex',
    ]);
    expect(model.requests).toHaveLength(1);
    await caller.close();

    const full = new ScriptedLLM().for('pet', [
      { toolCalls: [{ name: 'submit', args: { pet: 'Rex' } }] },
    ]);
    const second = host(() => run({}, 'full'));
    caller = await SimulatedCaller.start({ agent: second.agent, llm: full });
    await caller.say('yes I do');
    await caller.say('he is called Rex');
    expect(full.requestsFor('pet')[0]?.messages.map((m) => `${m.role}: ${m.text}`)).toEqual([
      expect.stringMatching(/^system: Get the name of their pet\./),
      'assistant: dog?',
      'user: yes I do',
      'assistant: What is your pet called?',
      'user: he is called Rex',
    ]);
  });

  it('can hand the next step a model-written summary of the conversation instead', async () => {
    const pet = defineTask({
      name: 'pet',
      instructions: 'Get the name of their pet.',
      prompt: 'What is your pet called?',
      schema: z.object({ pet: z.string() }),
    });
    const f = flow('summed', { context: 'model-summary' }).step('dog', q('dog')).step('pet', pet);
    // The summary is asked for while the flow itself is the active agent.
    const model = new ScriptedLLM()
      .for('summed', [{ say: 'The caller owns a dog.' }])
      .for('pet', [{ toolCalls: [{ name: 'submit', args: { pet: 'Rex' } }] }]);
    const { agent, box } = host(() => f.run());
    caller = await SimulatedCaller.start({ agent, llm: model });
    await caller.say('yes I do');
    await caller.say('Rex');
    expect(box.result).toMatchObject({
      status: 'completed',
      value: { dog: true, pet: { pet: 'Rex' } },
    });
    const [summary] = model.requestsFor('summed');
    expect(summary?.messages.at(-1)?.text).toBe(
      'Conversation to summarize:\n\n<assistant>\ndog?\n</assistant>\n<user>\nyes I do\n</user>',
    );
    expect(
      model
        .requestsFor('pet')[0]
        ?.messages.slice(1)
        .map((m) => `${m.role}: ${m.text}`),
    ).toEqual([
      'assistant: <chat_history_summary>\nThe caller owns a dog.\n</chat_history_summary>',
      'assistant: What is your pet called?',
      'user: Rex',
    ]);
    model.assertComplete();
  });

  it('emits step_started, step_completed and checkpoint events in order', async () => {
    const events: string[] = [];
    const records: StepRecord[] = [];
    const f = flow('ev').step('a', q('a')).step('b', q('b'));
    const { agent, box } = host(() => {
      const task = f.create({
        checkpoints: new MemoryCheckpointStore(),
        onStepCompleted: (r) => records.push(r),
      });
      task.on('step_started', (e) => events.push(`started ${e.step}#${e.visit}`));
      task.on('checkpoint', (c) => events.push(`checkpoint v${c.version} -> ${c.position}`));
      task.on('step_completed', (r) => events.push(`completed ${r.step} ${r.outcome}`));
      return task.run();
    });
    caller = await SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
    await caller.say('yes');
    await caller.say('no');
    expect(events).toEqual([
      'checkpoint v1 -> a',
      'started a#1',
      'checkpoint v2 -> b',
      'completed a ok',
      'started b#1',
      'checkpoint v3 -> end',
      'completed b ok',
      'checkpoint v4 -> end',
    ]);
    expect(records).toEqual(box.result?.report.steps);
  });
});
