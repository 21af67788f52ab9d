import { TasklineError } from '../../core/errors.js';
import { type ChoiceOption, choice } from './choice.js';
import { readQuantity } from './number.js';
import {
  alternatives,
  approximately,
  invalid,
  match,
  nomatch,
  type ParseResult,
} from './result.js';
import { selfCorrected } from './speech.js';
import { cleanTokens } from './words.js';

/** A rating scale: whole numbers from `min` to `max`, optionally with spoken labels. */
export interface LikertOptions {
  /** Lowest point on the scale (an integer). */
  min: number;
  /** Highest point on the scale (an integer, above `min`). */
  max: number;
  /** Names for points, e.g. { 1: 'very unlikely', 5: 'very likely' }. */
  labels?: Readonly<Record<number, string>>;
}

function assertScale(options: LikertOptions | undefined): asserts options is LikertOptions {
  const min = options?.min;
  const max = options?.max;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min! >= max!) {
    throw new TasklineError(
      'invalid_argument',
      `likert needs a scale { min, max } with integer bounds and min < max; got ${
        options === undefined ? 'no scale' : `min=${min}, max=${max}`
      }. Fix the task definition.`,
    );
  }
}

/** Removes "stars", "points" and "I'd give it …" around a rating. */
function stripRatingWords(text: string): string {
  return cleanTokens(text)
    .join(' ')
    .replace(/\b(?:stars?|points?)\b/gu, ' ')
    .replace(/^(?:i'd|i would|i will|i'll)?\s*(?:give|rate)\s+(?:it|you|them|that|this)\s+/u, '')
    .trim();
}

const inScale = (v: number, { min, max }: LikertOptions) =>
  Number.isInteger(v) && v >= min && v <= max;

function likertOnce(text: string, options: LikertOptions): ParseResult<number> {
  const { min, max } = options;
  const q = readQuantity(stripRatingWords(text));
  if (q?.kind === 'alternatives') {
    const valid = q.values.filter((v) => inScale(v, options));
    return valid.length >= 2 ? alternatives(valid) : nomatch();
  }
  if (q?.kind === 'value') {
    if (q.outOf !== undefined && q.outOf !== max) {
      return invalid(`Please use the scale from ${min} to ${max}.`);
    }
    if (!inScale(q.value, options))
      return invalid(`Please pick a whole number from ${min} to ${max}.`);
    return q.approximate ? approximately(q.value) : match(q.value);
  }
  const labels: ChoiceOption[] = Object.entries(options.labels ?? {}).map(([point, label]) => ({
    value: point,
    label,
  }));
  if (labels.length === 0) return nomatch();
  // Label matching without positions or partial words: on a scale, "the first" or "likely"
  // inside "very likely" must not pick a point.
  const picked = choice(text, labels, { positional: false, partial: false });
  return picked.kind === 'match' ? match(Number(picked.value)) : nomatch();
}

/**
 * Reads a rating on a scale: a number in range ("four", "4", "4 out of 5", "I'd give it a 4",
 * "a solid seven") or one of the label texts ("very likely"). "About a four" is an approximate
 * match; "three or four" a nomatch with both as `candidates`. A number outside the scale, a
 * fraction, or an "out of N" that is not the scale's top → invalid with a reason. Throws
 * `invalid_argument` for a missing or malformed scale (a programming error, not caller
 * behaviour).
 */
export function likert(text: string, options: LikertOptions): ParseResult<number> {
  assertScale(options);
  return selfCorrected(text, (t) => likertOnce(t, options)) ?? likertOnce(text, options);
}
