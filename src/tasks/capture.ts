import { voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import type { FailedOutcome, FailureStatus, Outcome } from '../outcome.js';
import type { RetryPolicy } from './policy.js';

/**
 * What every capture (typed task, digits, menu) shares besides its way of listening:
 * which statuses a cap produces, how counters become an outcome, and how a session torn
 * down mid-capture becomes one.
 */

/** Statuses that mean "a retry cap was reached" (and so may run `retry.onExhausted`). */
export const EXHAUSTED_STATUSES: ReadonlySet<FailureStatus> = new Set([
  'noinput',
  'nomatch',
  'invalid',
  'maxRetries',
]);

/** Failure counters a capture keeps. `rejected` counts read-backs the caller said no to. */
export interface FailureCounts {
  noInput: number;
  noMatch: number;
  invalid: number;
  rejected?: number;
}

/** All failed answers so far. */
export function totalFailures(counts: FailureCounts): number {
  return counts.noInput + counts.noMatch + counts.invalid + (counts.rejected ?? 0);
}

/** The outcome a reached cap ends the capture with, or undefined while all are within bounds. */
export function capReached(
  counts: FailureCounts,
  retry: RetryPolicy<unknown>,
): FailedOutcome | undefined {
  const attempts = totalFailures(counts);
  if (counts.noInput >= retry.maxNoInput) {
    return { status: 'noinput', attempts, reason: `no answer after ${counts.noInput} prompts` };
  }
  if (counts.noMatch >= retry.maxNoMatch) {
    return { status: 'nomatch', attempts, reason: `not understood ${counts.noMatch} times` };
  }
  if (counts.invalid >= retry.maxInvalid) {
    return { status: 'invalid', attempts, reason: `invalid answer ${counts.invalid} times` };
  }
  if (attempts >= retry.maxAttempts) {
    return { status: 'maxRetries', attempts, reason: `${attempts} failed attempts` };
  }
  return undefined;
}

/**
 * The outcome of a capture whose session was torn down under it (upstream completes the
 * task with an error): `hangup` when the caller left, `cancelled` otherwise. Never throws.
 */
export function unwoundOutcome(
  error: unknown,
  call: CallContext | undefined,
  attempts: number,
): FailedOutcome {
  const hungUp = call?.hungUp;
  return {
    status: hungUp ? 'hangup' : 'cancelled',
    attempts,
    reason: hungUp?.reason ?? (error instanceof Error ? error.message : String(error)),
  };
}

/** Joins sentences for speech, ending each with punctuation and dropping empty parts. */
export function joinSpeech(...parts: string[]): string {
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => (/[.?!]$/.test(p) ? p : `${p}.`))
    .join(' ');
}

/**
 * The shell every capture task shares (typed tasks, digits, menus): an upstream AgentTask
 * whose `run()` always resolves an {@link Outcome}. A session torn down mid-capture becomes
 * `hangup` or `cancelled`; an error before the task ever started (awaited outside a tool or
 * `onEnter`) is a programming error and is rethrown. Subclasses set `entered` and `call` in
 * `onEnter` and release their timers and listeners in `cleanup()`.
 */
export abstract class CaptureTask<T> extends voice.AgentTask<Outcome<T>> {
  /** True once `onEnter` ran. */
  protected entered = false;
  /** The call this task runs in (set in `onEnter`). */
  protected call: CallContext | undefined;

  /** Failed answers so far (the `attempts` of an unwound outcome). */
  protected abstract failures(): number;

  /** Releases the task's timers and listeners; runs whenever `run()` ends. */
  protected abstract cleanup(): void;

  /** Runs the task inline and resolves its outcome; never throws for caller behaviour. */
  override async run(): Promise<Outcome<T>> {
    try {
      return await super.run();
    } catch (error) {
      if (!this.entered) throw error;
      return unwoundOutcome(error, this.call, this.failures());
    } finally {
      this.cleanup();
    }
  }
}
