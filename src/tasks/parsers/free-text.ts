import { TasklineError } from '../../core/errors.js';
import { nothingToSay, refusal } from './refusal.js';
import { declined, invalid, match, nomatch, type ParseResult } from './result.js';

/** Limits on a free-form answer. */
export interface FreeTextOptions {
  /** Longest accepted answer, in characters after trimming. */
  maxChars: number;
  /** Shortest accepted answer (default 1: anything but silence). */
  minChars?: number;
  /**
   * The question may go unanswered: a reply that says nothing ("no", "nothing", "skip",
   * "nope, that's all") is declined, not stored. Default false: then only a refusal to answer
   * ("no thanks", "I'd rather not say") is declined.
   */
  optional?: boolean;
}

/**
 * Accepts any answer as said, with whitespace trimmed and collapsed: empty → nomatch; a
 * refusal (and, for an optional question, a reply that says nothing) → declined; longer than
 * `maxChars` or shorter than `minChars` → invalid with a reason. Throws `invalid_argument` for
 * limits that can never be met (a programming error).
 */
export function freeText(text: string, options: FreeTextOptions): ParseResult<string> {
  const { maxChars, minChars = 1 } = options;
  if (!Number.isInteger(maxChars) || maxChars < 1 || minChars > maxChars) {
    throw new TasklineError(
      'invalid_argument',
      `freeText needs 1 <= minChars <= maxChars; got minChars=${minChars}, maxChars=${maxChars}.`,
    );
  }
  const value = text.replace(/\s+/gu, ' ').trim();
  if (value.length === 0) return nomatch();
  if (refusal(value) !== undefined || (options.optional && nothingToSay(value))) {
    return declined();
  }
  const length = [...value].length;
  if (length > maxChars) {
    return invalid(`That's too long: please keep it under ${maxChars} characters.`);
  }
  if (length < minChars) {
    return invalid(`That's too short: please say at least ${minChars} characters.`);
  }
  return match(value);
}
