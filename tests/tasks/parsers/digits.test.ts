// digits: spoken or typed digit strings (PINs, account numbers, menu keys).
import { describe, expect, it } from 'vitest';
import { digits, readSpokenDigits, spokenDigits } from '../../../src/tasks/parsers/index.js';

describe('digits', () => {
  it.each([
    ['4 1 5 5', '4155'],
    ['four one five five', '4155'],
    ['4155', '4155'],
    ['double five', '55'],
    ['triple two', '222'],
    ['4 one 5', '415'],
    ['forty one fifty five', '4155'],
    ['one eight hundred five five five', '1800555'],
    ['three hundred twelve', '312'],
    ['415-555-1234', '4155551234'],
    ['(415) 555-1234', '4155551234'],
    ['my pin is 1 2 3 4', '1234'],
    ["um, it's nine nine nine", '999'],
    ['zero zero one', '001'],
    ['1 2, 3 4', '1234'],
  ])('%j → %s', (text, value) => {
    expect(digits(text)).toEqual({ kind: 'match', value });
  });

  it.each([['hello'], [''], ['one two banana'], ['double'], ['double trouble'], ['the first one']])(
    '%j → nomatch',
    (text) => {
      expect(digits(text)).toEqual({ kind: 'nomatch' });
    },
  );

  describe('words a recogniser may have misheard are read back, never taken as they are', () => {
    it.each([
      // "oh" is a zero, or a "no" as a recogniser writes it ("four, no, nine")
      ['double oh seven', '007'],
      ['four oh nine', '409'],
      ['oh four oh nine', '0409'],
      // a digit's homophone among other digits
      ['one two three for', '1234'],
      ['one to three four', '1234'],
      ['won two three four', '1234'],
      ['nine ate seven', '987'],
    ])('%j → approximate %s', (text, value) => {
      expect(digits(text)).toEqual({ kind: 'match', value, approximate: true });
    });

    it.each([
      // no digit said for sure: an interjection or a misheard "no", never a zero
      ['oh'],
      ['o'],
      ['oh thanks'],
      ['oh oh'],
      // homophones alone, or outnumbering the digits, are words
      ['for'],
      ['to'],
      ['for to'],
      ['one for to'],
    ])('%j → nomatch', (text) => {
      expect(digits(text)).toEqual({ kind: 'nomatch' });
    });

    it('spokenDigits (the keypad and menu reader) never reads a lone "oh" or a homophone', () => {
      expect(spokenDigits('oh')).toBeUndefined();
      expect(spokenDigits('oh thanks')).toBeUndefined();
      expect(spokenDigits('one two three for')).toBeUndefined();
      expect(spokenDigits('four oh nine')).toBe('409');
      expect(readSpokenDigits('four oh nine')).toEqual({ value: '409', approximate: true });
      expect(readSpokenDigits('four nine')).toEqual({ value: '49', approximate: false });
    });
  });

  it.each([
    ['1 2 3', { minLength: 4, maxLength: 4 }, 'I heard 3 digits, but I need exactly 4.'],
    ['1 2 3 4 5', { maxLength: 4 }, 'I heard 5 digits, but I need at most 4.'],
    ['7', { minLength: 2 }, 'I heard 1 digit, but I need at least 2.'],
    ['1 2', { minLength: 4, maxLength: 6 }, 'I heard 2 digits, but I need between 4 and 6.'],
    ['star', {}, '"*" isn\'t allowed here. Please use only digits.'],
    ['four', { validDigits: '123' }, '"4" isn\'t allowed here. Please use only 1 2 3.'],
  ])('%j with %o → invalid', (text, options, reason) => {
    expect(digits(text, options)).toEqual({ kind: 'invalid', reason });
  });

  it('accepts star and pound when they are valid keys', () => {
    expect(digits('1 2 3 pound', { validDigits: '0123456789*#' })).toEqual({
      kind: 'match',
      value: '123#',
    });
    expect(digits('star', { validDigits: '*#' })).toEqual({ kind: 'match', value: '*' });
  });

  it('reads a leading plus only when asked (phone numbers)', () => {
    expect(spokenDigits('plus four four', { allowPlus: true })).toBe('+44');
    expect(spokenDigits('plus four four')).toBeUndefined();
    expect(spokenDigits('four plus four', { allowPlus: true })).toBeUndefined();
  });
});
