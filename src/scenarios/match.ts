/** How scenario expectations compare: text or /regex/ against lines, and deep partial match. */
import { isDeepStrictEqual } from 'node:util';
import { TasklineError } from '../core/errors.js';

/** A line matcher built from a scenario string: "/re/flags" is a regex, anything else a substring. */
export interface TextMatcher {
  /** As written in the file, for messages. */
  source: string;
  test(line: string): boolean;
}

const REGEX = /^\/(.+)\/([dgimsuy]*)$/s;

/** Builds the matcher for `text` (a bad regex is an invalid_scenario error). */
export function textMatcher(text: string): TextMatcher {
  const m = REGEX.exec(text);
  if (!m) return { source: JSON.stringify(text), test: (line) => line.includes(text) };
  let re: RegExp;
  try {
    re = new RegExp(m[1]!, m[2]!.replace(/[gy]/g, ''));
  } catch (error) {
    throw new TasklineError(
      'invalid_scenario',
      `${text} is not a valid regular expression: ${(error as Error).message}`,
    );
  }
  return { source: text, test: (line) => re.test(line) };
}

/** One or many, as scenario fields allow. */
export function asList<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * `{ $exists: false }` (the key must be absent, or undefined) or `{ $exists: true }` (present,
 * any value), as in MongoDB queries: how an `outcome` says a key is not there.
 */
function existsOperator(expected: unknown): boolean | undefined {
  if (typeof expected !== 'object' || expected === null || Array.isArray(expected)) return;
  const keys = Object.keys(expected);
  const value = (expected as Record<string, unknown>).$exists;
  return keys.length === 1 && typeof value === 'boolean' ? value : undefined;
}

/**
 * True when `actual` contains `expected`: objects compare the listed keys only, arrays
 * need the same length and match element by element, `{ $exists: false | true }` checks
 * that a key is absent or present, anything else is deep equality.
 */
export function deepMatch(actual: unknown, expected: unknown): boolean {
  const exists = existsOperator(expected);
  if (exists !== undefined) return (actual !== undefined) === exists;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => deepMatch(actual[i], e))
    );
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([k, v]) =>
      deepMatch((actual as Record<string, unknown>)[k], v),
    );
  }
  return isDeepStrictEqual(actual, expected);
}

/** The first place `actual` differs from `expected`, as "path: expected X, got Y". */
export function firstMismatch(actual: unknown, expected: unknown, path = ''): string | undefined {
  const here = path || '(the result)';
  const exists = existsOperator(expected);
  if (exists !== undefined) {
    if ((actual !== undefined) === exists) return undefined;
    return exists
      ? `${here}: expected a value, got nothing`
      : `${here}: expected nothing, got ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${here}: expected a list, got ${show(actual)}`;
    if (actual.length !== expected.length) {
      return `${here}: expected ${expected.length} item(s), got ${actual.length}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const miss = firstMismatch(actual[i], expected[i], `${path}[${i}]`);
      if (miss) return miss;
    }
    return undefined;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      return `${here}: expected an object, got ${show(actual)}`;
    }
    for (const [k, v] of Object.entries(expected)) {
      const miss = firstMismatch(
        (actual as Record<string, unknown>)[k],
        v,
        path ? `${path}.${k}` : k,
      );
      if (miss) return miss;
    }
    return undefined;
  }
  return isDeepStrictEqual(actual, expected)
    ? undefined
    : `${here}: expected ${show(expected)}, got ${show(actual)}`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
