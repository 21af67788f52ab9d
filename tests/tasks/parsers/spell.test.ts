// Read-back helpers used by confirmation: spelled letters, digit groups, per-kind read-backs.
import { describe, expect, it } from 'vitest';
import { groupDigits, readBack, spellLetters } from '../../../src/tasks/parsers/index.js';

describe('spellLetters', () => {
  it.each([
    [
      'john.smith@example.com',
      'j, o, h, n, dot, s, m, i, t, h, at, e, x, a, m, p, l, e, dot, c, o, m',
    ],
    ['a_b-c+d', 'a, underscore, b, dash, c, plus, d'],
    ['Jo 7', 'J, o, space, 7'],
    ["o'b", 'o, apostrophe, b'],
    ['', ''],
  ])('%j → %j', (value, spoken) => {
    expect(spellLetters(value)).toBe(spoken);
  });
});

describe('groupDigits', () => {
  it.each([
    ['4155551234', '4 1 5, 5 5 5, 1 2 3 4'],
    ['5551234', '5 5 5, 1 2 3 4'],
    ['1234', '1 2 3 4'],
    ['123456', '1 2 3, 4 5 6'],
    ['12345678', '1 2 3 4, 5 6 7 8'],
    ['12345', '1 2 3, 4 5'],
    ['415-555-1234', '4 1 5, 5 5 5, 1 2 3 4'],
    ['+44', 'plus 4 4'],
  ])('%j → %j', (value, spoken) => {
    expect(groupDigits(value)).toBe(spoken);
  });

  it('uses explicit group sizes when given', () => {
    expect(groupDigits('4111111111111111', [4, 4, 4, 4])).toBe(
      '4 1 1 1, 1 1 1 1, 1 1 1 1, 1 1 1 1',
    );
    expect(groupDigits('123456', [2])).toBe('1 2, 3 4 5 6');
  });
});

describe('readBack', () => {
  it('spells emails and digit strings', () => {
    expect(readBack('email', 'a.b@c.io')).toBe('a, dot, b, at, c, dot, i, o');
    expect(readBack('digits', '4155')).toBe('4 1 5 5');
    expect(readBack('letters', 'ab')).toBe('a, b');
  });

  it('reads phone numbers nationally at home and with "plus" abroad', () => {
    expect(readBack('phone', '+14155551234')).toBe('4 1 5, 5 5 5, 1 2 3 4');
    expect(readBack('phone', '+442079460958')).toBe('plus 4 4, 2 0, 7 9 4 6, 0 9 5 8');
    expect(readBack('phone', '+442079460958', { defaultRegion: 'GB' })).toBe(
      '0 2 0, 7 9 4 6, 0 9 5 8',
    );
  });

  it('spells names, says dates with the weekday and times on a 12-hour clock', () => {
    expect(readBack('name', { first: 'John', last: 'Smith' })).toBe(
      'John Smith, spelled J, O, H, N, then S, M, I, T, H',
    );
    expect(readBack('name', { first: 'Ann' })).toBe('Ann, spelled A, N, N');
    expect(readBack('date', '2026-03-05')).toBe('Thursday, March 5, 2026');
    expect(readBack('time', '15:30')).toBe('3:30 PM');
    expect(readBack('time', '09:05')).toBe('9:05 AM');
    expect(readBack('time', '12:00')).toBe('noon');
    expect(readBack('time', '00:00')).toBe('midnight');
  });

  it('says numbers, ratings, yes/no, choices and text plainly', () => {
    expect(readBack('number', -3.5)).toBe('minus 3.5');
    expect(readBack('number', 42)).toBe('42');
    expect(readBack('likert', 4)).toBe('4');
    expect(readBack('yesNo', true)).toBe('yes');
    expect(readBack('yesNo', false)).toBe('no');
    expect(readBack('choice', 'savings')).toBe('savings');
    expect(readBack('text', 'left at the door')).toBe('left at the door');
  });
});
