/**
 * What a capture counts: failed answers by kind, rejected read-backs and caller turns. One
 * caller answer is one attempt: a model that fails the same answer twice (unclear on its own
 * tool reply, an invalid submission again) uses up one attempt, not two.
 */
import type { FailedOutcome } from '../outcome.js';
import { capReached, totalFailures } from './capture.js';
import type { RetryPolicy } from './policy.js';
import type { TaskCounters } from './typed-task-spec.js';

/** The kinds of failure a retry policy caps. */
export type FailureKind = 'noInput' | 'noMatch' | 'invalid';

/** A capture's counters, per answer and in total. */
export class Attempts {
  private readonly counts = { noInput: 0, noMatch: 0, invalid: 0, rejected: 0 };
  private turns = 0;
  /** A failure was already counted for the caller's current answer. */
  private failedThisAnswer = false;
  /** Times the model reported the current answer unclear. */
  private unclearThisAnswer = 0;

  /** A new caller answer: its failure may be counted again. */
  newAnswer(): void {
    this.failedThisAnswer = false;
    this.unclearThisAnswer = 0;
  }

  /** Counts a caller turn; false once there were more than `maxTurns`. */
  turn(maxTurns: number): boolean {
    this.turns += 1;
    return this.turns <= maxTurns;
  }

  /** Counts one failure of a kind (a rejected read-back too); returns how many there were. */
  count(kind: FailureKind | 'rejected'): number {
    if (kind === 'noMatch' || kind === 'invalid') this.failedThisAnswer = true;
    this.counts[kind] += 1;
    return this.counts[kind];
  }

  /**
   * Counts a failure found on the model's path, at most once per caller answer. Returns false
   * when this answer had already failed.
   */
  countOnce(kind: 'noMatch' | 'invalid'): boolean {
    if (this.failedThisAnswer) return false;
    this.count(kind);
    return true;
  }

  /** The model reported the current answer unclear: counted once; returns the times so far. */
  unclear(): number {
    this.unclearThisAnswer += 1;
    this.countOnce('noMatch');
    return this.unclearThisAnswer;
  }

  /** Failures of a kind so far. */
  of(kind: FailureKind): number {
    return this.counts[kind];
  }

  /** All failed answers so far (the `attempts` of a failed outcome, less one for an answer). */
  get failures(): number {
    return totalFailures(this.counts);
  }

  /** The outcome a reached cap ends the capture with, or undefined while within bounds. */
  reached(retry: RetryPolicy<unknown>): FailedOutcome | undefined {
    return capReached(this.counts, retry);
  }

  /** A snapshot for flows and reports. */
  snapshot(): TaskCounters {
    return { ...this.counts, turns: this.turns };
  }
}
