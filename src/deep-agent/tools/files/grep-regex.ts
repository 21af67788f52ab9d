/**
 * Grep's `regex: true` patterns, compiled by re2js (a maintained pure-JS port of RE2): linear
 * time whatever the pattern, so `(a+)+$`, `(a|aa)*b` and friends cannot hang a search.
 * Patterns are written in JavaScript syntax (translated by re2js's `translateRegExp`, with
 * `\s` kept Unicode-wide as in JavaScript), plus RE2's inline flags such as `(?i)`;
 * backreferences and lookaround are refused. re2js cannot pause inside one input, so each
 * line is one unit of work, and lines longer than {@link GrepRegex.maxLineChars} are skipped,
 * not truncated (a cut line could match wrongly, e.g. `$` at the cut); the caller reports them.
 */
import { createRequire } from 'node:module';
import type * as Re2js from 're2js';
import type { RE2JS, RE2JSSyntaxException } from 're2js';
import { FileError } from './backend.js';
import { type RequiredText, requiredText } from './regex-literals.js';

let re2js: typeof Re2js | undefined;

/**
 * re2js, loaded (its CommonJS build, synchronously) on the first regex compile, so that
 * `import 'taskline'` does not pay ~15-30 ms for a module most sessions never use.
 */
function loadRe2js(): typeof Re2js {
  re2js ??= createRequire(import.meta.url)('re2js') as typeof Re2js;
  return re2js;
}

/** Longest regex `grep` accepts, in characters. */
export const MAX_REGEX_PATTERN_LENGTH = 256;

/** Largest `{n,m}` bound a regex may use (RE2's own limit). */
export const MAX_REGEX_REPEAT = 1000;

/** Most instructions a compiled regex may have; the worst-case work per character grows with it. */
export const MAX_REGEX_PROGRAM_SIZE = 5000;

/** Longest line a regex searches, in UTF-16 code units, for the simplest patterns. */
export const MAX_REGEX_LINE_CHARS = 100_000;

/**
 * Worst-case work allowed on one line, in characters x program instructions. Measured worst
 * case for re2js is about 40 ns per unit (a DFA that keeps missing its cache), so one line
 * costs at most ~160 ms before the next look at the abort signal and the time budget.
 */
const LINE_WORK = 4_000_000;

/** A compiled grep regex. */
export interface GrepRegex {
  /** The pattern as given. */
  readonly source: string;
  /** Size of the compiled program (instructions). */
  readonly programSize: number;
  /** Text every matching line contains (see {@link requiredText}); `[]` when none. */
  readonly required: RequiredText;
  /** Lines longer than this are not searched: one line is matched in one uninterrupted call. */
  readonly maxLineChars: number;
  /** True when the pattern matches somewhere in `line` (`^`/`$` are the line's ends). */
  test(line: string): boolean;
}

function refused(pattern: string, why: string): FileError {
  const shown = pattern.length > 60 ? `${pattern.slice(0, 60)}...` : pattern;
  return new FileError('invalid_pattern', `the regex ${JSON.stringify(shown)} was refused: ${why}`);
}

const BACKREFERENCE =
  'backreferences (\\1, \\k<name>) are not supported; they can make a search hang';
const LOOKAROUND = 'lookahead and lookbehind are not supported; match the text directly';

/** A refusal re2js's translation would hide: `\k<name>` becomes the literal "k<name>". */
function precheck(pattern: string): void {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] === 'k' && pattern[i + 2] === '<') throw refused(pattern, BACKREFERENCE);
    i++; // skip the escaped character
  }
}

/** JavaScript's `\s` (Unicode white space and line terminators) as RE2 class ranges. */
const SPACE =
  '\\t-\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
/** The complement of {@link SPACE}: JavaScript's `\S`. */
const NON_SPACE =
  '\\x00-\\x08\\x0e-\\x1f!-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}' +
  '\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}';

/**
 * Gives `\s` and `\S` their JavaScript meaning in a translated (RE2-syntax) pattern: RE2's
 * `\s` is only ASCII white space, JavaScript's also no-break and other Unicode spaces; and
 * spells `\p{Script=Greek}` / `\p{gc=Lu}` the RE2 way (`\p{Greek}`, `\p{Lu}`). Walks
 * escapes, classes (with `[:name:]` inside) and `\Q...\E` quoting, so only real `\s`/`\S`
 * change; syntax errors are left for re2js to report.
 */
function withJsClasses(pattern: string): string {
  let out = '';
  let inClass = false;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? pattern.length : end + 2;
        out += pattern.slice(i, stop);
        i = stop;
        continue;
      }
      if (next === 's' || next === 'S') {
        const ranges = next === 's' ? SPACE : NON_SPACE;
        out += inClass ? ranges : `[${ranges}]`;
      } else if ((next === 'p' || next === 'P') && pattern[i + 2] === '{') {
        // JavaScript spells scripts and categories \p{Script=Greek}; RE2 \p{Greek}.
        const end = pattern.indexOf('}', i + 3);
        if (end < 0) {
          out += pattern.slice(i);
          break;
        }
        const name = pattern.slice(i + 3, end).replace(/^(?:Script|sc|General_Category|gc)=/, '');
        out += `\\${next}{${name}}`;
        i = end + 1;
        continue;
      } else {
        out += c + (next ?? '');
      }
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2);
        const stop = end < 0 ? i + 1 : end + 2;
        out += pattern.slice(i, stop);
        i = stop;
        continue;
      }
      if (c === ']') inClass = false;
      out += c;
      i++;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      i++;
      // A "]" right after "[" or "[^" is a literal in RE2.
      if (pattern[i] === '^') out += pattern[i++];
      if (pattern[i] === ']') out += pattern[i++];
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** re2js's syntax error as an actionable reason. */
function reasonOf(pattern: string, err: RE2JSSyntaxException): string {
  const what = err.getDescription();
  if (/\(\?<?[=!]/.test(pattern) && /Perl syntax|named capture/.test(what)) return LOOKAROUND;
  if (/invalid escape/.test(what) && /\\[1-9]/.test(pattern)) return BACKREFERENCE;
  if (/invalid repeat count/.test(what)) {
    return `a {n,m} count is above ${MAX_REGEX_REPEAT}, out of order, or nested repeats multiply past it; use smaller counts`;
  }
  if (/expression too large/.test(what)) {
    return 'it is too large once repeats are expanded; use smaller {n,m} counts or split the search';
  }
  if (/character class range/.test(what) && /\\[pP]\{/.test(pattern)) {
    return '"\\p" needs a Unicode property RE2 knows, like \\p{L}, \\p{Lu} or \\p{Greek}';
  }
  const input = err.input ? ` at ${JSON.stringify(err.input)}` : '';
  return `${what}${input}`;
}

/**
 * Compiles a grep regex. Throws `invalid_pattern`, saying what to change, for an empty
 * pattern, one over {@link MAX_REGEX_PATTERN_LENGTH} characters, a syntax error, a
 * backreference or lookaround, a count over {@link MAX_REGEX_REPEAT} or a program over
 * {@link MAX_REGEX_PROGRAM_SIZE} instructions. Every backend compiles through this.
 */
export function compileGrepRegex(pattern: string): GrepRegex {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw new FileError('invalid_pattern', 'the pattern is empty; give the text to search for');
  }
  if (pattern.length > MAX_REGEX_PATTERN_LENGTH) {
    throw refused(
      pattern,
      `it is ${pattern.length} characters long; keep regexes to ${MAX_REGEX_PATTERN_LENGTH} ` +
        'or search literally',
    );
  }
  precheck(pattern);
  const { RE2JS, RE2JSException, RE2JSSyntaxException } = loadRe2js();
  let re: RE2JS;
  try {
    re = RE2JS.compile(withJsClasses(RE2JS.translateRegExp(pattern)));
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) throw refused(pattern, reasonOf(pattern, err));
    if (err instanceof RE2JSException) throw refused(pattern, err.message);
    throw err;
  }
  const programSize = re.programSize();
  if (programSize > MAX_REGEX_PROGRAM_SIZE) {
    throw refused(
      pattern,
      `it compiles to ${programSize} instructions, over the ${MAX_REGEX_PROGRAM_SIZE} allowed ` +
        '(large {n,m} counts multiply); use smaller counts or split the search',
    );
  }
  return {
    source: pattern,
    programSize,
    required: requiredText(re),
    maxLineChars: Math.min(MAX_REGEX_LINE_CHARS, Math.floor(LINE_WORK / Math.max(1, programSize))),
    test: (line) => re.test(line),
  };
}
