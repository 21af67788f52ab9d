import { parseCardinal } from './numerals.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
import { cleanTokens, plainWords } from './words.js';

/** Rules a spoken or typed number must satisfy. */
export interface NumberOptions {
  /** Smallest allowed value (inclusive). */
  min?: number;
  /** Largest allowed value (inclusive). */
  max?: number;
  /** Reject fractions such as 3.5. */
  integer?: boolean;
}

const NUMERIC = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;

function parseNumeric(token: string): number | undefined {
  if (!NUMERIC.test(token) || !/\d/.test(token)) return undefined;
  const value = Number(token.replace(/,/g, ''));
  return Number.isFinite(value) ? value : undefined;
}

/** Formats a bound for a sentence a caller will hear ("1,000" reads better than "1000"). */
function say(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** Checks a parsed number against the options, producing the reason a caller would be told. */
export function checkNumber(value: number, options: NumberOptions): ParseResult<number> {
  const { min, max, integer } = options;
  if (integer && !Number.isInteger(value)) return invalid('Please say a whole number.');
  const low = min !== undefined && value < min;
  const high = max !== undefined && value > max;
  if (low || high) {
    if (min !== undefined && max !== undefined) {
      return invalid(`The number must be between ${say(min)} and ${say(max)}.`);
    }
    if (low) return invalid(`The number must be at least ${say(min!)}.`);
    return invalid(`The number must be at most ${say(max!)}.`);
  }
  return match(value);
}

/** Reads the number an utterance consists of, or undefined when it is not just one number. */
export function readNumber(text: string): number | undefined {
  const tokens = cleanTokens(text);
  if (tokens.length === 1) {
    const v = parseNumeric(tokens[0]!);
    if (v !== undefined) return v;
  }
  if (tokens.length === 2 && (tokens[0] === 'minus' || tokens[0] === 'negative')) {
    const v = parseNumeric(tokens[1]!);
    if (v !== undefined && v >= 0) return v === 0 ? 0 : -v;
  }
  const words = tokens.flatMap((t) => plainWords(t));
  return parseCardinal(words);
}

/**
 * Reads one number, written ("42", "-2", "3.5", "1,200") or spoken ("forty two", "three hundred
 * and five", "minus three", "zero", "oh", "a dozen", "two and a half"). Digit-by-digit speech
 * ("four two") is not a number here → nomatch; use `digits` for those. Out of range or not a
 * whole number when `integer` is set → invalid with a reason.
 */
export function number(text: string, options: NumberOptions = {}): ParseResult<number> {
  const value = readNumber(text);
  if (value === undefined) return nomatch();
  return checkNumber(value, options);
}
