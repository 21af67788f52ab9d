import { llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Outcome } from '../../src/outcome.js';
import { defineTask, type TaskDefinition } from '../../src/tasks/define.js';
import { digits } from '../../src/tasks/parsers/digits.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** A front desk whose `capture` tool runs the task under test and keeps its outcome. */
class Desk<T> extends voice.Agent {
  outcomes: Outcome<T>[] = [];
  constructor(task: TaskDefinition<T>) {
    super({
      instructions: 'Front desk.',
      tools: {
        capture: llm.tool({
          description: 'Capture the value.',
          execute: async () => {
            const outcome = await task.run();
            this.outcomes.push(outcome);
            return outcome.status;
          },
        }),
      },
    });
  }
}

const account = defineTask({
  name: 'account',
  instructions: 'Collect the 6-digit account number.',
  prompt: 'Please say your 6-digit account number.',
  schema: z.object({ account: z.string().regex(/^\d{6}$/) }),
  parse: (text) => {
    const r = digits(text, { minLength: 6, maxLength: 6 });
    return r.kind === 'match' ? { kind: 'match', value: { account: r.value } } : r;
  },
  retry: { noInputTimeoutMs: 5000 },
});

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start<T>(task: TaskDefinition<T>, model: ScriptedLLM) {
  const desk = new Desk(task);
  model.for(Desk, [{ toolCalls: [{ name: 'capture' }] }, { say: 'Thanks.' }]);
  caller = await SimulatedCaller.start({ agent: desk, llm: model });
  await caller.say('I want to give you a number');
  return { desk, caller };
}

describe('defineTask', () => {
  it('resolves a parsed answer without any model call inside the task', async () => {
    const model = new ScriptedLLM();
    const { desk, caller } = await start(account, model);
    expect(caller.agentLines).toContain('Please say your 6-digit account number.');
    await caller.say('four one five five five one');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: { account: '415551' }, attempts: 1, modality: 'speech' },
    ]);
    expect(model.requestsFor('account')).toHaveLength(0);
    expect(caller.agentLines.at(-1)).toBe('Thanks.');
    model.assertComplete();
  });

  it('re-prompts on silence and ends as noinput at the cap', async () => {
    const model = new ScriptedLLM();
    const { desk, caller } = await start(
      account.with({ retry: { maxNoInput: 2, noInputTimeoutMs: 5000 } }),
      model,
    );
    await caller.silence(5000);
    expect(caller.agentLines.at(-1)).toBe(
      "Sorry, I didn't hear anything. Please say your 6-digit account number.",
    );
    await caller.silence(5000);
    expect(desk.outcomes).toEqual([
      { status: 'noinput', attempts: 2, reason: 'no answer after 2 prompts' },
    ]);
    model.assertComplete();
  });

  it('counts a model submission that fails the schema as invalid and accepts the retry', async () => {
    const model = new ScriptedLLM().for('account', [
      { toolCalls: [{ name: 'submit', args: { account: '12' } }] },
      (req) => ({ say: req.lastToolOutput?.isError ? 'That number is too short.' : 'Hm?' }),
    ]);
    const { desk, caller } = await start(account, model);
    await caller.say('the one printed on my card');
    expect(caller.agentLines.at(-1)).toBe('That number is too short.');
    await caller.say('one two three four five six');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: { account: '123456' }, attempts: 2, modality: 'speech' },
    ]);
    model.assertComplete();
  });

  it('confirms, spells the value back after a no, and accepts the corrected answer', async () => {
    const model = new ScriptedLLM();
    const { desk, caller } = await start(account.with({ confirm: 'always' }), model);
    await caller.say('1 2 3 4 5 6');
    expect(caller.agentLines.at(-1)).toBe('I have 123456. Is that right?');
    await caller.say('no');
    expect(caller.agentLines.at(-1)).toBe(
      'Sorry about that. Please say your 6-digit account number.',
    );
    await caller.say('6 5 4 3 2 1');
    expect(caller.agentLines.at(-1)).toBe('I have 6 5 4 3 2 1. Is that right?');
    await caller.say('yes');
    expect(desk.outcomes).toEqual([
      {
        status: 'ok',
        value: { account: '654321' },
        attempts: 2,
        confirmed: true,
        modality: 'speech',
      },
    ]);
    expect(model.requestsFor('account')).toHaveLength(0);
  });

  it('resolves declined when the model reports a refusal', async () => {
    const model = new ScriptedLLM().for('account', [
      { toolCalls: [{ name: 'report_declined', args: { reason: 'will not share it' } }] },
    ]);
    const { desk, caller } = await start(account, model);
    await caller.say('that is between me and my bank');
    expect(desk.outcomes).toEqual([
      { status: 'declined', attempts: 1, reason: 'will not share it' },
    ]);
  });

  it('resolves hangup mid-task and closes the call', async () => {
    const model = new ScriptedLLM();
    const { desk, caller } = await start(account, model);
    await caller.hangup();
    expect(desk.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller.isClosed).toBe(true);
  });

  it('rejects unbounded retry policies when the task is defined', () => {
    expect(() => account.with({ retry: { maxNoInput: Number.POSITIVE_INFINITY } })).toThrow(
      /retry.maxNoInput must be a whole number from 1 to 20/,
    );
  });
});

describe('keypad entry on a typed task', () => {
  it('takes a keyed number once no more digits fit, or after the inter-digit pause', async () => {
    const { number } = await import('../../src/tasks/prebuilt.js');
    const score = number({
      question: 'Score from 0 to 10?',
      min: 0,
      max: 10,
      integer: true,
      keypad: true,
    });
    const model = new ScriptedLLM();
    const first = await start(score, model);
    await first.caller.dtmf('7');
    expect(first.desk.outcomes).toEqual([
      { status: 'ok', value: 7, attempts: 1, modality: 'dtmf' },
    ]);
    await first.caller.close();

    const second = await start(score, new ScriptedLLM());
    await second.caller.dtmf('1');
    expect(second.desk.outcomes).toEqual([]);
    await second.caller.silence(3000);
    expect(second.desk.outcomes).toEqual([
      { status: 'ok', value: 1, attempts: 1, modality: 'dtmf' },
    ]);
    expect(model.requestsFor('number')).toHaveLength(0);
  });

  it('refuses keypad entry on a number with no maximum', async () => {
    const { number } = await import('../../src/tasks/prebuilt.js');
    expect(() => number({ question: 'How many?', keypad: true })).toThrow(/needs a whole `max`/);
  });
});
