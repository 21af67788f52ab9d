import type { FailedOutcome, Outcome } from '../outcome.js';
import type { RepairKind } from '../tasks/parsers/repair.js';
import type { CheckpointIO } from './checkpoint-io.js';
import type { FlowState } from './checkpoints/types.js';
import { type PickFailure, valuesOf } from './graph.js';
import type { HeardRepairs } from './repair/desk.js';
import {
  type CheckpointRefusal,
  END,
  type FlowIncomplete,
  type FlowReport,
  type FlowResult,
  type FlowStatus,
  type StepRecord,
} from './types.js';

/**
 * The per-call report (JSON-serializable): every step run across the call's sessions with
 * its call-clock duration, attempts, no-input / no-match counts, outcome and modality.
 */
export function buildReport(state: FlowState): FlowReport {
  const totals = { attempts: 0, noInput: 0, noMatch: 0, invalid: 0, steps: state.records.length };
  for (const r of state.records) {
    totals.attempts += r.attempts;
    totals.noInput += r.noInput;
    totals.noMatch += r.noMatch;
    totals.invalid += r.invalid;
  }
  const durationMs = state.records.reduce((sum, r) => sum + r.durationMs, 0);
  const repairs: Partial<Record<RepairKind, number>> = {};
  for (const kind of state.records.flatMap((r) => r.repairs ?? [])) {
    repairs[kind] = (repairs[kind] ?? 0) + 1;
  }
  return {
    flow: state.flow,
    callId: state.callId,
    status: state.status,
    startedAt: state.startedAt,
    ...(state.endedAt !== undefined ? { endedAt: state.endedAt } : {}),
    durationMs,
    path: [...state.path],
    steps: state.records.map((r) => ({ ...r })),
    resumes: state.resumes,
    backSteps: state.backSteps,
    totals,
    ...(Object.keys(repairs).length > 0 ? { repairs } : {}),
  };
}

/**
 * The result of a flow that ran to its end: the typed answers and the report (and, for a
 * call returned from its checkpoint, the masked answers it never stored).
 */
export function completedResult<R>(state: FlowState, withheld?: string[]): FlowResult<R> {
  const value = valuesOf(state.entries) as R;
  return {
    status: 'completed',
    value,
    answers: { ...value },
    report: buildReport(state),
    ...(withheld && withheld.length > 0 ? { withheld } : {}),
  };
}

/** The result of a flow whose stored checkpoint was refused: nothing asked, nothing written. */
export function refusedResult<R>(state: FlowState, refusal: CheckpointRefusal): FlowResult<R> {
  return {
    ...incompleteResult<R>(
      state,
      'failed',
      `the call's checkpoint was refused (${refusal.code}): ${refusal.message}`,
    ),
    error: { code: 'checkpoint_refused', message: refusal.message },
    refused: refusal,
  };
}

/** The result of a flow that stopped early: the answers so far, why, and where. */
export function incompleteResult<R>(
  state: FlowState,
  status: Exclude<FlowStatus, 'completed'>,
  reason: string,
  step?: string,
  outcome?: FailedOutcome,
): FlowIncomplete<R> {
  return {
    status,
    answers: valuesOf(state.entries) as Partial<R>,
    reason,
    report: buildReport({ ...state, status }),
    ...(step ? { step } : {}),
    ...(outcome ? { outcome } : {}),
  };
}

/**
 * The result of a flow that cannot go on: the store failed (`failed`, with its `error`), or
 * another session advanced the call (`conflict`).
 */
export function lostResult<R>(state: FlowState, io: CheckpointIO | undefined): FlowResult<R> {
  const error = io?.errorInfo();
  if (error) {
    const position = state.position;
    return {
      ...incompleteResult<R>(
        state,
        'failed',
        `the checkpoint store failed: ${error.message}`,
        position === END ? undefined : position,
      ),
      error,
    };
  }
  return incompleteResult<R>(
    state,
    'conflict',
    io?.conflict?.message ?? 'another session advanced this call',
  );
}

/** What one step run left: its outcome, the counters behind it, and a go-back, if any. */
export interface StepRun {
  outcome: Outcome<unknown>;
  counters: { noInput: number; noMatch: number; invalid: number };
  /** Set when the caller went back to another step. */
  jump?: string;
  /** The caller's repair requests while the step was asked, and the one that ended it. */
  heard?: HeardRepairs;
  /** How the step's answer is spoken (for a correction's acknowledgement). */
  spoken?: string;
}

/** A nested flow's result as the outer flow's step outcome (its counters summed). */
export function nestedStepRun(name: string, result: FlowResult<unknown>): StepRun {
  const t = result.report.totals;
  const counters = { noInput: t.noInput, noMatch: t.noMatch, invalid: t.invalid };
  if (result.status === 'completed') {
    return { outcome: { status: 'ok', value: result.value, attempts: 1 }, counters };
  }
  const status =
    result.status === 'hangup' || result.status === 'transferred'
      ? result.status
      : result.status === 'cancelled' || result.status === 'conflict'
        ? 'cancelled'
        : (result.outcome?.status ?? 'maxRetries');
  return {
    outcome: { status, attempts: t.attempts, reason: `${name}: ${result.reason}` },
    counters,
  };
}

/** The record of one step run, before the runner knows how it ended for the flow. */
export function stepRecord(
  step: string,
  visit: number,
  startedAt: number,
  endedAt: number,
  run: StepRun,
): StepRecord {
  const { outcome, counters } = run;
  const record: StepRecord = {
    step,
    visit,
    startedAt,
    endedAt,
    durationMs: endedAt - startedAt,
    attempts: outcome.attempts,
    noInput: counters.noInput,
    noMatch: counters.noMatch,
    invalid: counters.invalid,
    outcome: outcome.status,
  };
  if (outcome.status === 'ok' && outcome.modality) record.modality = outcome.modality;
  if (run.heard && run.heard.repairs.length > 0) record.repairs = [...run.heard.repairs];
  return record;
}

/** A failed pick as the step's outcome (`timeout`, or `error` in the record) and why. */
export function pickFailureOutcome(
  error: PickFailure,
  attempts: number,
  record: StepRecord,
): FailedOutcome {
  const timedOut = error.kind === 'pick_timeout';
  record.outcome = timedOut ? 'timeout' : 'error';
  record.reason = error.message;
  return { status: timedOut ? 'timeout' : 'cancelled', attempts, reason: error.message };
}
