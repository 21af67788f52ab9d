import { afterEach, expect, it } from 'vitest';
import { SCORE_QUESTION } from '../../examples/survey/index.js';
import type { StepRecord } from '../../src/flows/types.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { startSurvey } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

it('reports per step: call-clock duration, attempts, no-input / no-match counts, outcome, modality', async () => {
  const clock = new VirtualClock();
  const t0 = clock.now();
  const events: StepRecord[] = [];
  const s = await startSurvey({
    clock,
    callId: 'report-call',
    onStepCompleted: (r) => events.push(r),
  });
  caller = s.caller;
  // consent: 8 s of silence (one no-input and a re-prompt), then a yes after 2 s more.
  await s.caller.silence(8_000);
  await s.caller.silence(2_000);
  await s.caller.say('yes');
  // score: something the parser and the model cannot use (a no-match), then "1" "0" keyed.
  await s.caller.silence(3_000);
  await s.caller.say('purple elephants');
  expect(s.caller.agentLines.at(-1)).toBe(`Sorry, I didn't catch that. ${SCORE_QUESTION}`);
  await s.caller.silence(1_000);
  await s.caller.dtmf('10', { gapMs: 500 });
  // referral: a quick no.
  await s.caller.say('no');

  const result = s.agent.result;
  expect(result?.status).toBe('completed');
  if (result?.status !== 'completed') return;
  const report = result.report;
  expect(report.steps).toEqual([
    {
      step: 'consent',
      visit: 1,
      startedAt: t0,
      endedAt: t0 + 10_000,
      durationMs: 10_000,
      attempts: 2,
      noInput: 1,
      noMatch: 0,
      invalid: 0,
      outcome: 'ok',
      modality: 'speech',
      next: 'score',
    },
    {
      step: 'score',
      visit: 1,
      startedAt: t0 + 10_000,
      endedAt: t0 + 14_500,
      durationMs: 4_500,
      attempts: 2,
      noInput: 0,
      noMatch: 1,
      invalid: 0,
      outcome: 'ok',
      modality: 'dtmf',
      next: 'referral',
    },
    {
      step: 'referral',
      visit: 1,
      startedAt: t0 + 14_500,
      endedAt: t0 + 14_500,
      durationMs: 0,
      attempts: 1,
      noInput: 0,
      noMatch: 0,
      invalid: 0,
      outcome: 'ok',
      modality: 'speech',
      next: 'thanks',
    },
    {
      step: 'thanks',
      visit: 1,
      startedAt: t0 + 14_500,
      endedAt: t0 + 14_500,
      durationMs: 0,
      attempts: 1,
      noInput: 0,
      noMatch: 0,
      invalid: 0,
      outcome: 'ok',
      next: 'end',
    },
  ]);
  expect(report).toMatchObject({
    flow: 'survey',
    callId: 'report-call',
    status: 'completed',
    startedAt: t0,
    endedAt: t0 + 14_500,
    durationMs: 14_500,
    path: ['consent', 'score', 'referral', 'thanks'],
    resumes: 0,
    backSteps: 0,
    totals: { attempts: 6, noInput: 1, noMatch: 1, invalid: 0, steps: 4 },
  });
  // step_completed events carry the same records, and the report is plain JSON.
  expect(events).toEqual(report.steps);
  expect(JSON.parse(JSON.stringify(report))).toEqual(report);
});
