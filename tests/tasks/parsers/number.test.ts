// number: written and spoken numbers, with range and whole-number rules.
import { describe, expect, it } from 'vitest';
import { number } from '../../../src/tasks/parsers/index.js';

describe('number', () => {
  it.each([
    ['42', 42],
    ['3.5', 3.5],
    ['-2', -2],
    ['1,200', 1200],
    ['forty two', 42],
    ['forty-two', 42],
    ['three hundred and five', 305],
    ['one thousand two hundred', 1200],
    ['minus three', -3],
    ['negative 7', -7],
    ['zero', 0],
    ['a dozen', 12],
    ['two dozen', 24],
    ['a hundred', 100],
    ['two and a half', 2.5],
    ['three point one four', 3.14],
    ['zero point five', 0.5],
    ['nineteen hundred', 1900],
    ['two thousand twenty six', 2026],
    ['one million two hundred thousand', 1_200_000],
    ["it's 42", 42],
    ['um, twelve please', 12],
    ['2 thousand', 2000],
  ])('%j → %d', (text, value) => {
    expect(number(text)).toEqual({ kind: 'match', value });
  });

  it.each([
    ['one two'],
    ['four two'],
    ['twenty twenty'],
    ['banana'],
    [''],
    ['hundred'],
    ['three hundred and'],
    ['a'],
  ])('%j → nomatch', (text) => {
    expect(number(text)).toEqual({ kind: 'nomatch' });
  });

  it.each([
    ['eleven', { min: 1, max: 10 }, 'The number must be between 1 and 10.'],
    ['zero', { min: 1, max: 10 }, 'The number must be between 1 and 10.'],
    ['minus one', { min: 0 }, 'The number must be at least 0.'],
    ['two thousand', { max: 1000 }, 'The number must be at most 1,000.'],
    ['3.5', { integer: true }, 'Please say a whole number.'],
    ['two and a half', { integer: true, min: 1, max: 5 }, 'Please say a whole number.'],
  ])('%j with %o → invalid', (text, options, reason) => {
    expect(number(text, options)).toEqual({ kind: 'invalid', reason });
  });

  it('accepts the bounds themselves', () => {
    expect(number('ten', { min: 1, max: 10, integer: true })).toEqual({ kind: 'match', value: 10 });
    expect(number('one', { min: 1, max: 10, integer: true })).toEqual({ kind: 'match', value: 1 });
  });

  describe('a digit heard as its homophone, or "no" heard as "oh", is never a plain value', () => {
    it.each([
      // "twenty four" heard as "twenty for": never 20
      ['twenty for'],
      ['ten for'],
      ['six to'],
      ['eight for sure'],
      // the homophone is the likely reading: "me too", "I ate", "we won", "for sure"
      ['me two'],
      ['i eight'],
      ['we one'],
      ['four sure'],
      // "no" heard as "oh": never a zero
      ['oh'],
      ['oh thanks'],
      ['o'],
    ])('%j → nomatch', (text) => {
      expect(number(text)).toEqual({ kind: 'nomatch' });
    });

    it.each([
      // "four five" heard as "for five"
      ['for five', 5],
      ['a table for four please', 4],
      // "I want two" or "I want to…"
      ['i want two', 2],
      ['give me two', 2],
    ])('%j → approximate %d (read back before it is taken)', (text, value) => {
      expect(number(text)).toEqual({ kind: 'match', value, approximate: true });
    });

    it('keeps clear numbers exact', () => {
      expect(number('four of us')).toEqual({ kind: 'match', value: 4 });
      expect(number('twenty four')).toEqual({ kind: 'match', value: 24 });
      expect(number('zero')).toEqual({ kind: 'match', value: 0 });
    });
  });
});
