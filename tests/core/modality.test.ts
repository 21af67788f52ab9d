// Issue 24, item 3: how the caller answered is derived once, inside the call, from upstream's
// own session events — a final `user_input_transcribed` makes the next caller message speech,
// a key press is dtmf, a message nobody transcribed (typed text) is text — so a key pressed
// earlier never turns later spoken answers into keypad input, whatever drives the session.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { InputModality } from '../../src/core/call.js';
import type { Outcome } from '../../src/outcome.js';
import { defineTask } from '../../src/tasks/define.js';
import { phone } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/**
 * What an audio driver does for one spoken turn, without the simulated caller's own
 * bookkeeping: upstream's recogniser emits the final transcript, then the turn is committed.
 */
async function speak(c: SimulatedCaller, text: string): Promise<void> {
  c.session.emit(
    voice.AgentSessionEventTypes.UserInputTranscribed,
    voice.createUserInputTranscribedEvent({ transcript: text, isFinal: true }),
  );
  c.session
    .run({ userInput: text })
    .wait()
    .catch(() => undefined);
  await c.settle();
}

/** Typed text (a chat message, `session.run` in a text client): nothing transcribed it. */
async function type(c: SimulatedCaller, text: string): Promise<void> {
  c.session
    .run({ userInput: text })
    .wait()
    .catch(() => undefined);
  await c.settle();
}

async function call<T>(start: () => Promise<Outcome<T>>) {
  const outcomes: Outcome<T>[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      // The caller pressed a key before the question (a menu, an extension…).
      this.session.say('Welcome.');
      outcomes.push(await start());
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Line({ instructions: 'line' }),
    llm: new ScriptedLLM(),
  });
  return { caller, outcomes };
}

describe('the modality of a caller message', () => {
  it('a spoken phone number after a key press is speech, so confirm "audio" reads it back', async () => {
    const callback = phone({ name: 'callback', question: 'What number should we call?' });
    const { caller, outcomes } = await call(() => callback.run());
    await caller.dtmf('1');
    await speak(caller, 'four one five five five five zero one nine nine');
    expect(outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe('I have 4 1 5, 5 5 5, 0 1 9 9. Is that right?');
    await speak(caller, 'yes');
    expect(outcomes).toEqual([
      { status: 'ok', value: '+14155550199', attempts: 1, confirmed: true, modality: 'speech' },
    ]);
    expect(caller.call.lastInputModality).toBe('speech');
  });

  it('a custom parse sees speech for a spoken answer and text for a typed one, after a key', async () => {
    const seen: InputModality[] = [];
    const code = defineTask({
      name: 'code',
      instructions: 'Get the code word.',
      prompt: 'What is the code word?',
      schema: z.string(),
      modelFallback: false,
      parse: (text, ctx) => {
        seen.push(ctx.modality);
        return text === 'swordfish' ? { kind: 'match', value: text } : { kind: 'nomatch' };
      },
    });
    const { caller, outcomes } = await call(() => code.run());
    await caller.dtmf('5');
    await speak(caller, 'open sesame');
    await caller.dtmf('5');
    await type(caller, 'swordfish');
    expect(seen).toEqual(['speech', 'text']);
    expect(outcomes).toEqual([{ status: 'ok', value: 'swordfish', attempts: 2, modality: 'text' }]);
    expect(caller.call.lastInputModality).toBe('text');
  });

  it('lastInputModality follows keys, final transcripts and typed messages', async () => {
    const { caller } = await call(async () => ({ status: 'cancelled', attempts: 0 }));
    const call_ = caller.call;
    await caller.dtmf('1');
    expect(call_.lastInputModality).toBe('dtmf');
    caller.session.emit(
      voice.AgentSessionEventTypes.UserInputTranscribed,
      voice.createUserInputTranscribedEvent({ transcript: 'one', isFinal: false }),
    );
    expect(call_.lastInputModality).toBe('dtmf');
    caller.session.emit(
      voice.AgentSessionEventTypes.UserInputTranscribed,
      voice.createUserInputTranscribedEvent({ transcript: 'one two', isFinal: true }),
    );
    expect(call_.lastInputModality).toBe('speech');
    await caller.dtmf('2');
    await type(caller, 'hello there');
    expect(call_.lastInputModality).toBe('text');
  });

  it('a message holding any transcript since the last one is speech, even if the caller went on', async () => {
    const { caller } = await call(async () => ({ status: 'cancelled', attempts: 0 }));
    for (const transcript of ['Yes.', 'wait, one more thing']) {
      caller.session.emit(
        voice.AgentSessionEventTypes.UserInputTranscribed,
        voice.createUserInputTranscribedEvent({ transcript, isFinal: true }),
      );
    }
    expect(caller.call.modalityOf({ id: 'm1', textContent: 'yes' })).toBe('speech');
    expect(caller.call.modalityOf({ id: 'm2', textContent: 'my order number' })).toBe('text');
  });
});
