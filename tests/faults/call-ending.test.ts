// Fault class: the call ending the way a caller would not want it — a declined survey that
// leaves the line open, a goodbye missing after a failure, a log that blames the bot for
// the caller's hang-up. Each asserts what the caller heard last, who ended the call, and
// the call log.
import { afterEach, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../examples/ivr-bank/index.js';
import {
  CONSENT_QUESTION,
  GOODBYE_LINE,
  SCORE_QUESTION,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { SimulatedCaller as Caller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from '../flows/helpers.js';
import { captureLogs } from '../telephony/logs.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** Asserts the bot ended the call after `last`, and that nothing was said after it. */
function endedByBotAfter(c: SimulatedCaller, last: string): void {
  expect(c.agentLines.at(-1)).toBe(last);
  expect(c.endedBy).toBe('bot');
  expect(c.session._closing || c.isClosed).toBe(true);
  expect(c.transcript.at(-1)).toMatchObject({ role: 'agent', text: '(ends the call)' });
}

describe('declining the survey ends the call politely', () => {
  for (const reply of ['no', 'no thanks', 'not interested', "sorry, I don't have time"]) {
    it(`"${reply}": thanks, then the bot hangs up`, async () => {
      const s = await startSurvey();
      caller = s.caller;
      await s.caller.say(reply);
      expect(s.agent.result?.status).toBe('completed');
      expect(s.agent.result?.answers).toEqual({ consent: false });
      expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, THANKS_LINE]);
      endedByBotAfter(s.caller, THANKS_LINE);
    });
  }

  it('"I\'d rather not": whatever it counts as, the call ends with a goodbye', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.say("I'd rather not");
    const last = s.agent.result?.status === 'completed' ? THANKS_LINE : GOODBYE_LINE;
    expect(s.caller.agentLines).toEqual([CONSENT_QUESTION, last]);
    endedByBotAfter(s.caller, last);
  });

  it('no answer at all: after the no-input cap, a goodbye and the bot hangs up', async () => {
    const s = await startSurvey();
    caller = s.caller;
    for (let i = 0; i < 3; i++) await s.caller.silence(8_000);
    expect(s.agent.result).toMatchObject({ status: 'failed', step: 'consent' });
    endedByBotAfter(s.caller, GOODBYE_LINE);
  });

  it('a failure mid-survey (score never understood) ends with a goodbye too', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.say('yes');
    expect(s.caller.agentLines.at(-1)).toBe(SCORE_QUESTION);
    for (const nonsense of ['purple', 'banana', 'the weather']) await s.caller.say(nonsense);
    expect(s.agent.result).toMatchObject({ status: 'failed', step: 'score' });
    endedByBotAfter(s.caller, GOODBYE_LINE);
  });
});

describe('the call log tells who ended the call', () => {
  async function startBank() {
    const call = createBankCall({ transferer: new RecordingTransferer() });
    caller = await Caller.start({ agent: call.agent, llm: bankScriptedModel() });
    return { call, caller };
  }

  it('the caller hanging up mid-PIN is logged as the caller’s hang-up, not the bot’s', async () => {
    const logs = captureLogs();
    try {
      const { call, caller } = await startBank();
      await caller.dtmf('1');
      await caller.dtmf('43');
      await caller.hangup();
      expect(call.result().outcome).toBe('hangup');
      expect(caller.endedBy).toBe('caller');
      const text = logs.lines.join('\n');
      expect(text).toContain('call ended: the caller hung up');
      expect(text).not.toContain('call ended by the bot');
      expect(caller.transcript.at(-1)).toMatchObject({ role: 'caller', text: '(hangs up)' });
    } finally {
      logs.stop();
    }
  });

  it('the bot ending the call is logged and shown as the bot’s', async () => {
    const logs = captureLogs();
    try {
      const { caller } = await startBank();
      await caller.dtmf('1');
      await caller.dtmf('4321');
      endedByBotAfter(caller, 'Your balance is $1,234.56. Thank you for calling. Goodbye.');
      const text = logs.lines.join('\n');
      expect(text).toContain('call ended by the bot');
      expect(text).not.toContain('caller hung up');
    } finally {
      logs.stop();
    }
  });
});
