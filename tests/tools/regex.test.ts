import { describe, expect, it } from 'vitest';
import { FileError } from '../../src/tools/files/backend.js';
import {
  compileRegex,
  MAX_REGEX_PATTERN_LENGTH,
  MAX_REGEX_PROGRAM_SIZE,
  type RegexMatcher,
} from '../../src/tools/files/regex.js';
import { compileSearcher, SearchBudget } from '../../src/tools/files/search.js';

const PATTERNS = [
  'abc',
  'a.c',
  '^abc',
  'abc$',
  '^$',
  'a*',
  'a+b',
  'colou?r',
  'a{2}',
  'a{2,}b',
  'a{1,3}c',
  '(foo|bar)baz',
  '(?:ab)+c',
  '(?<word>\\w+)@\\w+\\.com',
  '[a-c]+x',
  '[^a-z ]+',
  '[\\d.]+',
  '[-a]z',
  '[a-]z',
  '\\bcat\\b',
  '\\Bat',
  '\\d{3}-\\d{4}',
  '\\s+$',
  '\\S+\\s\\S+',
  '\\W',
  'x|y|',
  'a\\.b',
  '\\(\\)',
  '\\x41\\u0042',
  'a{,2}',
  'end}',
  ']',
  'TODO:?\\s*(fix|call)',
  '.*.*=.*',
  'é+',
  '[é-ë]',
  '(a+)+$',
  '(a|aa)*b',
  '(x+x+)+y',
  '.*a.*b.*c',
];

const LINES = [
  '',
  'abc',
  'xabcx',
  'ac',
  'a.c and abc',
  'aaab',
  'color colour',
  'foobaz barbaz',
  'ababc',
  'mail bob@example.com now',
  'bbbx',
  'UPPER 123',
  '3.14159',
  '-z az',
  'the cat sat',
  'concatenate',
  'call 555-1234',
  'trailing   ',
  'two words',
  '(){}[]',
  'a.b a{,2} end} ]',
  'AB',
  'TODO: fix this',
  'TODOcall',
  'k=v=w',
  'café éé ê',
  'aaaa',
  'xxxxy',
];

function refusal(pattern: string): FileError {
  try {
    compileRegex(pattern);
  } catch (err) {
    if (err instanceof FileError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(pattern)} to be refused`);
}

/** Work one test() costs, read from the matcher's step counter. */
function stepsOf(matcher: RegexMatcher, line: string): { hit: boolean; steps: number } {
  const before = matcher.steps;
  const hit = matcher.test(line);
  return { hit, steps: matcher.steps - before };
}

describe('linear-time regex engine', () => {
  it('agrees with JavaScript RegExp on the supported syntax', () => {
    const disagreements: string[] = [];
    for (const p of PATTERNS) {
      const ours = compileRegex(p);
      const theirs = new RegExp(p);
      for (const line of LINES) {
        if (ours.test(line) !== theirs.test(line)) disagreements.push(`${p} on ${line}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('supports Unicode property classes, tested one character at a time', () => {
    expect(compileRegex('^\\p{L}+$').test('Grüße')).toBe(true);
    expect(compileRegex('^\\p{L}+$').test('Grüße!')).toBe(false);
    expect(compileRegex('\\P{L}').test('abc')).toBe(false);
    expect(compileRegex('[\\p{Lu}\\d]{2}').test('aB7c')).toBe(true);
    expect(compileRegex('\\p{Script=Greek}').test('alpha α')).toBe(true);
    expect(refusal('\\p{NoSuchProperty}').message).toMatch(/known Unicode property/);
  });

  it('refuses what it does not support, saying what to change, with invalid_pattern', () => {
    const refused: Array<[string, RegExp]> = [
      ['(a)\\1', /backreferences/],
      ['(?<x>a)\\k<x>', /backreferences/],
      ['a(?=b)', /lookahead and lookbehind/],
      ['a(?!b)', /lookahead and lookbehind/],
      ['(?<=a)b', /lookahead and lookbehind/],
      ['(?<!a)b', /lookahead and lookbehind/],
      ['*a', /nothing to repeat/],
      ['a**', /repeated again/],
      ['a{0,30}{0,30}x', /repeated again/],
      ['(a', /unclosed "\("/],
      ['a)', /unmatched "\)"/],
      ['[a', /not closed/],
      ['a\\', /lone "\\"/],
      ['a{3,1}', /out of order/],
      ['a{1001}', /above 1000/],
      ['(a{1000}){1000}', new RegExp(`more than ${MAX_REGEX_PROGRAM_SIZE} states`)],
      ['\\1', /backreferences/],
      ['\\012', /octal/],
      ['x'.repeat(MAX_REGEX_PATTERN_LENGTH + 1), /characters long/],
      ['', /empty/],
    ];
    for (const [pattern, why] of refused) {
      const err = refusal(pattern);
      expect(err.code, pattern).toBe('invalid_pattern');
      expect(err.message, pattern).toMatch(why);
    }
  });

  it('answers classic ReDoS patterns within (length + 1) x 2 x size steps', () => {
    // Each of these takes a backtracking engine seconds to hours on its line; here the work
    // is bounded by the matcher's own step counter, whatever the pattern.
    const cases: Array<[pattern: string, line: string, hit: boolean]> = [
      ['a{0,16}'.repeat(6) + 'x', 'a'.repeat(1000), false],
      ['(a+)+$', `${'a'.repeat(1000)}!`, false],
      ['(a+)+$', 'a'.repeat(1000), true],
      ['(a|a)*b', 'a'.repeat(1000), false],
      ['(a|aa)+c', 'a'.repeat(1000), false],
      ['(.*a){20}', `${'a'.repeat(19)}${'b'.repeat(1000)}`, false],
      ['(.*a){20}', 'ab'.repeat(500), true],
      ['(x+x+)+y', 'x'.repeat(1000), false],
      ['.*a.*b.*c', 'ab'.repeat(500), false],
      ['(\\w+\\s?)+$', `${'word '.repeat(200)}!`, false],
    ];
    expect('a{0,16}'.repeat(6) + 'x').toHaveLength(43);
    for (const [pattern, line, hit] of cases) {
      const m = compileRegex(pattern);
      const r = stepsOf(m, line);
      expect(r.hit, pattern).toBe(hit);
      expect(r.steps, pattern).toBeLessThanOrEqual((line.length + 1) * 2 * m.size);
    }
  });

  it('grows linearly with the line: twice the line, about twice the steps', () => {
    for (const pattern of ['a{0,16}'.repeat(6) + 'x', '(a|aa)+c', '(.*a){20}b']) {
      const m = compileRegex(pattern);
      const short = stepsOf(m, 'a'.repeat(5000)).steps;
      const long = stepsOf(m, 'a'.repeat(10_000)).steps;
      expect(long, pattern).toBeLessThanOrEqual(short * 2.05);
      expect(long, pattern).toBeGreaterThan(short);
    }
  });

  it('can pause a scan between slices of work and resume it', () => {
    const m = compileRegex('a{0,16}'.repeat(6) + 'x');
    const line = `${'a'.repeat(20_000)}x`;
    m.begin(line);
    let slices = 0;
    let result: boolean | undefined;
    do {
      result = m.advance(m.steps + 10_000);
      slices++;
    } while (result === undefined);
    expect(result).toBe(true);
    expect(slices).toBeGreaterThan(10);
  });
});

describe('regex grep over text', () => {
  const search = (pattern: string, text: string, limit = 100, signal?: AbortSignal) =>
    compileSearcher(pattern, { regex: true }).search('/f', text, limit, new SearchBudget(signal));

  it('numbers lines from 1, ignores CR, stops at the limit, adds no line after a final newline', async () => {
    expect(await search('^hit$', 'hit\r\nmiss\nhit\nhit', 2)).toEqual([
      { path: '/f', line: 1, text: 'hit' },
      { path: '/f', line: 3, text: 'hit' },
    ]);
    expect(await search('^$', 'a\n\nb\n')).toEqual([{ path: '/f', line: 2, text: '' }]);
    expect(await search('^$', '')).toEqual([{ path: '/f', line: 1, text: '' }]);
  });

  it('finds the same lines as JavaScript RegExp on each line, whatever shortcut it takes', async () => {
    // Exercises the pre-filters: required text, skipping to a possible first character, `^`.
    const lines = [...LINES, 'x\r', 'a\tb', 'ünï', 'end', '', 'café', 'abc abc', 'zz 12-3456'];
    const text = lines.join('\n');
    const extra = ['[A-Z]{2}\\w*', 'c\\b', '\\d+-\\d+', 'é|ï', '^\\s*$', 'b$', '\\bc', 'a\\tb'];
    const wrong: string[] = [];
    for (const p of [...PATTERNS, ...extra]) {
      const re = new RegExp(p);
      const expected = lines.flatMap((l, i) => (re.test(l.replace(/\r$/, '')) ? [i + 1] : []));
      const got = (await search(p, text, 1000)).map((h) => h.line);
      if (JSON.stringify(got) !== JSON.stringify(expected))
        wrong.push(`${p}: ${got} vs ${expected}`);
      const hits = await search(p, text, 1000);
      for (const h of hits) {
        if (h.text !== lines[h.line - 1]?.replace(/\r$/, '')) wrong.push(`${p}: text of ${h.line}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('scans whole lines, however long, and cuts the text it returns', async () => {
    const long = `${'x'.repeat(200_000)}needle`;
    const hits = await search('needle$', `${long}\nneedle\n`);
    expect(hits.map((h) => h.line)).toEqual([1, 2]);
    expect(hits[0]?.text).toHaveLength(2000);
  });

  it('runs the 43-character hostile pattern over long lines without hanging', async () => {
    const text = `${'a'.repeat(1000)}x\n${'a'.repeat(100_000)}\n${'a'.repeat(50)}x\n`;
    const hits = await search('a{0,16}'.repeat(6) + 'x', text);
    expect(hits.map((h) => h.line)).toEqual([1, 3]);
  });

  it('lets an abort stop a search inside one huge line', async () => {
    // About 4e9 steps if run to the end; it yields between slices, so the abort gets through.
    const controller = new AbortController();
    const line = `${'a'.repeat(1_000_000)}0`;
    const pending = search('[a-z]{0,1000}0', line, 1, controller.signal);
    setImmediate(() => controller.abort());
    await expect(pending).rejects.toMatchObject({ code: 'timeout' });
  });

  it('lets two searches share one compiled pattern at the same time', async () => {
    const searcher = compileSearcher('^b+$', { regex: true });
    const text = `${'b'.repeat(300_000)}\nx\nbb`;
    const [one, two] = await Promise.all([
      searcher.search('/1', text, 10, new SearchBudget()),
      searcher.search('/2', text, 10, new SearchBudget()),
    ]);
    expect(one.map((h) => h.line)).toEqual([1, 3]);
    expect(two.map((h) => h.line)).toEqual([1, 3]);
  });
});
