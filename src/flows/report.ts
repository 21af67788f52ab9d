import type { FlowState } from './checkpoints/types.js';
import type { FlowReport } from './types.js';

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
  };
}
