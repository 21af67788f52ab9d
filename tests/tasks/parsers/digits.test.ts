// digits: spoken or typed digit strings (PINs, account numbers, menu keys).
import { describe, expect, it } from 'vitest';
import { digits, spokenDigits } from '../../../src/tasks/parsers/index.js';

describe('digits', () => {
  it.each([
    ['4 1 5 5', '4155'],
    ['four one five five', '4155'],
    ['4155', '4155'],
    ['oh', '0'],
    ['double five', '55'],
    ['triple two', '222'],
    ['4 one 5', '415'],
    ['double oh seven', '007'],
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
