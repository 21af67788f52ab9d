/**
 * The survey's room entry through a real server: a phone caller (their number presented as
 * LiveKit SIP presents it) drops mid-survey, calls back, and the second dispatch resumes the
 * survey where it stopped — from the SQLite checkpoint keyed by their number.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONSENT_QUESTION,
  EMAIL_QUESTION,
  REFERRAL_QUESTION,
  type SurveyOutcome,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { AGENT_NAME } from '../../examples/survey/room.js';
import { E2E_DIR, liveKitSuite, liveKitUnavailable } from './harness/index.js';

const BOB = { identity: 'sip_bob', phoneNumber: '+14155550177' };
const exact = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

describe.skipIf(await liveKitUnavailable())('the survey through a real LiveKit server', () => {
  const lk = liveKitSuite();

  it('a dropped call resumes on the second dispatch, from the checkpoint of the caller number', async () => {
    const worker = await lk.worker({
      file: 'tests/e2e/workers/survey.ts',
      agentName: AGENT_NAME,
      env: { TASKLINE_CHECKPOINTS: join(E2E_DIR, `survey-resume-${process.pid}.db`) },
    });
    const first = `survey-${process.pid}-1`;
    const call1 = await lk.call(first, AGENT_NAME, BOB);
    await call1.heard(exact(CONSENT_QUESTION), 60_000);
    await call1.quiet();
    await call1.say('yes, sure');
    await call1.heard(/Say the number or press it on your keypad\.$/);
    await call1.quiet();
    await call1.press('9');
    await call1.heard(exact(REFERRAL_QUESTION));
    await call1.leave();
    const dropped = await worker.result<SurveyOutcome>(first);
    expect(dropped.result).toEqual({
      status: 'hangup',
      answers: { consent: true, score: 9 },
      repairs: {},
    });

    const second = `survey-${process.pid}-2`;
    const call2 = await lk.call(second, AGENT_NAME, BOB);
    const welcome = await call2.heard(/./, 60_000);
    expect(welcome.text).toMatch(/^Welcome back\. We'll pick up where we/);
    await call2.heard(exact(REFERRAL_QUESTION));
    await call2.quiet();
    await call2.say('yes please');
    await call2.heard(exact(EMAIL_QUESTION));
    await call2.quiet();
    await call2.say('jane dot doe at example dot com');
    await call2.afterTurn();
    await call2.say('yes');
    await call2.heard(exact(THANKS_LINE));
    const done = await worker.result<SurveyOutcome>(second);
    expect(done.result).toEqual({
      status: 'completed',
      answers: { consent: true, score: 9, referral: true, email: 'jane.doe@example.com' },
      repairs: {},
    });
    expect(call2.agentLines.some((l) => l.text.includes(CONSENT_QUESTION))).toBe(false);
    await call2.disconnected();
    expect(call2.roomDeleted).toBe(true);
  });
});
