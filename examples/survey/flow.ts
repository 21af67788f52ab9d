import type { voice } from '@livekit/agents';
import { announce, type Escalate, type FlowValueOf, flow } from 'taskline/flows';
import { email, freeText, number, yesNo } from 'taskline/tasks';
import { type Transferer, transferCall } from 'taskline/telephony';

/** Spoken first; a "no" ends the survey politely. */
export const CONSENT_QUESTION =
  'Hi! Do you have a minute for a two-question survey about your visit?';
/** The 0-10 question; answered by voice or keypad. */
export const SCORE_QUESTION =
  'On a scale from 0 to 10, how likely are you to recommend us to a friend? Say the number or press it on your keypad.';
/** Asked after a score of 0 to 6. */
export const REASON_QUESTION = 'Sorry to hear that. What is the main reason for your score?';
/** Asked after a score of 9 or 10. */
export const REFERRAL_QUESTION =
  'Wonderful! Would you like to join our referral program and get a gift for every friend you refer?';
/** Asked after a yes to the referral question. */
export const EMAIL_QUESTION = 'Great. What email address should we send your referral link to?';
/** The last line of every survey call that got its answers. */
export const THANKS_LINE = 'Thank you for your time. Goodbye!';
/** The last line of a survey call that ended without them (a refusal, no answer). */
export const GOODBYE_LINE = 'No problem. Thank you for your time. Goodbye!';

/** Where a caller who asks for a person goes: the survey team. */
export const SURVEY_TEAM = '+15550123';
/** Said before the transfer to the survey team. */
export const TRANSFER_LINE = 'Please hold while I put you through to our survey team.';

const transferers = new WeakMap<voice.AgentSession, Transferer>();

/** Gives one survey call the way its deployment hands callers to a person. */
export function useTransferer(session: voice.AgentSession, transferer: Transferer): void {
  transferers.set(session, transferer);
}

/**
 * The survey's transfer, run when the caller asks for a person ("agent", "can I talk to
 * someone", key 0 where the question takes no keys): the call's transferer, to the team.
 */
export const toSurveyTeam: Escalate<never> = async (outcome, { session }) => {
  const transferer = transferers.get(session);
  if (!transferer) {
    return { ...outcome, reason: 'this deployment cannot transfer calls' };
  }
  return transferCall(
    transferer,
    {
      to: SURVEY_TEAM,
      session,
      summary: 'Survey caller asked for a person',
      announce: TRANSFER_LINE,
    },
    outcome,
  );
};

const score = number({
  name: 'score',
  question: SCORE_QUESTION,
  min: 0,
  max: 10,
  integer: true,
  keypad: true, // "7" or "1 0" on the phone's keypad works as well as saying it
});

/** Where a score leads: 0-6 asks why, 9-10 asks about referrals, 7-8 goes to the thanks. */
export function scoreBand(s: number): 'reason' | 'referral' | 'thanks' {
  return s <= 6 ? 'reason' : s >= 9 ? 'referral' : 'thanks';
}

/**
 * The customer survey: consent, a 0-10 score (speech or keypad), then a branch on the
 * score — 0-6 asks why, 9-10 asks about referrals and a contact email, 7-8 goes straight
 * to the thanks. The caller may go back to change their score, and from any question ask
 * to hear it again, skip it (reason, email), stop, or talk to a person (`.repair`). The same survey as data is
 * survey.flow.yaml (run by document/index.ts).
 */
export const surveyFlow = flow('survey', { label: 'customer survey', version: 1 })
  .step('consent', yesNo({ name: 'consent', question: CONSENT_QUESTION }), {
    label: 'consent to the survey',
    next: { true: 'score', false: 'thanks' },
  })
  .step('score', score, {
    label: 'your score from 0 to 10',
    canRevisit: true,
    next: {
      to: ['reason', 'referral', 'thanks'],
      pick: scoreBand,
      labels: { reason: '0-6', referral: '9-10', thanks: '7-8' },
    },
  })
  .step('reason', freeText({ name: 'reason', question: REASON_QUESTION, maxChars: 300 }), {
    label: 'the reason for your score',
    skippable: true,
    next: 'thanks',
  })
  .step('referral', yesNo({ name: 'referral', question: REFERRAL_QUESTION }), {
    label: 'the referral program',
    next: { true: 'email', false: 'thanks' },
  })
  .step('email', email({ name: 'email', question: EMAIL_QUESTION }), {
    label: 'your email address',
    skippable: true,
    next: 'thanks',
  })
  .step('thanks', announce(THANKS_LINE, 'thanks'))
  // Heard in every question: "actually my score is 9", "say that again", "skip" (reason and
  // email), "stop" (confirmed first), "agent" or key 0 (the survey team).
  .repair({ human: { key: '0', escalate: toSurveyTeam } });

/** The survey's typed answers: `{ consent: boolean; score?: number; reason?: string; ... }`. */
export type SurveyAnswers = FlowValueOf<typeof surveyFlow>;
