// The read-back path of typed tasks: rejection with a correction in one turn, approximate
// answers confirmed, alternatives asked, refusals kept apart from "no", and a pending value
// never confirmed by an answer to another prompt.
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../../src/tasks/define.js';
import * as tasks from '../../src/tasks/prebuilt.js';
import type { ScriptEntry } from '../../src/testing/scripted-llm.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startTask } from './desk.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start<T>(def: TaskDefinition<T>, taskScript: ScriptEntry[] = []) {
  const started = await startTask(def, taskScript);
  caller = started.caller;
  return started;
}

const email = tasks.email({ question: 'What is your email address?' });
const spelled = (address: string) =>
  `I have ${[...address].map((c) => ({ '.': 'dot', '@': 'at' })[c] ?? c).join(', ')}. Is that right?`;

describe('a rejection with a correction at the read-back', () => {
  it('"no, it\'s D O E" patches the address in the same turn, without a model call', async () => {
    const { desk, caller, model } = await start(email);
    await caller.say('jane dot doh at example dot com');
    expect(caller.agentLines.at(-1)).toBe('I have jane.doh@example.com. Is that right?');
    await caller.say("no, it's D O E");
    expect(caller.agentLines.at(-1)).toBe(spelled('jane.doe@example.com'));
    await caller.say('yes');
    expect(desk.outcomes).toEqual([
      {
        status: 'ok',
        value: 'jane.doe@example.com',
        attempts: 2,
        confirmed: true,
        modality: 'speech',
      },
    ]);
    expect(model.requestsFor(email.name)).toHaveLength(0);
  });

  it('"no, jane at example dot org" takes the new address', async () => {
    const { desk, caller, model } = await start(email);
    await caller.say('jane at example dot com');
    await caller.say('no, jane at example dot org');
    expect(caller.agentLines.at(-1)).toBe(spelled('jane@example.org'));
    await caller.say('yes that is right');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: 'jane@example.org' }]);
    expect(model.requestsFor(email.name)).toHaveLength(0);
  });

  it('a spelling that fits two parts is not guessed: the caller is asked again', async () => {
    const { desk, caller, model } = await start(email);
    await caller.say('doh dot dom at example dot com');
    await caller.say("no, it's D O E");
    expect(caller.agentLines.at(-1)).toBe(
      "Sorry, I couldn't tell which part that spelling fixes. What is your email address?",
    );
    expect(desk.outcomes).toEqual([]);
    await caller.say('doe dot dom at example dot com');
    await caller.say('yes');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: 'doe.dom@example.com' }]);
    expect(model.requestsFor(email.name)).toHaveLength(0);
  });

  it('"no, the last four are 1 2 3 4" patches a phone number', async () => {
    const phone = tasks.phone({ question: 'What number should we call?' });
    const { desk, caller } = await start(phone);
    await caller.say('four one five five five five oh one nine nine');
    await caller.say('no, the last four are 1 2 3 4');
    expect(caller.agentLines.at(-1)).toBe('I have 4 1 5, 5 5 5, 1 2 3 4. Is that right?');
    await caller.say('yes');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: '+14155551234', attempts: 2 }]);
  });

  it('a count that does not fit what was said is not applied', async () => {
    const code = tasks.digits({ question: 'Your code?', minLength: 6, maxLength: 6 });
    const { desk, caller } = await start(code.with({ confirm: 'always' }));
    await caller.say('1 2 3 4 5 6');
    await caller.say('no, the last four are 9 9');
    expect(caller.agentLines.at(-1)).toBe('I heard 2 digits for the last 4. Your code?');
    await caller.say('1 2 3 4 9 9');
    await caller.say('yes');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: '123499' }]);
  });

  it('a spelled surname patches a name', async () => {
    const name = tasks.personName({ question: 'What is your name?' });
    const { desk, caller } = await start(name);
    await caller.say('John Smith');
    await caller.say('no, S M Y T H');
    await caller.say('yes');
    expect(desk.outcomes).toMatchObject([
      { status: 'ok', value: { first: 'John', last: 'Smyth' } },
    ]);
  });

  it('a rejection whose fix no parser reads goes to the model, and the old value can no longer be confirmed', async () => {
    const { desk, caller, model } = await start(email, [
      { say: 'Sorry, what is your email address?' },
      // The model, confused, tries to confirm the dropped value: refused by the task.
      { toolCalls: [{ name: 'confirm_answer', args: { correct: true } }] },
      { say: 'Please tell me the address again.' },
    ]);
    await caller.say('jane dot doh at example dot com');
    await caller.say('no, it is the one I gave you last week');
    expect(caller.agentLines.at(-1)).toBe('Sorry, what is your email address?');
    await caller.say('yes');
    expect(desk.outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe('Please tell me the address again.');
    await caller.say('jane dot doe at example dot com');
    await caller.say('yes');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: 'jane.doe@example.com' }]);
    model.assertComplete();
  });

  it('"yes, eight" at "Is that a 7?" confirms neither', async () => {
    const count = tasks.number({ question: 'How many?', min: 0, max: 10, modelFallback: false });
    const { desk, caller } = await start(count);
    await caller.say('about seven');
    expect(caller.agentLines.at(-1)).toBe('Is that a 7?');
    await caller.say('yes, eight');
    expect(desk.outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe('Is that a 7?');
    await caller.say('no, it is eight');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: 8 }]);
  });
});

describe('approximate answers and alternatives', () => {
  const rating = tasks.number({ question: 'From 0 to 10?', min: 0, max: 10, integer: true });

  it('"I\'d say about a six" is read back even with confirm never', async () => {
    const { desk, caller, model } = await start(rating);
    await caller.say("I'd say about a six");
    expect(caller.agentLines.at(-1)).toBe('Is that a 6?');
    await caller.say('yes');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: 6, attempts: 1, confirmed: true, modality: 'speech' },
    ]);
    expect(model.requestsFor(rating.name)).toHaveLength(0);
  });

  it('an estimate the caller rejects with a number takes that number', async () => {
    const { desk, caller } = await start(rating);
    await caller.say('around eight');
    expect(caller.agentLines.at(-1)).toBe('Is that an 8?');
    await caller.say('no, nine');
    expect(desk.outcomes).toEqual([{ status: 'ok', value: 9, attempts: 2, modality: 'speech' }]);
  });

  it('"maybe seven or eight" asks which, and takes the pick', async () => {
    const { desk, caller, model } = await start(rating);
    await caller.say('maybe seven or eight');
    expect(caller.agentLines.at(-1)).toBe('Was that 7 or 8?');
    await caller.say('eight');
    expect(desk.outcomes).toEqual([{ status: 'ok', value: 8, attempts: 1, modality: 'speech' }]);
    expect(model.requestsFor(rating.name)).toHaveLength(0);
  });

  it('"the first one" picks among the alternatives; an unclear reply asks again', async () => {
    const scale = tasks.likert({ question: 'From 1 to 5?', modelFallback: false });
    const { desk, caller } = await start(scale);
    await caller.say('three or four');
    expect(caller.agentLines.at(-1)).toBe('Was that 3 or 4?');
    await caller.say('yes');
    expect(caller.agentLines.at(-1)).toBe('Was that 3 or 4?');
    await caller.say('the first one');
    expect(desk.outcomes).toEqual([{ status: 'ok', value: 3, attempts: 2, modality: 'speech' }]);
  });
});

describe('refusals and a "no" to a yes/no question', () => {
  const survey = tasks.yesNo({ question: 'Do you have a minute for a short survey?' });

  it.each([
    ["I'd rather not"],
    ['not interested'],
    ['no thanks'],
    ['no'],
    ["sorry, I don't have time"],
  ])('%j at a yes/no question is a false answer, not a refusal', async (line) => {
    const { desk, caller, model } = await start(survey);
    await caller.say(line);
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: false, attempts: 1, modality: 'speech' },
    ]);
    expect(model.requestsFor(survey.name)).toHaveLength(0);
  });

  it('"I\'d rather not say" declines the question', async () => {
    const smoker = tasks.yesNo({ question: 'Do you smoke?' });
    const { desk, caller } = await start(smoker);
    await caller.say("I'd rather not say");
    expect(desk.outcomes).toEqual([
      { status: 'declined', attempts: 1, reason: `caller declined: "I'd rather not say"` },
    ]);
  });

  it('"I\'d rather not" at an open question declines it', async () => {
    const age = tasks.number({ question: 'How old are you?', min: 0, max: 120 });
    const { desk, caller, model } = await start(age);
    await caller.say("I'd rather not");
    expect(desk.outcomes).toEqual([
      { status: 'declined', attempts: 1, reason: `caller declined: "I'd rather not"` },
    ]);
    expect(model.requestsFor(age.name)).toHaveLength(0);
  });
});
