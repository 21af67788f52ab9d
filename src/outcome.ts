import type { InputModality } from './core/call.js';

/** The statuses a capture can end in without a value. */
export type FailureStatus =
  | 'noinput'
  | 'nomatch'
  | 'invalid'
  | 'declined'
  | 'maxRetries'
  | 'hangup'
  | 'transferred'
  | 'timeout'
  | 'cancelled';

/** A captured value and how it was obtained. */
export interface OkOutcome<T> {
  status: 'ok';
  value: T;
  /** Caller answers it took (1 = first try). */
  attempts: number;
  /** True when the caller confirmed the read-back. */
  confirmed?: boolean;
  /** How the accepted answer arrived. */
  modality?: InputModality;
}

/** A capture that ended without a value; expected caller behaviour, never an exception. */
export interface FailedOutcome {
  status: FailureStatus;
  attempts: number;
  /** What happened, in words a log reader or a summary for a human agent can use. */
  reason?: string;
}

/**
 * The result of every capture: `ok` with a typed value, or a typed reason it ended
 * without one (silence, nonsense, refusal, hang-up, ...).
 * `ok` names a value, as a Result does, not a run: a run that ended well (a flow, a
 * delegated task) is `completed`.
 */
export type Outcome<T> = OkOutcome<T> | FailedOutcome;

/** Narrows an outcome to its `ok` case. */
export function isOk<T>(outcome: Outcome<T>): outcome is OkOutcome<T> {
  return outcome.status === 'ok';
}

/** The value of an `ok` outcome, or `fallback` otherwise. */
export function valueOr<T, F>(outcome: Outcome<T>, fallback: F): T | F {
  return outcome.status === 'ok' ? outcome.value : fallback;
}
