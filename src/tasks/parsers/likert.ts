import { TasklineError } from '../../core/errors.js';
import { type ChoiceOption, choice } from './choice.js';
import { checkNumber, readNumber } from './number.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
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

function assertScale(options: LikertOptions): void {
  const { min, max } = options;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min >= max) {
    throw new TasklineError(
      'invalid_argument',
      `likert needs integer bounds with min < max; got min=${min}, max=${max}. Fix the task definition.`,
    );
  }
}

/** Removes "out of five", "/5", "stars", "a …" around a rating; returns the rest and any "out of". */
function stripScaleWords(text: string): { core: string; outOf?: number } {
  let core = cleanTokens(text).join(' ');
  let outOf: number | undefined;
  const slash = /^(.*\d)\s*\/\s*(\d+)$/u.exec(core);
  const outOfPhrase = /^(.*?)\s+(?:out of|of)\s+(.+)$/u.exec(core);
  if (slash) {
    core = slash[1]!;
    outOf = Number(slash[2]);
  } else if (outOfPhrase) {
    const denominator = readNumber(outOfPhrase[2]!);
    if (denominator !== undefined) {
      core = outOfPhrase[1]!;
      outOf = denominator;
    }
  }
  core = core
    .replace(/\b(?:stars?|points?)\b/gu, ' ')
    .replace(/^(?:i'd|i would|i will|i'll)?\s*(?:give|rate)\s+(?:it|you|them|that)\s+/u, '')
    .replace(/^(?:a|an)\s+(?=\S)/u, '')
    .trim();
  return outOf === undefined ? { core } : { core, outOf };
}

/**
 * Reads a rating on a scale: a number in range ("four", "4", "4 out of 5", "I'd give it a 4")
 * or one of the label texts ("very likely"). A number outside the scale, a fraction, or an
 * "out of N" that is not the scale's top → invalid with a reason. Throws `invalid_argument` for
 * a malformed scale (a programming error, not caller behaviour).
 */
export function likert(text: string, options: LikertOptions): ParseResult<number> {
  assertScale(options);
  const { min, max } = options;
  const { core, outOf } = stripScaleWords(text);
  const value = readNumber(core);
  if (value !== undefined) {
    if (outOf !== undefined && outOf !== max) {
      return invalid(`Please use the scale from ${min} to ${max}.`);
    }
    const checked = checkNumber(value, { min, max, integer: true });
    if (checked.kind === 'invalid') {
      return invalid(`Please pick a whole number from ${min} to ${max}.`);
    }
    return checked;
  }
  const labels: ChoiceOption[] = Object.entries(options.labels ?? {}).map(([point, label]) => ({
    value: point,
    label,
  }));
  const picked = choiceByLabel(text, labels);
  if (picked.kind === 'match') return match(Number(picked.value));
  return nomatch();
}

/** Label matching without positional words: on a scale, "the first" is not a rating. */
function choiceByLabel(text: string, labels: readonly ChoiceOption[]): ParseResult<string> {
  if (labels.length === 0) return nomatch();
  return choice(text, labels, { positional: false });
}
