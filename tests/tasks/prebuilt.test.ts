import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../../src/tasks/define.js';
import * as tasks from '../../src/tasks/prebuilt.js';
import type { ScriptStep } from '../../src/testing/scripted-llm.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startTask } from './desk.js';

/**
 * One prebuilt task and the caller lines that exercise it. `good` is resolved by the
 * task's parser unless `goodModel` says how the model submits it.
 */
interface Case<T> {
  def: TaskDefinition<T>;
  good: { say: string; value: T; model?: ScriptStep };
  other: { say: string; value: T; model?: ScriptStep };
  /** Understood but breaks a rule: a caller line the parser rejects, or a model submission. */
  invalid: { say: string } | { say: string; model: ScriptStep };
  /** A line no parser resolves (the model is asked). */
  unparsed: string;
}

const submit = (value: unknown): ScriptStep => ({
  toolCalls: [{ name: 'submit', args: { value } }],
});

const address = {
  street: '12 Main Street',
  city: 'Springfield',
  region: 'IL',
  postalCode: '62701',
  country: 'US',
};
const address2 = { ...address, street: '99 Elm Road' };

const cases: Record<string, Case<unknown>> = {
  yesNo: {
    def: tasks.yesNo({ question: 'Do you want a text message?' }),
    good: { say: 'yeah', value: true },
    other: { say: 'no thanks', value: false },
    invalid: { say: 'well it depends', model: submit('maybe') },
    unparsed: 'purple elephants',
  },
  choice: {
    def: tasks.choice({
      question: 'Billing or technical support?',
      options: [
        { value: 'billing', label: 'Billing', synonyms: ['invoice', 'bill'] },
        { value: 'support', label: 'Technical support', synonyms: ['help', 'broken'] },
      ],
    }),
    good: { say: 'it is about my invoice', value: 'billing' },
    other: { say: 'technical support please', value: 'support' },
    invalid: { say: 'sales I think', model: submit('sales') },
    unparsed: 'I am not sure really',
  },
  number: {
    def: tasks.number({
      question: 'How many tickets, one to ten?',
      min: 1,
      max: 10,
      integer: true,
    }),
    good: { say: 'seven', value: 7 },
    other: { say: 'three', value: 3 },
    invalid: { say: 'fifteen' },
    unparsed: 'as many as my family needs',
  },
  date: {
    def: tasks.date({ question: 'Which day?' }),
    good: { say: 'tomorrow', value: '2026-01-06' },
    other: { say: 'January 20th 2026', value: '2026-01-20' },
    invalid: { say: 'sometime soon', model: submit('next week') },
    unparsed: 'whenever suits you',
  },
  time: {
    def: tasks.time({ question: 'What time?' }),
    good: { say: 'half past three pm', value: '15:30' },
    other: { say: 'noon', value: '12:00' },
    invalid: { say: 'late-ish', model: submit('25:99') },
    unparsed: 'after my shift',
  },
  email: {
    def: tasks.email({ question: 'What is your email address?' }),
    good: { say: 'john dot smith at example dot com', value: 'john.smith@example.com' },
    other: { say: 'jane at example dot org', value: 'jane@example.org' },
    invalid: { say: 'my work one', model: submit('not an email') },
    unparsed: 'the one I always use',
  },
  phone: {
    def: tasks.phone({ question: 'What number should we call?' }),
    good: { say: 'four one five five five five one two three four', value: '+14155551234' },
    other: { say: '212 555 0199', value: '+12125550199' },
    invalid: { say: 'my cell', model: submit('123') },
    unparsed: 'the usual one',
  },
  personName: {
    def: tasks.personName({ question: 'What is your name?' }),
    good: { say: 'my name is John Smith', value: { first: 'John', last: 'Smith' } },
    other: { say: 'Jane Doe', value: { first: 'Jane', last: 'Doe' } },
    invalid: {
      say: 'you know me',
      model: { toolCalls: [{ name: 'submit', args: { first: '' } }] },
    },
    unparsed: 'why do you need that',
  },
  address: {
    def: tasks.address({ question: 'What is your address?' }),
    good: {
      say: '12 Main Street, Springfield, Illinois 62701',
      value: address,
      model: { toolCalls: [{ name: 'submit', args: address }] },
    },
    other: {
      say: '99 Elm Road, same city',
      value: address2,
      model: { toolCalls: [{ name: 'submit', args: address2 }] },
    },
    invalid: {
      say: 'Main Street',
      model: { toolCalls: [{ name: 'submit', args: { ...address, city: '' } }] },
    },
    unparsed: 'over by the river',
  },
  likert: {
    def: tasks.likert({ question: 'From one to five, how satisfied are you?' }),
    good: { say: 'four', value: 4 },
    other: { say: 'two', value: 2 },
    invalid: { say: 'nine' },
    unparsed: 'it was okay I guess',
  },
  freeText: {
    def: tasks.freeText({ question: 'Why did you give that score?', maxChars: 40 }),
    good: { say: 'the wait was too long', value: 'the wait was too long' },
    other: { say: 'rude staff', value: 'rude staff' },
    invalid: { say: 'well it all started many years ago when I first moved here' },
    unparsed: 'um',
  },
  digits: {
    def: tasks.digits({ question: 'Say your 4-digit code.', minLength: 4, maxLength: 4 }),
    good: { say: '4 1 5 5', value: '4155' },
    other: { say: 'double five one two', value: '5512' },
    invalid: { say: 'one two' },
    unparsed: 'I forgot it',
  },
} as const as unknown as Record<string, Case<unknown>>;

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start(def: TaskDefinition<unknown>, taskScript: ScriptStep[] = []) {
  const started = await startTask(def, taskScript);
  caller = started.caller;
  return started;
}

const confirms = (def: TaskDefinition<unknown>) =>
  def.spec.confirm === 'always' || def.spec.confirm === 'audio';
const question = (def: TaskDefinition<unknown>, value: unknown, spelled: boolean) =>
  `I have ${def.spec.readBack?.(value, spelled)}. Is that right?`;

describe.each(Object.entries(cases))('prebuilt %s', (_kind, c) => {
  const good = (_def: TaskDefinition<unknown>) => (c.good.model ? [c.good.model] : []);

  it('is ok on the first try', async () => {
    const { desk, caller, model } = await start(c.def, good(c.def));
    await caller.say(c.good.say);
    if (confirms(c.def)) {
      expect(caller.agentLines.at(-1)).toBe(question(c.def, c.good.value, false));
      await caller.say('yes');
    }
    expect(desk.outcomes).toEqual([
      {
        status: 'ok',
        value: c.good.value,
        attempts: 1,
        modality: 'speech',
        ...(confirms(c.def) ? { confirmed: true } : {}),
      },
    ]);
    if (!c.good.model) expect(model.requestsFor(c.def.name)).toHaveLength(0);
    model.assertComplete();
  });

  it('counts an invalid answer, then accepts a good one', async () => {
    const def = c.def.with({ confirm: 'never' });
    const script: ScriptStep[] = [];
    if ('model' in c.invalid)
      script.push(c.invalid.model, { say: 'That did not work, try again.' });
    const { desk, caller, model } = await start(def, [...script, ...good(def)]);
    await caller.say(c.invalid.say);
    expect(caller.agentLines.at(-1)).not.toBe('Thank you.');
    await caller.say(c.good.say);
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: c.good.value, attempts: 2, modality: 'speech' },
    ]);
    model.assertComplete();
  });

  it('ends as noinput after the no-input cap', async () => {
    const def = c.def.with({ retry: { maxNoInput: 2, noInputTimeoutMs: 8000 } });
    const { desk, caller } = await start(def);
    await caller.silence(8000);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${def.spec.prompt}`);
    await caller.silence(8000);
    expect(desk.outcomes).toEqual([
      { status: 'noinput', attempts: 2, reason: 'no answer after 2 prompts' },
    ]);
  });

  it('ends as nomatch after the no-match cap', async () => {
    const def = c.def.with({ retry: { maxNoMatch: 2 } });
    const unclear: ScriptStep = {
      toolCalls: [{ name: 'report_unclear', args: { reason: 'not an answer' } }],
    };
    const { desk, caller, model } = await start(def, [unclear, { say: 'Sorry, again?' }, unclear]);
    await caller.say(c.unparsed);
    expect(caller.agentLines.at(-1)).toBe('Sorry, again?');
    await caller.say(c.unparsed);
    expect(desk.outcomes).toEqual([
      { status: 'nomatch', attempts: 2, reason: 'not understood 2 times' },
    ]);
    model.assertComplete();
  });

  it('resolves declined on a plain refusal, without a model call', async () => {
    const { desk, caller, model } = await start(c.def);
    await caller.say("I'd rather not say");
    expect(desk.outcomes).toEqual([
      { status: 'declined', attempts: 1, reason: `caller declined: "I'd rather not say"` },
    ]);
    expect(model.requestsFor(c.def.name)).toHaveLength(0);
  });

  it('re-asks after a rejected read-back and spells the next one', async () => {
    const def = c.def.with({ confirm: 'always' });
    const script = [...good(def), ...(c.other.model ? [c.other.model] : [])];
    const { desk, caller, model } = await start(def, script);
    await caller.say(c.good.say);
    expect(caller.agentLines.at(-1)).toBe(question(def, c.good.value, false));
    await caller.say('no');
    expect(caller.agentLines.at(-1)).toBe(`Sorry about that. ${def.spec.prompt}`);
    await caller.say(c.other.say);
    expect(caller.agentLines.at(-1)).toBe(question(def, c.other.value, true));
    await caller.say('yes that is right');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: c.other.value, attempts: 2, confirmed: true, modality: 'speech' },
    ]);
    model.assertComplete();
  });

  it('resolves hangup when the caller hangs up mid-task', async () => {
    const { desk, caller } = await start(c.def);
    await caller.hangup();
    expect(desk.outcomes).toEqual([{ status: 'hangup', attempts: 0, reason: 'caller hung up' }]);
    expect(caller.isClosed).toBe(true);
  });
});
