// time: clock times as 24-hour HH:MM, with explicit handling of am/pm ambiguity.
import { describe, expect, it } from 'vitest';
import { time } from '../../../src/tasks/parsers/index.js';

const AMBIGUOUS = 'Is that in the morning or the afternoon? Please say am or pm.';

describe('time', () => {
  it.each([
    ['3pm', '15:00'],
    ['3 p.m.', '15:00'],
    ['3:30pm', '15:30'],
    ['7:45 AM', '07:45'],
    ['at 9am', '09:00'],
    ['15:30', '15:30'],
    ['09:30', '09:30'],
    ['1530', '15:30'],
    ['noon', '12:00'],
    ['midnight', '00:00'],
    ['quarter to five pm', '16:45'],
    ['half past three in the afternoon', '15:30'],
    ['three thirty in the afternoon', '15:30'],
    ['nine in the morning', '09:00'],
    ['seven pm', '19:00'],
    ['ten at night', '22:00'],
    ['twelve thirty pm', '12:30'],
    ['twelve am', '00:00'],
    ['quarter to one pm', '12:45'],
    ['fifteen hundred hours', '15:00'],
    ['oh nine hundred', '09:00'],
    ['twenty three fifteen', '23:15'],
    ['ten to midnight', '23:50'],
    ['quarter past noon', '12:15'],
    ["six o'clock in the evening", '18:00'],
    ['three oh five pm', '15:05'],
  ])('%j → %s', (text, value) => {
    expect(time(text)).toEqual({ kind: 'match', value });
  });

  it.each([
    ['half past three'],
    ['quarter to five'],
    ['three thirty'],
    ["3 o'clock"],
    ['twelve fifteen'],
  ])('%j without am/pm → invalid asking for am or pm', (text) => {
    expect(time(text)).toEqual({ kind: 'invalid', reason: AMBIGUOUS });
  });

  it('resolves a 12-hour time with defaultPeriod', () => {
    expect(time('three thirty', { defaultPeriod: 'pm' })).toEqual({
      kind: 'match',
      value: '15:30',
    });
    expect(time('half past seven', { defaultPeriod: 'am' })).toEqual({
      kind: 'match',
      value: '07:30',
    });
    expect(time('nine pm', { defaultPeriod: 'am' })).toEqual({ kind: 'match', value: '21:00' });
  });

  it.each([
    ['25:00', 'Hours only go up to 23.'],
    ['3:75', 'Minutes only go up to 59.'],
    ['15:30 am', "15:30 can't be in the morning."],
  ])('%j → invalid', (text, reason) => {
    expect(time(text)).toEqual({ kind: 'invalid', reason });
  });

  it.each([['banana'], [''], ['sometime tomorrow'], ['the first one']])('%j → nomatch', (text) => {
    expect(time(text)).toEqual({ kind: 'nomatch' });
  });
});
