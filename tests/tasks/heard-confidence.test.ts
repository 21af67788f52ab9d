// Issue 27, item 4: a value parsed from words the recogniser was unsure of is read back before
// it is taken, whatever the task's confirm policy; a recogniser that reports no confidence
// (0, as the openai plugin does for pocketsphinx) is "unknown", not "low"; after a misheard
// spoken answer is rejected, a task that takes keys offers the keypad, once.
import { ReadableStream } from 'node:stream/web';
import { stt, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { noteConfidences } from '../../src/tasks/heard-confidence.js';
import { number } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** One spoken turn as a recogniser delivers it: the final transcript (with its confidence), then the turn. */
async function speak(c: SimulatedCaller, text: string, confidence?: number): Promise<void> {
  c.call.noteConfidence(text, confidence);
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

const guests = number({ name: 'guests', question: 'How many guests?', min: 1, max: 20 });

describe('a recogniser that says how sure it was', () => {
  it('reads back a value heard with low confidence, even with confirm: never', async () => {
    const { caller, outcomes } = await call(() => guests.run());
    await speak(caller, 'four', 0.31);
    expect(outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe('Is that a 4?');
    await speak(caller, 'yes', 0.95);
    expect(outcomes).toEqual([expect.objectContaining({ status: 'ok', value: 4 })]);
  });

  it('takes a value heard with high confidence, or with none reported, as before', async () => {
    for (const confidence of [0.93, 0, undefined]) {
      const { caller, outcomes } = await call(() => guests.run());
      await speak(caller, 'six', confidence);
      expect(outcomes, `confidence ${confidence}`).toEqual([
        expect.objectContaining({ status: 'ok', value: 6 }),
      ]);
      await caller.close();
    }
  });

  it('never stores a low-confidence value the caller rejects, and offers the keypad once', async () => {
    const pin = collectDigits({
      name: 'account',
      prompt: 'Please say or key in your 4-digit account code.',
      minDigits: 4,
      maxDigits: 4,
    });
    const { caller, outcomes } = await call(() => pin.run());
    await speak(caller, 'four one two three', 0.2);
    expect(caller.agentLines.at(-1)).toMatch(/4 1 2 3/);
    await speak(caller, 'no', 0.9);
    expect(outcomes).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe(
      'Sorry about that. Please say or key in your 4-digit account code. You can also key it in on your keypad.',
    );
    await speak(caller, 'four one two four', 0.25);
    await speak(caller, 'no', 0.9);
    expect(caller.agentLines.at(-1)).not.toContain('keypad');
    await caller.dtmf('4124');
    expect(outcomes).toEqual([expect.objectContaining({ status: 'ok', value: '4124' })]);
  });
});

describe('the STT node tap', () => {
  it('passes every event through and notes only final transcripts with a confidence', async () => {
    const { caller } = await call(() => guests.run());
    const event = (type: stt.SpeechEventType, text: string, confidence: number) => ({
      type,
      alternatives: [{ text, confidence, language: 'en', startTime: 0, endTime: 0 }],
    });
    const sent = [
      event(stt.SpeechEventType.INTERIM_TRANSCRIPT, 'for', 0.1),
      event(stt.SpeechEventType.FINAL_TRANSCRIPT, 'four people', 0.42),
      event(stt.SpeechEventType.FINAL_TRANSCRIPT, 'thanks', 0),
      'a string event',
    ] as Array<stt.SpeechEvent | string>;
    const out = noteConfidences(ReadableStream.from(sent), caller.call);
    const got: Array<stt.SpeechEvent | string> = [];
    for await (const e of out) got.push(e);
    expect(got).toEqual(sent);
    expect(caller.call.confidenceOf({ id: 'x', textContent: 'four people' })).toBe(0.42);
    expect(caller.call.confidenceOf({ id: 'y', textContent: 'thanks' })).toBeUndefined();
    expect(caller.call.confidenceOf({ id: 'z', textContent: 'for' })).toBeUndefined();
  });
});
