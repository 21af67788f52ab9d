/**
 * What the flow does once a caller's request ended a step (see ./desk.ts): a correction goes
 * back to the earlier step (its new answer read there first), a cancel asks to make sure and
 * ends the flow, a request for a person runs the flow's transfer. The runner calls
 * {@link afterRepair} with the step's record and commits or stops as it says; the state and
 * the record are updated here.
 */
import type { voice } from '@livekit/agents';
import type { InputModality } from '../../core/call.js';
import type { FailedOutcome, Outcome } from '../../outcome.js';
import { repair as readRepair } from '../../tasks/parsers/repair.js';
import { match, type ParseResult } from '../../tasks/parsers/result.js';
import { yesNo as readYesNo } from '../../tasks/parsers/yes-no.js';
import { yesNo } from '../../tasks/prebuilt.js';
import type { FlowState } from '../checkpoints/types.js';
import type { StepDef } from '../definition.js';
import type { AnswersSoFar, FlowRepair, StepRecord } from '../types.js';
import { fillLine } from './config.js';
import type { PendingRepair, RepairDesk } from './desk.js';

/** What the runner does next. */
export type AfterRepair =
  /** Run the position's step (the same step again, or the corrected one), after `line`. */
  | {
      kind: 'continue';
      line?: string;
      /** A correction's new answer, read by the step it corrects before its question. */
      prefill?: { step: string; text: string; modality: InputModality };
    }
  /** End the flow: the caller ended the call, or was transferred, or hung up. */
  | {
      kind: 'stop';
      status: 'cancelled' | 'transferred' | 'hangup';
      outcome: FailedOutcome;
      by?: 'cancel' | 'human';
    }
  /** The transfer came back with an answer: it is the step's value. */
  | { kind: 'value'; value: unknown };

/** The running flow, as the repairs need it. */
export interface RepairRun {
  readonly repair: FlowRepair;
  readonly state: FlowState;
  readonly desk: RepairDesk;
  readonly session: voice.AgentSession;
  readonly callId: string;
  answers(): AnswersSoFar;
  /** The flow waits on the caller (a confirmation, a transfer) until `busy()`. */
  idle(): void;
  busy(): void;
}

/** Acts on the request that ended `step` (whose run is `record`). */
export async function afterRepair(
  run: RepairRun,
  step: StepDef,
  pending: PendingRepair,
  outcome: FailedOutcome,
  record: StepRecord,
): Promise<AfterRepair> {
  const state = run.state;
  switch (pending.kind) {
    case 'correct': {
      record.outcome = 'back';
      record.next = pending.target;
      record.reason = outcome.reason;
      state.backSteps += 1;
      // Where the caller was (the first step they left), across sessions too.
      state.revisit = { step: pending.target, returnTo: state.revisit?.returnTo ?? step.id };
      state.position = pending.target;
      return pending.answer
        ? { kind: 'continue', prefill: { step: pending.target, ...pending.answer } }
        : { kind: 'continue' };
    }
    case 'cancel': {
      const cancel = run.repair.cancel;
      const confirmed = cancel !== false && cancel.confirm ? await confirm(run) : 'yes';
      if (confirmed === 'hangup') {
        return { kind: 'stop', status: 'hangup', outcome: { ...outcome, status: 'hangup' } };
      }
      if (confirmed === 'no') {
        return again(run, step, record, 'the caller did not confirm ending the call', 'carryOn');
      }
      record.outcome = 'cancelled';
      record.reason = outcome.reason;
      return { kind: 'stop', status: 'cancelled', outcome, by: 'cancel' };
    }
    case 'human': {
      const human = run.repair.human;
      if (!human) return again(run, step, record, 'no transfer is declared', 'humanUnavailable');
      run.idle();
      let escalated: Outcome<unknown>;
      try {
        escalated = await human.escalate(outcome, {
          step: step.id,
          callId: run.callId,
          answers: run.answers(),
          session: run.session,
        });
      } catch (error) {
        escalated = {
          status: 'cancelled',
          attempts: outcome.attempts,
          reason: `the transfer failed: ${error instanceof Error ? error.message : String(error)}`,
        };
      } finally {
        run.busy();
      }
      if (escalated.status === 'ok') return { kind: 'value', value: escalated.value };
      if (escalated.status === 'transferred' || escalated.status === 'hangup') {
        record.outcome = escalated.status;
        record.reason = escalated.reason ?? outcome.reason;
        return { kind: 'stop', status: escalated.status, outcome: escalated, by: 'human' };
      }
      // No one took the call: say so, and ask no one again in this call.
      run.desk.humanUnavailable = true;
      return again(run, step, record, escalated.reason ?? escalated.status, 'humanUnavailable');
    }
  }
}

/** The step is asked again (the request did not end it after all), after a line. */
function again(
  run: RepairRun,
  step: StepDef,
  record: StepRecord,
  reason: string,
  line: 'carryOn' | 'humanUnavailable',
): AfterRepair {
  record.outcome = 'interrupted';
  record.next = step.id;
  record.reason = reason;
  // The same visit: a request the caller took back does not use up the step's maxVisits.
  run.state.visits[step.id] = Math.max(0, (run.state.visits[step.id] ?? 1) - 1);
  return { kind: 'continue', line: run.repair.lines[line] };
}

/** A reply to "Do you want to end this call?": a yes or a no, or the cancel said again. */
function cancelReply(text: string): ParseResult<boolean> {
  const answer = readYesNo(text);
  if (answer.kind === 'match') return answer;
  const again = readRepair(text);
  return again.kind === 'match' && again.value.kind === 'cancel' ? match(true) : answer;
}

/** Asks the caller to confirm ending the call: only a clear yes (or the cancel again) ends it. */
async function confirm(run: RepairRun): Promise<'yes' | 'no' | 'hangup'> {
  const question = yesNo({
    name: 'confirm_cancel',
    question: run.repair.lines.confirmCancel,
    parse: cancelReply,
    retry: { maxNoMatch: 1, maxNoInput: 1, maxInvalid: 1 },
    modelFallback: false,
  });
  run.idle();
  try {
    const answer = await question.run();
    if (answer.status === 'hangup') return 'hangup';
    return answer.status === 'ok' && answer.value ? 'yes' : 'no';
  } finally {
    run.busy();
  }
}

/**
 * The line after a correction was taken: "Okay, I've changed your zip code to 94110.", and
 * when the new answer leads elsewhere than where the caller was, that the questions change.
 */
export function correctedLine(
  repair: FlowRepair,
  names: { name: string; value: string },
  pathChanged: boolean,
): string {
  const said = fillLine(repair.lines.corrected, names);
  return pathChanged ? `${said} ${repair.lines.pathChanged}` : said;
}
