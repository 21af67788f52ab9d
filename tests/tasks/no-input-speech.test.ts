/**
 * No-input timers time the caller's silence, not the speech-to-text's latency: a caller who
 * starts answering near the end of the window is not told "I didn't hear anything" while
 * they speak, nor while their words are still being transcribed (on a busy machine a
 * transcript arrives seconds after the speech ended). Caller speech is what the session's
 * VAD reports (`user_state_changed`); the timer holds while the caller speaks and counts
 * from zero once they stop.
 */
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import * as tasks from '../../src/tasks/prebuilt.js';
import { menu } from '../../src/telephony/menu.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { runTask } from '../telephony/helpers.js';
import { startTask } from './desk.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** What the session's VAD reports when the caller starts (true) or stops (false) speaking. */
function vad(c: SimulatedCaller, speaking: boolean): void {
  const [from, to] = speaking
    ? (['listening', 'speaking'] as const)
    : (['speaking', 'listening'] as const);
  c.session.emit(
    voice.AgentSessionEventTypes.UserStateChanged,
    voice.createUserStateChangedEvent(from, to),
  );
}

const NOT_HEARD = /didn't hear anything/;

describe('a typed task (yesNo) with an 8 s no-input timeout', () => {
  const def = tasks.yesNo({ question: 'Do you want a text message?' }).with({
    retry: { noInputTimeoutMs: 8_000 },
  });

  it('holds while the caller speaks across the 8 s mark, and counts 8 s afresh from the end of their speech', async () => {
    const run = await startTask(def);
    caller = run.caller;
    await caller.silence(6_000);
    vad(caller, true);
    await caller.silence(3_000); // speaking past the 8 s mark
    vad(caller, false);
    await caller.silence(7_999); // the transcript is slow to come
    expect(caller.agentLines.filter((l) => NOT_HEARD.test(l))).toEqual([]);
    await caller.say('yes');
    expect(run.desk.outcomes).toEqual([
      { status: 'ok', value: true, attempts: 1, modality: 'speech' },
    ]);
  });

  it('re-prompts 8 s after speech that brought no answer (noise, or words it could not hear)', async () => {
    const run = await startTask(def);
    caller = run.caller;
    await caller.silence(2_000);
    vad(caller, true);
    await caller.silence(1_000);
    vad(caller, false);
    await caller.silence(7_999);
    expect(caller.agentLines.at(-1)).toBe(def.spec.prompt);
    await caller.silence(1);
    expect(caller.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${def.spec.prompt}`);
  });
});

describe('a menu with a 5 s first-key timeout', () => {
  const PROMPT = 'Main menu. For billing, press 1. For sales, press 2.';
  const start = async () => {
    const def = menu({
      name: 'main',
      prompt: 'Main menu.',
      options: {
        '1': { label: 'billing', value: 'billing' },
        '2': { label: 'sales', value: 'sales' },
      },
      firstKeyTimeoutMs: 5_000,
    });
    const run = await runTask(() => def.create());
    caller = run.caller;
    return run;
  };

  it('holds while the caller speaks, then counts 5 s from the end of their speech', async () => {
    const run = await start();
    const c = run.caller;
    expect(c.agentLines.at(-1)).toBe(PROMPT);
    await c.silence(4_000);
    vad(c, true);
    await c.silence(2_000);
    vad(c, false);
    await c.silence(4_999);
    expect(c.agentLines.filter((l) => NOT_HEARD.test(l))).toEqual([]);
    await c.say('sales');
    expect(run.runner.outcomes).toEqual([
      { status: 'ok', value: 'sales', attempts: 1, modality: 'speech' },
    ]);
  });

  it('still re-prompts a silent caller after 5 s', async () => {
    const run = await start();
    const c = run.caller;
    await c.silence(4_999);
    expect(c.agentLines).toHaveLength(1);
    await c.silence(1);
    expect(c.agentLines.at(-1)).toBe(`Sorry, I didn't hear anything. ${PROMPT}`);
  });
});
