import { afterEach, describe, expect, it } from 'vitest';
import * as surveyDemo from '../../examples/survey/demo.js';
import surveyModule, {
  CONSENT_QUESTION,
  EMAIL_QUESTION,
  REASON_QUESTION,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

async function start() {
  const s = await startSurvey();
  caller = s.caller;
  expect(s.caller.agentLines).toEqual([CONSENT_QUESTION]);
  return s;
}

describe('survey example: every branch', () => {
  it('0-6 by voice asks why, then thanks, with no model call', async () => {
    const { agent, caller, model } = await start();
    await caller.say('yes, sure');
    await caller.say('three');
    await caller.say('the wait was far too long');
    expect(caller.agentLines).toEqual([
      CONSENT_QUESTION,
      SCORE_QUESTION,
      REASON_QUESTION,
      THANKS_LINE,
    ]);
    expect(agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 3, reason: 'the wait was far too long' },
    });
    expect(agent.result?.report.path).toEqual(['consent', 'score', 'reason', 'thanks']);
    expect(model.requests).toHaveLength(0);
  });

  it('7-8 on the keypad goes straight to thanks', async () => {
    const { agent, caller } = await start();
    await caller.say('ok');
    await caller.dtmf('8');
    expect(caller.agentLines).toEqual([CONSENT_QUESTION, SCORE_QUESTION, THANKS_LINE]);
    expect(agent.result).toMatchObject({ status: 'completed', value: { consent: true, score: 8 } });
    if (agent.result?.status !== 'completed') throw new Error('not completed');
    expect(Object.keys(agent.result.value)).toEqual(['consent', 'score']);
    expect(agent.result.report.steps.find((s) => s.step === 'score')?.modality).toBe('dtmf');
  });

  it('9-10 asks for a referral and an email (a two-key keypad answer)', async () => {
    const { agent, caller } = await start();
    await caller.say('yes');
    await caller.dtmf('10');
    await caller.say('yes please');
    await caller.say('jane dot doe at example dot com');
    expect(caller.agentLines.at(-1)).toBe('I have jane.doe@example.com. Is that right?');
    await caller.say('yes');
    expect(caller.agentLines).toEqual([
      CONSENT_QUESTION,
      SCORE_QUESTION,
      REFERRAL_QUESTION,
      EMAIL_QUESTION,
      'I have jane.doe@example.com. Is that right?',
      THANKS_LINE,
    ]);
    expect(agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 10, referral: true, email: 'jane.doe@example.com' },
    });
  });

  it('9-10 with no to the referral skips the email', async () => {
    const { agent, caller } = await start();
    await caller.say('yes');
    await caller.say('nine');
    await caller.say('no thanks');
    expect(caller.agentLines.slice(-2)).toEqual([REFERRAL_QUESTION, THANKS_LINE]);
    expect(agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 9, referral: false },
    });
  });

  it('no consent ends with the thanks and only the consent answer', async () => {
    const { agent, caller } = await start();
    await caller.say('no, not now');
    expect(caller.agentLines).toEqual([CONSENT_QUESTION, THANKS_LINE]);
    expect(agent.result).toMatchObject({ status: 'completed', value: { consent: false } });
    expect(agent.result?.report.path).toEqual(['consent', 'thanks']);
  });

  it('a skippable question is skipped on a refusal and left out of the result', async () => {
    const { agent, caller } = await start();
    await caller.say('yes');
    await caller.say('two');
    await caller.say("I'd rather not say");
    expect(caller.agentLines.slice(-2)).toEqual([REASON_QUESTION, THANKS_LINE]);
    if (agent.result?.status !== 'completed') throw new Error('not completed');
    expect(agent.result.value).toEqual({ consent: true, score: 2 });
    expect(agent.result.report.steps.find((s) => s.step === 'reason')).toMatchObject({
      outcome: 'skipped',
      next: 'thanks',
    });
  });

  it('"skip this" on the email skips it too', async () => {
    const { agent, caller } = await start();
    await caller.say('yes');
    await caller.dtmf('9');
    await caller.say('sure');
    await caller.say('skip this one');
    expect(caller.agentLines.at(-1)).toBe(THANKS_LINE);
    expect(agent.result).toMatchObject({
      status: 'completed',
      value: { consent: true, score: 9, referral: true },
    });
    expect(agent.result?.answers).not.toHaveProperty('email');
  });

  it('a silent caller fails the flow at the step, keeping nothing it did not get', async () => {
    const { agent, caller } = await start();
    for (let i = 0; i < 3; i++) await caller.silence(8_000);
    expect(agent.result).toMatchObject({
      status: 'failed',
      step: 'consent',
      answers: {},
      outcome: { status: 'noinput', reason: 'no answer after 3 prompts' },
    });
  });

  it('a hang-up mid-survey resolves hangup with the answers so far', async () => {
    const { agent, caller } = await start();
    await caller.say('yes');
    await caller.hangup();
    expect(agent.result).toMatchObject({
      status: 'hangup',
      step: 'score',
      answers: { consent: true },
      reason: 'caller hung up',
    });
  });

  it('runs as a CallModule: its demo script with its scripted model completes the survey', async () => {
    const call = surveyModule.createCall();
    const model = surveyDemo.createScriptedModel();
    caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
    expect(call.result()).toEqual({ status: 'running', answers: {}, repairs: {} });
    await caller.play(surveyDemo.demoScript);
    expect(caller.agentLines).toEqual([
      CONSENT_QUESTION,
      SCORE_QUESTION,
      REFERRAL_QUESTION,
      EMAIL_QUESTION,
      'I have jane.doe@example.com. Is that right?',
      THANKS_LINE,
    ]);
    expect(call.result()).toEqual({
      status: 'completed',
      answers: { consent: true, score: 9, referral: true, email: 'jane.doe@example.com' },
      repairs: {},
    });
  });
});
