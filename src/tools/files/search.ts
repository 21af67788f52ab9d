import { FileError, type GrepMatch } from './backend.js';

/** Longest literal grep pattern accepted, in characters. */
export const MAX_LITERAL_PATTERN_LENGTH = 1000;

/** Longest regex grep pattern accepted, in characters. */
export const MAX_REGEX_PATTERN_LENGTH = 256;

/** A regex is only run on the first this-many characters of each line (bounds backtracking). */
export const MAX_REGEX_LINE_CHARS = 1000;

/** Most unbounded repetitions (`*`, `+`, `{n,}`, `{n,m}` with m > 16) one regex may contain. */
export const MAX_WIDE_QUANTIFIERS = 2;

/** A match's `text` is cut to this many characters, so a minified file cannot flood memory. */
export const MAX_MATCH_TEXT_CHARS = 2000;

const WIDE_REPEAT = 16;
const MAX_QUANTIFIERS = 20;

function invalid(message: string): FileError {
  return new FileError('invalid_pattern', message);
}

interface Frame {
  hasQuantifier: boolean;
  hasAlternation: boolean;
}

type Atom = { kind: 'simple' } | { kind: 'group'; repeatable: boolean } | undefined;

/** Parses `{n}`, `{n,}`, `{n,m}` at `i`; undefined when it is not a quantifier. */
function braceQuantifier(p: string, i: number): { max: number; end: number } | undefined {
  const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i, i + 24));
  if (!m) return undefined;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
  return { max, end: i + m[0].length - 1 };
}

/**
 * Refuses regular expressions that could backtrack without bound: backreferences,
 * lookarounds, a repeated group that itself contains a repetition or an alternation
 * (`(a+)+`, `(a|aa)*`), more than {@link MAX_WIDE_QUANTIFIERS} unbounded repetitions, and
 * patterns over {@link MAX_REGEX_PATTERN_LENGTH} characters. Throws `invalid_pattern` saying
 * what to change; returns the compiled (unicode) RegExp otherwise.
 */
export function compileSafeRegex(pattern: string): RegExp {
  if (pattern.length === 0) throw invalid('the pattern is empty');
  if (pattern.length > MAX_REGEX_PATTERN_LENGTH) {
    throw invalid(
      `the regex is longer than ${MAX_REGEX_PATTERN_LENGTH} characters; shorten it or search literally`,
    );
  }
  const frames: Frame[] = [{ hasQuantifier: false, hasAlternation: false }];
  let atom: Atom;
  let wide = 0;
  let quantifiers = 0;
  const top = (): Frame =>
    frames[frames.length - 1] ?? { hasQuantifier: false, hasAlternation: false };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) throw invalid('the regex ends with a lone backslash');
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) {
        throw invalid(
          'backreferences (\\1, \\k<name>) are not allowed; they can make a search hang',
        );
      }
      i++;
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 1] === '{') {
        const close = pattern.indexOf('}', i);
        if (close < 0) throw invalid('an escape like \\p{...} is not closed');
        i = close;
      }
      atom = { kind: 'simple' };
    } else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      if (j >= pattern.length) throw invalid('a character class "[" is not closed');
      i = j;
      atom = { kind: 'simple' };
    } else if (c === '(') {
      if (/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) {
        throw invalid('lookahead and lookbehind are not allowed; match the text directly');
      }
      if (pattern.startsWith('(?<', i)) {
        const close = pattern.indexOf('>', i);
        if (close < 0) throw invalid('a named group "(?<name>" is not closed');
        i = close;
      } else if (pattern.startsWith('(?:', i)) i += 2;
      frames.push({ hasQuantifier: false, hasAlternation: false });
      atom = undefined;
    } else if (c === ')') {
      if (frames.length === 1) throw invalid('the regex has an unmatched ")"');
      const inner = frames.pop() ?? { hasQuantifier: false, hasAlternation: false };
      const parent = top();
      parent.hasQuantifier ||= inner.hasQuantifier;
      parent.hasAlternation ||= inner.hasAlternation;
      atom = { kind: 'group', repeatable: !inner.hasQuantifier && !inner.hasAlternation };
    } else if (c === '|') {
      top().hasAlternation = true;
      atom = undefined;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      let max: number;
      if (c === '{') {
        const q = braceQuantifier(pattern, i);
        if (!q) {
          atom = { kind: 'simple' };
          continue;
        }
        max = q.max;
        i = q.end;
      } else max = c === '?' ? 1 : Number.POSITIVE_INFINITY;
      if (!atom) throw invalid(`"${c}" has nothing to repeat`);
      if (pattern[i + 1] === '?') i++; // lazy
      if (atom.kind === 'group' && !atom.repeatable && max > 1) {
        throw invalid(
          'a repeated group contains a repetition or "|" (like (a+)+ or (a|b)*), which can hang; ' +
            'use a character class such as [ab]* instead',
        );
      }
      top().hasQuantifier = true;
      quantifiers++;
      if (max > WIDE_REPEAT) wide++;
      if (wide > MAX_WIDE_QUANTIFIERS) {
        throw invalid(
          `the regex has more than ${MAX_WIDE_QUANTIFIERS} unbounded repetitions (*, +, {n,}); ` +
            'split the search or use a literal pattern',
        );
      }
      if (quantifiers > MAX_QUANTIFIERS) {
        throw invalid(`the regex has more than ${MAX_QUANTIFIERS} repetitions; simplify it`);
      }
      atom = undefined;
    } else {
      atom = { kind: 'simple' };
    }
  }
  if (frames.length !== 1) throw invalid('the regex has an unclosed "("');
  try {
    return new RegExp(pattern, 'u');
  } catch (err) {
    throw invalid(`not a valid regular expression: ${err instanceof Error ? err.message : err}`);
  }
}

/** Why a search stopped: the abort reason when it is a FileError, else a generic `timeout`. */
export function abortError(signal: AbortSignal): FileError {
  const reason: unknown = signal.reason;
  if (reason instanceof FileError) return reason;
  return new FileError(
    'timeout',
    'the search was stopped before it finished (cancelled or out of time); narrow the path or glob',
  );
}

/**
 * Keeps a long search responsive: checks the abort signal on every step and yields to the
 * event loop every few milliseconds of work so timers (time budgets) and cancellation fire.
 */
export class SearchBudget {
  readonly #signal: AbortSignal | undefined;
  #lastYield = performance.now();
  #steps = 0;

  constructor(signal?: AbortSignal) {
    this.#signal = signal;
  }

  /** Throws (a FileError) when the search has been aborted. */
  check(): void {
    if (this.#signal?.aborted) throw abortError(this.#signal);
  }

  /** One unit of work; `heavy` steps (regex lines) look at the clock every time. */
  async step(heavy = false): Promise<void> {
    this.check();
    if (!heavy && ++this.#steps % 256 !== 0) return;
    if (performance.now() - this.#lastYield < 8) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#lastYield = performance.now();
    this.check();
  }
}

/** A validated grep pattern that finds matching lines in a text. */
export interface TextSearcher {
  /** The literal text searched for, when not a regex (backends may pre-filter raw bytes). */
  readonly literal: string | undefined;
  /** Matching lines of `text` (1-based), at most `limit`, honouring the budget. */
  search(path: string, text: string, limit: number, budget: SearchBudget): Promise<GrepMatch[]>;
}

function cutLine(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text.length > MAX_MATCH_TEXT_CHARS ? text.slice(0, MAX_MATCH_TEXT_CHARS) : text;
}

async function searchLiteral(
  literal: string,
  path: string,
  text: string,
  limit: number,
  budget: SearchBudget,
): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  let from = 0;
  let line = 1;
  let counted = 0;
  while (out.length < limit) {
    const idx = text.indexOf(literal, from);
    if (idx < 0) break;
    const lineStart = idx === 0 ? 0 : text.lastIndexOf('\n', idx - 1) + 1;
    for (
      let j = text.indexOf('\n', counted);
      j !== -1 && j < lineStart;
      j = text.indexOf('\n', j + 1)
    ) {
      line++;
    }
    counted = lineStart;
    let lineEnd = text.indexOf('\n', idx);
    if (lineEnd < 0) lineEnd = text.length;
    out.push({ path, line, text: cutLine(text.slice(lineStart, lineEnd)) });
    from = lineEnd + 1;
    await budget.step();
  }
  return out;
}

async function searchRegex(
  re: RegExp,
  path: string,
  text: string,
  limit: number,
  budget: SearchBudget,
): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  let pos = 0;
  let line = 1;
  while (out.length < limit && pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0 && pos === text.length && pos > 0) break; // no phantom line after a final newline
    const end = nl < 0 ? text.length : nl;
    let scanned = text.slice(pos, Math.min(end, pos + MAX_REGEX_LINE_CHARS));
    if (scanned.endsWith('\r') && end - pos <= MAX_REGEX_LINE_CHARS) scanned = scanned.slice(0, -1);
    if (re.test(scanned)) out.push({ path, line, text: cutLine(text.slice(pos, end)) });
    await budget.step(true);
    if (nl < 0) break;
    pos = nl + 1;
    line++;
  }
  return out;
}

/**
 * Validates a grep pattern and returns its searcher. Literal by default (a plain substring,
 * case-sensitive, within one line); with `regex: true` the pattern must pass
 * {@link compileSafeRegex} and each line is scanned up to {@link MAX_REGEX_LINE_CHARS}.
 * Every backend should search through this so all of them accept and refuse the same patterns.
 */
export function compileSearcher(pattern: string, options: { regex?: boolean } = {}): TextSearcher {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw invalid('the pattern is empty; give the text to search for');
  }
  if (options.regex) {
    const re = compileSafeRegex(pattern);
    return {
      literal: undefined,
      search: (path, text, limit, budget) => searchRegex(re, path, text, limit, budget),
    };
  }
  if (pattern.length > MAX_LITERAL_PATTERN_LENGTH) {
    throw invalid(
      `the pattern is longer than ${MAX_LITERAL_PATTERN_LENGTH} characters; shorten it`,
    );
  }
  if (pattern.includes('\n') || pattern.includes('\r')) {
    throw invalid('grep matches within one line; remove the line break from the pattern');
  }
  return {
    literal: pattern,
    search: (path, text, limit, budget) => searchLiteral(pattern, path, text, limit, budget),
  };
}

/** Checks grep's `maxCount`: undefined means no limit; otherwise a positive integer. */
export function checkMaxCount(maxCount: number | undefined): number {
  if (maxCount === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(maxCount) || maxCount < 1) {
    throw new FileError('invalid_argument', 'max_count must be a whole number of at least 1');
  }
  return maxCount;
}
