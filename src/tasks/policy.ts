import { checkOptions, millis, type OptionTable, whole } from '../core/options.js';
import type { FailedOutcome, Outcome } from '../outcome.js';

/** Re-prompts per attempt: entry i is spoken after the (i+1)-th failure; the last repeats. */
export interface RepromptSet {
  noInput?: string[];
  noMatch?: string[];
  invalid?: string[];
}

/** What to do once a cap is reached: return the outcome, or run an escalation (a transfer). */
export type OnExhausted<T> = 'return' | ((outcome: FailedOutcome) => Promise<Outcome<T>>);

/**
 * How often a capture may fail before it gives up. Every cap is on by default and must
 * be a whole number from 1 to 20, so no configuration can make an unbounded loop.
 */
export interface RetryPolicy<T = unknown> {
  /** Silences allowed; this many no-inputs end the task as `noinput`. Default 3. */
  maxNoInput: number;
  /** Not-understood answers allowed; ends as `nomatch`. Default 3. */
  maxNoMatch: number;
  /** Understood-but-invalid answers allowed; ends as `invalid`. Default 3. */
  maxInvalid: number;
  /** All failed answers together (incl. rejected confirmations); ends as `maxRetries`. Default 6. */
  maxAttempts: number;
  /** Silence after the prompt that counts as no input. Default 8,000 ms. */
  noInputTimeoutMs: number;
  /** Tapered re-prompts. */
  prompts?: RepromptSet;
  /** Default 'return'. */
  onExhausted: OnExhausted<T>;
}

/**
 * A watchdog per task: whatever the model does, the task ends (as `timeout`) after this
 * long or this many caller turns.
 */
export interface Watchdog {
  /** Default 300,000 ms (5 minutes) on the call's clock. */
  maxDurationMs: number;
  /** Caller turns inside the task. Default 12. */
  maxTurns: number;
}

/**
 * When to read a value back before accepting it: never, only for spoken answers
 * ('audio': keypad and typed input are exact), or always.
 */
export type ConfirmPolicy = 'never' | 'audio' | 'always';

/** Defaults for {@link RetryPolicy}. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxNoInput: 3,
  maxNoMatch: 3,
  maxInvalid: 3,
  maxAttempts: 6,
  noInputTimeoutMs: 8_000,
  onExhausted: 'return',
};

/** Defaults for {@link Watchdog}. */
export const DEFAULT_WATCHDOG: Watchdog = { maxDurationMs: 300_000, maxTurns: 12 };

/** A retry policy's numeric options, each with its accepted range. */
const RETRY_OPTIONS = {
  maxNoInput: { range: whole(1, 20), default: DEFAULT_RETRY.maxNoInput },
  maxNoMatch: { range: whole(1, 20), default: DEFAULT_RETRY.maxNoMatch },
  maxInvalid: { range: whole(1, 20), default: DEFAULT_RETRY.maxInvalid },
  maxAttempts: { range: whole(1, 20), default: DEFAULT_RETRY.maxAttempts },
  noInputTimeoutMs: { range: millis(500, 120_000), default: DEFAULT_RETRY.noInputTimeoutMs },
} as const satisfies OptionTable;

/** A watchdog's numeric options, each with its accepted range. */
const WATCHDOG_OPTIONS = {
  maxDurationMs: { range: millis(1_000, 3_600_000), default: DEFAULT_WATCHDOG.maxDurationMs },
  maxTurns: { range: whole(1, 200), default: DEFAULT_WATCHDOG.maxTurns },
} as const satisfies OptionTable;

/** Merges overrides onto the defaults and rejects anything unbounded or nonsensical. */
export function resolveRetry<T>(overrides: Partial<RetryPolicy<T>> = {}): RetryPolicy<T> {
  // Caps keep a call from looping forever: each is bounded, its default filled in.
  const caps = checkOptions(RETRY_OPTIONS, overrides, { prefix: 'retry.' });
  return { ...DEFAULT_RETRY, ...overrides, ...caps } as RetryPolicy<T>;
}

/** Merges overrides onto the default watchdog and validates it. */
export function resolveWatchdog(overrides: Partial<Watchdog> = {}): Watchdog {
  return { ...overrides, ...checkOptions(WATCHDOG_OPTIONS, overrides, { prefix: 'watchdog.' }) };
}

/** The re-prompt for the n-th failure (1-based) of a kind, tapering to the last entry. */
export function pickReprompt(list: readonly string[] | undefined, n: number): string | undefined {
  if (!list || list.length === 0) return undefined;
  return list[Math.min(n, list.length) - 1];
}
