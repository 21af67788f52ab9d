import { describe, expect, it } from 'vitest';
import { FileError } from '../../src/tools/files/backend.js';
import {
  ancestorsOf,
  compileBoundedRegex,
  compileStoreSearcher,
  rangeBelow,
} from '../../src/tools/files/backends/store-common.js';
import { SearchBudget } from '../../src/tools/files/search.js';

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
];

describe('bounded regex engine', () => {
  it('agrees with JavaScript RegExp on the supported syntax', () => {
    const disagreements: string[] = [];
    for (const p of PATTERNS) {
      const ours = compileBoundedRegex(p);
      const theirs = new RegExp(p);
      for (const line of LINES) {
        if (ours.search(line) !== theirs.test(line)) disagreements.push(`${p} on ${line}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('refuses what could backtrack or what it does not support, with invalid_pattern', () => {
    const refused = [
      '(a)\\1',
      '(?<x>a)\\k<x>',
      'a(?=b)',
      'a(?!b)',
      '(?<=a)b',
      '(?<!a)b',
      '*a',
      'a**',
      '(a',
      'a)',
      '[a',
      'a{3,1}',
      'a{1001}',
      '(a{1000}){1000}',
      '\\p{L}',
      'x'.repeat(513),
    ];
    for (const p of refused) {
      let caught: unknown;
      try {
        compileBoundedRegex(p);
      } catch (err) {
        caught = err;
      }
      expect(caught, p).toBeInstanceOf(FileError);
      expect((caught as FileError).code, p).toBe('invalid_pattern');
      expect((caught as FileError).message, p).toMatch(/refused|too complex/);
    }
  });

  it('matches in linear time where backtracking engines blow up', () => {
    const line = 'a'.repeat(200_000);
    expect(compileBoundedRegex('(a*)*b').search(line)).toBe(false);
    expect(compileBoundedRegex('(a|a)*b').search(line)).toBe(false);
    expect(compileBoundedRegex('a*a*a*a*a*c').search(line)).toBe(false);
    expect(compileBoundedRegex('(a+)+$').search(line)).toBe(true);
  });
});

describe('store grep helpers', () => {
  const search = (pattern: string, regex: boolean, text: string, limit = 100) =>
    compileStoreSearcher(pattern, regex).search('/f', text, limit, new SearchBudget());

  it('treats the pattern literally unless regex is asked for', async () => {
    expect(await search('a.c', false, 'abc')).toEqual([]);
    expect(compileStoreSearcher('a.c', false).literal).toBe('a.c');
    expect(await search('a.c', true, 'abc')).toEqual([{ path: '/f', line: 1, text: 'abc' }]);
  });

  it('numbers lines from 1, strips CR, stops at the limit, adds no line after a final newline', async () => {
    expect(await search('^hit', true, 'hit\r\nmiss\nhit again\nhit 3', 2)).toEqual([
      { path: '/f', line: 1, text: 'hit' },
      { path: '/f', line: 3, text: 'hit again' },
    ]);
    expect(await search('^$', true, 'a\n\nb\n')).toEqual([{ path: '/f', line: 2, text: '' }]);
  });

  it('refuses what the shared searcher refuses, so every backend agrees', () => {
    for (const p of ['(a+)+$', '(a|aa)*b', '(x)\\1', '']) {
      expect(() => compileStoreSearcher(p, true), p).toThrow(FileError);
    }
  });

  it('runs accepted patterns in linear time on whole lines', async () => {
    // Accepted by the shared static checks, yet a backtracking engine needs ~90 s per 1000 chars.
    const hits = await search('a{0,16}'.repeat(6) + 'x', true, 'a'.repeat(50_000) + 'x\nb');
    expect(hits.map((h) => h.line)).toEqual([1]);
    expect(hits[0]?.text.length).toBe(2000); // match text is cut like on every backend
  });

  it('computes key ranges and ancestors for SQL scans', () => {
    expect(rangeBelow('/')).toEqual({ lo: '/', hi: '0' });
    expect(rangeBelow('/a')).toEqual({ lo: '/a/', hi: '/a0' });
    const inRange = (p: string) => p >= '/a/' && p < '/a0';
    expect(['/a/x', '/a/b/c', '/a/\u{1F600}'].every(inRange)).toBe(true);
    expect(['/a', '/a-b/x', '/a0', '/ab', '/b'].some(inRange)).toBe(false);
    expect(ancestorsOf('/a/b/c.md')).toEqual(['/a', '/a/b']);
    expect(ancestorsOf('/top.md')).toEqual([]);
  });
});
