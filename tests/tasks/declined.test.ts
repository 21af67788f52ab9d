// Issue 24, item 5: a refusal is never stored as an answer. A parser can say "declined" (a
// `declined` parse result), and the prebuilt freeText, optional by default, reads refusals and
// "nothing to add" replies as declined — in a flow, a skippable step is then skipped.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { announce } from '../../src/flows/announce.js';
import { flow } from '../../src/flows/builder.js';
import type { Outcome } from '../../src/outcome.js';
import { defineTask } from '../../src/tasks/define.js';
import { freeText as freeTextParser } from '../../src/tasks/parsers/free-text.js';
import { freeText } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function call<T>(start: () => Promise<T>) {
  const results: T[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      results.push(await start());
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Line({ instructions: 'line' }),
    llm: new ScriptedLLM(),
  });
  return { caller, results };
}

const REFUSALS = [
  'skip',
  'no',
  'nothing',
  'no thanks',
  'nope, that’s all',
  "nope, that's all",
  'No, nothing else.',
  "I'd rather not say",
  "um, I'd rather not",
  'nah',
  'not really',
  'none',
  "that's it",
  'nothing to add',
  "no, I'm good",
  'pass',
];

const ANSWERS = [
  'no, the driver was rude',
  'nothing arrived on time',
  'the queue was far too long',
  'none of the staff helped me',
  'skip the small talk, the food was cold',
  'not really happy with the delivery',
  "that's it, the box was crushed",
];

describe('freeText (optional by default)', () => {
  it.each(REFUSALS)('%j is declined, not an answer', (text) => {
    expect(freeTextParser(text, { maxChars: 300, optional: true })).toEqual({
      kind: 'declined',
    });
  });

  it.each(ANSWERS)('%j is an answer', (text) => {
    expect(freeTextParser(text, { maxChars: 300, optional: true })).toEqual({
      kind: 'match',
      value: text,
    });
  });

  it('optional: false keeps a bare "no" as the answer, but not a refusal', () => {
    expect(freeTextParser('no', { maxChars: 300, optional: false })).toEqual({
      kind: 'match',
      value: 'no',
    });
    expect(freeTextParser('nothing', { maxChars: 300 })).toEqual({
      kind: 'match',
      value: 'nothing',
    });
    expect(freeTextParser('no thanks', { maxChars: 300 })).toEqual({ kind: 'declined' });
  });

  it.each(['no thanks', 'nope, that’s all', 'skip', 'nothing'])(
    'the task resolves declined on %j, without a model call',
    async (text) => {
      const comment = freeText({ name: 'comment', question: 'Anything else you want to tell us?' });
      const model = new ScriptedLLM();
      const { caller, results } = await call(() => comment.run());
      await caller.say(text);
      expect(results).toEqual([
        { status: 'declined', attempts: 1, reason: `caller declined: "${text}"` },
      ]);
      expect(model.requestsFor('comment')).toHaveLength(0);
    },
  );

  it('a skippable freeText step in a flow is skipped, nothing stored', async () => {
    const survey = flow('feedback')
      .step('comment', freeText({ name: 'comment', question: 'Any comment on the delivery?' }), {
        skippable: true,
        next: 'bye',
      })
      .step('bye', announce('Thanks, goodbye.'));
    const { caller, results } = await call(() => survey.run());
    await caller.say('nope, that’s all');
    expect(results).toMatchObject([{ status: 'completed' }]);
    expect((results[0] as { answers: unknown }).answers).toEqual({});
    expect(caller.agentLines.at(-1)).toBe('Thanks, goodbye.');
  });
});

describe('a custom parse that says declined', () => {
  it('ends the task as declined with the parser reason', async () => {
    const plate = defineTask({
      name: 'plate',
      instructions: 'Get the licence plate.',
      prompt: 'What is your licence plate?',
      schema: z.string(),
      modelFallback: false,
      parse: (text) =>
        /no car/i.test(text)
          ? { kind: 'declined', reason: 'the caller has no car' }
          : { kind: 'nomatch' },
    });
    const { caller, results } = await call(() => plate.run());
    await caller.say('I have no car');
    expect(results).toEqual([
      { status: 'declined', attempts: 1, reason: 'the caller has no car' },
    ] satisfies Outcome<string>[]);
  });
});
