// What a capture publishes it listens for (`call.expectation`, the `expecting` event): the kind
// of answer, the words a recogniser should favour, and a judge built from the task's own parser
// (a whole answer is complete, a prefix incomplete, free speech unknown). A pending read-back
// publishes a yes/no; the expectation is released when the task stops waiting.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { date, freeText, number, phone, yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { menu } from '../../src/telephony/menu.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** Runs `start()` from onEnter and keeps its outcome. */
async function call<T>(start: () => Promise<Outcome<T>>) {
  const outcomes: Outcome<T>[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      outcomes.push(await start());
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Line({ instructions: 'line' }),
    llm: new ScriptedLLM(),
  });
  return { caller, outcomes };
}

function judge(c: SimulatedCaller, texts: string[]): Record<string, string | undefined> {
  const e = c.call.expectation;
  return Object.fromEntries(texts.map((t) => [t, e?.judge(t)]));
}

describe('the expectation a yes/no question publishes', () => {
  it('is a yesNo with yes/no words, judged by the parser, released when answered', async () => {
    const { caller, outcomes } = await call(() =>
      yesNo({ name: 'consent', question: 'May we text you?' }).run(),
    );
    const e = caller.call.expectation;
    expect(e).toMatchObject({ task: 'consent', kind: 'yesNo' });
    expect(e?.phrases).toEqual(expect.arrayContaining(['yes', 'no']));
    expect(judge(caller, ['yes', 'no thanks', 'um', 'well it is', 'what is this about'])).toEqual({
      yes: 'complete',
      'no thanks': 'complete',
      um: 'incomplete',
      'well it is': 'incomplete',
      'what is this about': 'unknown',
    });
    await caller.say('yes');
    expect(outcomes).toMatchObject([{ status: 'ok', value: true }]);
    expect(caller.call.expectation).toBeUndefined();
  });
});

describe('the expectation of digits and menus', () => {
  it('collectDigits: a proper prefix of the digits is incomplete, the count reached complete', async () => {
    const { caller } = await call(() =>
      collectDigits({ name: 'pin', prompt: 'Your PIN?', minDigits: 4, maxDigits: 4 }).run(),
    );
    expect(caller.call.expectation).toMatchObject({ task: 'pin', kind: 'digits' });
    expect(caller.call.expectation?.phrases).toContain('seven');
    expect(
      judge(caller, ['four three two', 'four three two one', 'my pin is', 'I forgot it']),
    ).toEqual({
      'four three two': 'incomplete',
      'four three two one': 'complete',
      'my pin is': 'incomplete',
      'I forgot it': 'unknown',
    });
    await caller.dtmf('4321');
    expect(caller.call.expectation).toBeUndefined();
  });

  it('collectDigits of 4 to 6 digits: 4 or 5 digits leave the timing to the session', async () => {
    const { caller } = await call(() =>
      collectDigits({ name: 'code', prompt: 'Your code?', minDigits: 4, maxDigits: 6 }).run(),
    );
    expect(judge(caller, ['1 2 3', '1 2 3 4', '1 2 3 4 5 6'])).toEqual({
      '1 2 3': 'incomplete',
      '1 2 3 4': 'unknown',
      '1 2 3 4 5 6': 'complete',
    });
  });

  it('menu: a choice with the options and synonyms as phrases', async () => {
    const { caller } = await call(() =>
      menu({
        name: 'main_menu',
        options: {
          '1': { label: 'billing', synonyms: ['invoice'], value: 'billing' },
          '2': { label: 'an agent', synonyms: ['operator'], value: 'agent' },
        },
        repeatKey: '*',
      }).run(),
    );
    const e = caller.call.expectation;
    expect(e).toMatchObject({ task: 'main_menu', kind: 'choice' });
    expect(e?.phrases).toEqual(['billing', 'invoice', 'an agent', 'operator', 'repeat']);
    expect(
      judge(caller, ['billing please', 'press two', 'I was charged twice last month']),
    ).toEqual({
      'billing please': 'complete',
      'press two': 'complete',
      'I was charged twice last month': 'unknown',
    });
  });

  it('freeText leaves the end of the turn to the session', async () => {
    const { caller } = await call(() =>
      freeText({ name: 'comment', question: 'Any comment?' }).run(),
    );
    expect(caller.call.expectation).toMatchObject({ kind: 'freeText' });
    expect(judge(caller, ['the driver', 'the driver was late'])).toEqual({
      'the driver': 'unknown',
      'the driver was late': 'unknown',
    });
  });
});

describe('answers that may still grow', () => {
  it('a number ending in a tens word, a date with no year, are not called complete', async () => {
    const { caller } = await call(async () => {
      const n = await number({ name: 'guests', question: 'How many guests?', max: 500 }).run();
      await date({ name: 'birthday', question: 'Your date of birth?' }).run();
      return n;
    });
    expect(caller.call.expectation).toMatchObject({ task: 'guests', kind: 'number' });
    expect(judge(caller, ['twenty', 'twenty five', 'one hundred', 'seven'])).toEqual({
      twenty: 'unknown',
      'twenty five': 'complete',
      'one hundred': 'unknown',
      seven: 'complete',
    });
    await caller.say('twelve');
    expect(caller.call.expectation).toMatchObject({ task: 'birthday', kind: 'date' });
    expect(
      judge(caller, [
        'March third',
        'March third nineteen eighty',
        'March 3rd, 1980',
        'my birthday is',
      ]),
    ).toEqual({
      'March third': 'unknown',
      'March third nineteen eighty': 'complete',
      'March 3rd, 1980': 'complete',
      'my birthday is': 'incomplete',
    });
  });
});

describe('a pending read-back', () => {
  it('publishes a yes/no judged with the task parser for a correction, then releases it', async () => {
    const kinds: Array<string | undefined> = [];
    const { caller, outcomes } = await call(() =>
      phone({ name: 'callback', question: 'What number should we call?' }).run(),
    );
    caller.call.on('expecting', (e) => kinds.push(e?.kind));
    expect(caller.call.expectation).toMatchObject({ task: 'callback', kind: 'phone' });
    // Asking is no read-back (an audio caller answers a question asked again as meant).
    expect(caller.call.expectation?.readingBack).toBeUndefined();
    expect(
      judge(caller, [
        'my number is',
        'four one five five five five',
        'four one five five five five zero one nine nine',
      ]),
    ).toEqual({
      'my number is': 'incomplete',
      'four one five five five five': 'incomplete',
      'four one five five five five zero one nine nine': 'complete',
    });
    await caller.say('four one five five five five zero one nine nine');
    expect(caller.agentLines.at(-1)).toBe('I have 4 1 5, 5 5 5, 0 1 9 9. Is that right?');
    const e = caller.call.expectation;
    expect(e).toMatchObject({ task: 'callback', kind: 'yesNo', readingBack: true });
    expect(e?.phrases).toEqual(expect.arrayContaining(['yes', 'no']));
    expect(
      judge(caller, ['yes', 'no', 'no, the last four are 1 2 3 4', "no it's", 'hmm let me check']),
    ).toEqual({
      yes: 'complete',
      no: 'complete',
      'no, the last four are 1 2 3 4': 'complete',
      "no it's": 'incomplete',
      'hmm let me check': 'unknown',
    });
    await caller.say('yes');
    expect(outcomes).toMatchObject([{ status: 'ok', value: '+14155550199', confirmed: true }]);
    expect(kinds).toEqual(['yesNo', undefined]);
    expect(caller.call.expectation).toBeUndefined();
  });
});
