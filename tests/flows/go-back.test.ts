import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EMAIL_QUESTION,
  REASON_QUESTION,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { flow } from '../../src/flows/builder.js';
import type { FlowResult } from '../../src/flows/types.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

describe('going back to a revisitable step', () => {
  it('drops later answers when the new answer changes the path', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.say('yes');
    await s.caller.dtmf('9');
    expect(s.caller.agentLines.at(-1)).toBe(REFERRAL_QUESTION);
    await s.caller.say('wait, can I change my score?');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    await s.caller.say('five');
    // The flow's repairs heard the change request: the new score is acknowledged.
    expect(s.caller.agentLines.at(-1)).toBe(
      `Okay, I've changed your score to 5. That changes what I need to ask next. ${REASON_QUESTION}`,
    );
    await s.caller.say('too slow');
    expect(s.caller.agentLines.at(-1)).toBe(THANKS_LINE);
    if (s.agent.result?.status !== 'completed') throw new Error('not completed');
    expect(s.agent.result.value).toEqual({ consent: true, score: 5, reason: 'too slow' });
    expect(s.agent.result.report.steps.map((r) => [r.step, r.outcome, r.next])).toEqual([
      ['consent', 'ok', 'score'],
      ['score', 'ok', 'referral'],
      ['referral', 'back', 'score'],
      ['score', 'corrected', 'reason'],
      ['reason', 'ok', 'thanks'],
      ['thanks', 'ok', 'end'],
    ]);
    expect(s.agent.result.report.backSteps).toBe(1);
    // Heard by the flow's repair phrases: no model call in the referral question.
    expect(s.model.requestsFor('referral')).toEqual([]);
    expect(s.agent.result.report.steps[2]?.repairs).toEqual(['correct']);
  });

  it('keeps later answers when the path stays the same and returns to where the caller was', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.say('yes');
    await s.caller.say('nine');
    await s.caller.say('yes');
    expect(s.caller.agentLines.at(-1)).toBe(EMAIL_QUESTION);
    await s.caller.say('hold on, I want to change my score');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    await s.caller.dtmf('10');
    // Still 9-10: the referral answer stands, so the email question comes straight back.
    expect(s.caller.agentLines.at(-1)).toBe(
      `Okay, I've changed your score to 10. ${EMAIL_QUESTION}`,
    );
    await s.caller.say('jane at example dot com');
    await s.caller.say('yes');
    if (s.agent.result?.status !== 'completed') throw new Error('not completed');
    expect(s.agent.result.value).toEqual({
      consent: true,
      score: 10,
      referral: true,
      email: 'jane@example.com',
    });
    expect(s.agent.result.report.steps.filter((r) => r.step === 'referral')).toHaveLength(1);
  });

  it('keeps the earlier answer when the revisited step ends without one', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.say('yes');
    await s.caller.say('nine');
    await s.caller.say('let me change my score');
    await s.caller.say("I'd rather not say");
    expect(s.caller.agentLines.at(-1)).toBe(REFERRAL_QUESTION);
    await s.caller.say('no');
    if (s.agent.result?.status !== 'completed') throw new Error('not completed');
    expect(s.agent.result.value).toEqual({ consent: true, score: 9, referral: false });
    expect(s.agent.result.report.steps.map((r) => r.outcome)).toEqual([
      'ok',
      'ok',
      'back',
      'kept',
      'ok',
      'ok',
    ]);
  });

  it('stops offering go_back once maxBackSteps are used', async () => {
    const q = (name: string) => yesNo({ name, question: `${name}?` });
    const f = flow('short', { maxBackSteps: 1 })
      .step('a', q('a'), { canRevisit: true })
      .step('b', q('b'));
    let result: FlowResult<{ a: boolean; b: boolean }> | undefined;
    class Host extends voice.Agent {
      constructor() {
        super({ instructions: 'host' });
      }
      override async onEnter(): Promise<void> {
        result = await f.run();
      }
    }
    const back = { toolCalls: [{ name: 'go_back', args: { step: 'a' } }] };
    const model = new ScriptedLLM().for('b', [
      back,
      (req) => ({
        say: req.tools.includes('go_back') ? 'still offered' : 'Please answer yes or no.',
      }),
    ]);
    caller = await SimulatedCaller.start({ agent: new Host(), llm: model });
    await caller.say('yes');
    await caller.say('change a please');
    expect(caller.agentLines.at(-1)).toBe('a?');
    await caller.say('no');
    await caller.say('change a again');
    expect(caller.agentLines.at(-1)).toBe('Please answer yes or no.');
    await caller.say('yes');
    expect(result).toMatchObject({ status: 'completed', value: { a: false, b: true } });
    model.assertComplete();
  });
});
