/**
 * What a deterministic parser concluded about one utterance: a typed value, "not understood"
 * (the task may fall back to the model), or "understood but breaks a rule" with a reason that
 * can be told to the caller.
 */
export type ParseResult<T> =
  | { kind: 'match'; value: T }
  | { kind: 'nomatch' }
  | { kind: 'invalid'; reason: string };

/** Builds a `match` result, so parsers never spell the object literal by hand. */
export function match<T>(value: T): ParseResult<T> {
  return { kind: 'match', value };
}

/** Builds a `nomatch` result: the utterance was not understood as this kind of answer. */
export function nomatch<T = never>(): ParseResult<T> {
  return { kind: 'nomatch' };
}

/** Builds an `invalid` result: understood, but it breaks a rule the caller can be told about. */
export function invalid<T = never>(reason: string): ParseResult<T> {
  return { kind: 'invalid', reason };
}

/** Narrows a result to `match`, for callers that only care about success. */
export function isMatch<T>(result: ParseResult<T>): result is { kind: 'match'; value: T } {
  return result.kind === 'match';
}
