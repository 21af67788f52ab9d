/**
 * What a deterministic parser concluded about one utterance: a typed value, "not understood"
 * (the task may fall back to the model), or "understood but breaks a rule" with a reason that
 * can be told to the caller.
 *
 * Two refinements carry what a caller's hedging means, so a task can ask instead of guessing:
 * - `match` with `approximate: true`: the caller gave this value as an estimate ("about six");
 *   a typed task reads it back ("Is that a six?") before taking it, whatever its confirm policy.
 * - `nomatch` with `candidates`: the caller offered alternatives ("seven or eight"); no value is
 *   taken, and a typed task asks which one. They are values of the parser's type, typed
 *   `unknown` so a `nomatch` passes through any `ParseResult<U>` unchanged; a typed task checks
 *   each against its schema before offering it.
 *
 * A fourth kind, `declined`, says the caller refused to answer ("skip", "no thanks" to an
 * optional question): the task ends as `declined` (a skippable flow step is skipped) and the
 * words are never stored as the answer.
 */
export type ParseResult<T> =
  | { kind: 'match'; value: T; approximate?: boolean }
  | { kind: 'nomatch'; candidates?: readonly unknown[] }
  | { kind: 'invalid'; reason: string }
  | { kind: 'declined'; reason?: string };

/** Builds a `match` result, so parsers never spell the object literal by hand. */
export function match<T>(value: T): ParseResult<T> {
  return { kind: 'match', value };
}

/** Builds an approximate `match`: the value the caller estimated ("about six", "roughly 20"). */
export function approximately<T>(value: T): ParseResult<T> {
  return { kind: 'match', value, approximate: true };
}

/** Builds a `nomatch` result: the utterance was not understood as this kind of answer. */
export function nomatch<T = never>(): ParseResult<T> {
  return { kind: 'nomatch' };
}

/** Builds a `nomatch` that names the alternatives the caller offered ("seven or eight"). */
export function alternatives<T>(candidates: readonly T[]): ParseResult<T> {
  return { kind: 'nomatch', candidates };
}

/** Builds an `invalid` result: understood, but it breaks a rule the caller can be told about. */
export function invalid<T = never>(reason: string): ParseResult<T> {
  return { kind: 'invalid', reason };
}

/** Builds a `declined` result: the caller refused to answer; `reason` says why, if known. */
export function declined<T = never>(reason?: string): ParseResult<T> {
  return reason === undefined ? { kind: 'declined' } : { kind: 'declined', reason };
}

/** Narrows a result to `match`, for callers that only care about success. */
export function isMatch<T>(
  result: ParseResult<T>,
): result is { kind: 'match'; value: T; approximate?: boolean } {
  return result.kind === 'match';
}
