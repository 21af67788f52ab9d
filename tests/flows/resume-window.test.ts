// Resume keyed by the caller's number, as the example of docs/flows.md does (issue 24, item 9): a
// caller who finished once and calls back starts afresh (not the old goodbye and a hang-up),
// and a dropped call resumes only within a window (30 minutes by default).
import { afterEach, describe, expect, it } from 'vitest';
import { CONSENT_QUESTION, REASON_QUESTION, THANKS_LINE } from '../../examples/survey/index.js';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/index.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { startSurvey } from './helpers.js';

const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const MINUTE = 60_000;
const CALLER = 'tel:+14155550123';
const WELCOME_BACK = "Welcome back. We'll pick up where we left off: the reason for your score.";

async function call(
  checkpoints: MemoryCheckpointStore,
  at: number,
  extra: Parameters<typeof startSurvey>[0] = {},
) {
  const s = await startSurvey({
    checkpoints,
    callId: CALLER,
    clock: new VirtualClock(at),
    ...extra,
  });
  callers.push(s.caller);
  return s;
}

/** Consent and a score of 3, then the caller hangs up at the reason question. */
async function dropAtReason(checkpoints: MemoryCheckpointStore, at: number) {
  let written!: () => void;
  const hungUp = new Promise<void>((resolve) => {
    written = resolve;
  });
  const s = await call(checkpoints, at, {
    onCheckpoint: (info) => {
      if (info.status === 'hangup') written();
    },
  });
  await s.caller.say('yes');
  await s.caller.dtmf('3');
  expect(s.caller.agentLines.at(-1)).toBe(REASON_QUESTION);
  await s.caller.hangup();
  await hungUp;
}

describe('a caller who calls again', () => {
  it('after finishing the survey, starts it afresh instead of hearing the old goodbye', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const first = await call(checkpoints, T0);
    await first.caller.say('yes');
    await first.caller.dtmf('8');
    expect(first.caller.agentLines.at(-1)).toBe(THANKS_LINE);

    const again = await call(checkpoints, T0 + 5 * MINUTE);
    expect(again.caller.agentLines).toEqual([CONSENT_QUESTION]);
    expect(again.caller.endedBy).toBeUndefined();
    await again.caller.say('no');
    expect(again.agent.result).toMatchObject({ status: 'completed', value: { consent: false } });
  });

  it('with ifCompleted: return, gets the finished result back without being asked anything', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const first = await call(checkpoints, T0);
    await first.caller.say('yes');
    await first.caller.dtmf('8');
    const again = await call(checkpoints, T0 + MINUTE, { ifCompleted: 'return' });
    expect(again.caller.agentLines).toEqual([]);
    expect(again.agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 8 },
    });
  });

  it('within 30 minutes of dropping, resumes where they were', async () => {
    const checkpoints = new MemoryCheckpointStore();
    await dropAtReason(checkpoints, T0);
    const back = await call(checkpoints, T0 + 29 * MINUTE);
    expect(back.caller.agentLines).toEqual([WELCOME_BACK, REASON_QUESTION]);
    await back.caller.say('the wait');
    expect(back.agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 3, reason: 'the wait' },
    });
  });

  it('after the resume window, starts afresh (the old answers are not used)', async () => {
    const checkpoints = new MemoryCheckpointStore();
    await dropAtReason(checkpoints, T0);
    const late = await call(checkpoints, T0 + 31 * MINUTE);
    expect(late.caller.agentLines).toEqual([CONSENT_QUESTION]);
    await late.caller.say('no');
    expect(late.agent.result).toMatchObject({ status: 'completed', value: { consent: false } });
    expect(late.agent.result?.report.resumes).toBe(0);
  });

  it('takes its own window: resumeWindowMs (Infinity resumes whenever they call back)', async () => {
    const checkpoints = new MemoryCheckpointStore();
    await dropAtReason(checkpoints, T0);
    const short = await call(checkpoints, T0 + 2 * MINUTE, { resumeWindowMs: MINUTE });
    expect(short.caller.agentLines).toEqual([CONSENT_QUESTION]);

    const other = new MemoryCheckpointStore();
    await dropAtReason(other, T0);
    const days = await call(other, T0 + 3 * 24 * 60 * MINUTE, { resumeWindowMs: Infinity });
    expect(days.caller.agentLines).toEqual([WELCOME_BACK, REASON_QUESTION]);
  });
});
