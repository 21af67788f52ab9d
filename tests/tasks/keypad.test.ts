// Issue 24, item 7: one keypad behaviour for every capture. A key cuts off the task's prompt —
// on a typed task with `keypad` as on collectDigits and menus — and the keys are an answer.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { number } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startTask } from './desk.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

const QUESTION = 'On a scale from 0 to 10, how likely are you to recommend us? Say or key it.';
const score = number({
  name: 'score',
  question: QUESTION,
  min: 0,
  max: 10,
  integer: true,
  keypad: true,
});

/** Starts the task; `keys` are pressed the moment its prompt starts playing. */
async function startPressingDuringPrompt(keys: string) {
  const outcomes: Outcome<number>[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      outcomes.push(await score.run());
    }
  }
  const session = new voice.AgentSession({ llm: new ScriptedLLM() });
  caller = new SimulatedCaller(session);
  const c = caller;
  let prompt: voice.SpeechHandle | undefined;
  session.on(voice.AgentSessionEventTypes.SpeechCreated, (ev) => {
    if (prompt) return;
    prompt = ev.speechHandle;
    queueMicrotask(() => {
      for (const key of keys) c.call.pushDtmf(key, c.identity);
    });
  });
  await session.start({ agent: new Line({ instructions: 'line' }) });
  await caller.settle();
  return { caller, outcomes, prompt: () => prompt };
}

describe('keys on a typed task with keypad', () => {
  it('the first key interrupts the prompt, and a whole answer is taken at once', async () => {
    const { outcomes, prompt } = await startPressingDuringPrompt('9');
    expect(prompt()?.interrupted).toBe(true);
    expect(outcomes).toEqual([{ status: 'ok', value: 9, attempts: 1, modality: 'dtmf' }]);
  });

  it('a partial entry interrupts the prompt and completes with the next key', async () => {
    const { caller, outcomes, prompt } = await startPressingDuringPrompt('1');
    expect(prompt()?.interrupted).toBe(true);
    expect(outcomes).toEqual([]);
    await caller.dtmf('0');
    expect(outcomes).toEqual([{ status: 'ok', value: 10, attempts: 1, modality: 'dtmf' }]);
  });
});

describe('a typed task with keypad run from a tool', () => {
  it('waits for keys, and a spoken answer drops the keys entered so far', async () => {
    const started = await startTask(score);
    caller = started.caller;
    expect(caller.call.isWaitingForCaller).toBe(true);
    await caller.dtmf('1');
    await caller.say('zero');
    expect(started.desk.outcomes).toEqual([
      { status: 'ok', value: 0, attempts: 1, modality: 'speech' },
    ]);
    expect(caller.agentLines.at(-1)).toBe('Thank you.');
  });
});
