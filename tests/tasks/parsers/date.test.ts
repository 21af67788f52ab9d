// date: calendar dates, resolved against a fixed clock (never the real date).
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../../src/core/errors.js';
import { date } from '../../../src/tasks/parsers/index.js';

/** Wednesday 4 March 2026, 15:00 UTC. */
const now = new Date('2026-03-04T15:00:00Z');

describe('date', () => {
  it.each([
    ['2026-03-05', '2026-03-05'],
    ['2026/3/5', '2026-03-05'],
    ['13/4/2026', '2026-04-13'],
    ['March 5th 2026', '2026-03-05'],
    ['March 5th, 2026.', '2026-03-05'],
    ['march fifth twenty twenty six', '2026-03-05'],
    ['5 March', '2026-03-05'],
    ['the fifth of March', '2026-03-05'],
    ['March the fifth', '2026-03-05'],
    ['on March 5', '2026-03-05'],
    ['Mar 31', '2026-03-31'],
    ['December 25', '2026-12-25'],
    ['July 4th 1776', '1776-07-04'],
    ['january first nineteen eighty four', '1984-01-01'],
    ['the twenty first of June two thousand and thirty', '2030-06-21'],
    ['today', '2026-03-04'],
    ['tomorrow', '2026-03-05'],
    ['yesterday', '2026-03-03'],
    ['the day after tomorrow', '2026-03-06'],
    ['the day before yesterday', '2026-03-02'],
    ['in 3 days', '2026-03-07'],
    ['in three days', '2026-03-07'],
    ['in a week', '2026-03-11'],
    ["in a week's time", '2026-03-11'],
    ['in a month', '2026-04-04'],
    ['two weeks from today', '2026-03-18'],
    ['a week from tomorrow', '2026-03-12'],
    ['3 days ago', '2026-03-01'],
    ['next Monday', '2026-03-09'],
    ['Monday', '2026-03-09'],
    ['this Wednesday', '2026-03-04'],
    ['next Wednesday', '2026-03-11'],
    ['last Friday', '2026-02-27'],
    ['Friday March 6th', '2026-03-06'],
    ['the 5th', '2026-03-05'],
    ["um, it's tomorrow", '2026-03-05'],
  ])('%j → %s', (text, value) => {
    expect(date(text, { now })).toEqual({ kind: 'match', value });
  });

  it.each([
    ['3/4/2026'],
    ['next week'],
    ['banana'],
    [''],
    ['March'],
    ['March 2026'],
    ['nineteen eighty four'],
    ['sometime soon'],
  ])('%j → nomatch', (text) => {
    expect(date(text, { now })).toEqual({ kind: 'nomatch' });
  });

  it.each([
    ['February 30th', "February 2026 has only 28 days, so there's no 30th."],
    ['2026-02-30', "February 2026 has only 28 days, so there's no 30th."],
    ['March 32', "March 2026 has only 31 days, so there's no 32nd."],
    ['2026-13-01', 'There is no month 13.'],
    ['Monday March 6th 2026', 'March 6, 2026 is a Friday, not a Monday.'],
  ])('%j → invalid', (text, reason) => {
    expect(date(text, { now })).toEqual({ kind: 'invalid', reason });
  });

  it('accepts February 29 in a leap year', () => {
    expect(date('February 29th 2028', { now })).toEqual({ kind: 'match', value: '2028-02-29' });
  });

  it('completes a missing year or month according to prefer', () => {
    expect(date('January 1st', { now, prefer: 'future' })).toEqual({
      kind: 'match',
      value: '2027-01-01',
    });
    expect(date('December 25', { now, prefer: 'past' })).toEqual({
      kind: 'match',
      value: '2025-12-25',
    });
    expect(date('March 4', { now, prefer: 'future' })).toEqual({
      kind: 'match',
      value: '2026-03-04',
    });
    expect(date('the 1st', { now, prefer: 'future' })).toEqual({
      kind: 'match',
      value: '2026-04-01',
    });
    expect(date('Monday', { now, prefer: 'past' })).toEqual({ kind: 'match', value: '2026-03-02' });
  });

  it('resolves "today" in the caller\'s time zone', () => {
    const lateEvening = new Date('2026-03-04T20:00:00Z');
    expect(date('today', { now: lateEvening, timeZone: 'Asia/Tokyo' })).toEqual({
      kind: 'match',
      value: '2026-03-05',
    });
    expect(date('today', { now: lateEvening, timeZone: 'America/Los_Angeles' })).toEqual({
      kind: 'match',
      value: '2026-03-04',
    });
  });

  it('clamps month arithmetic to the end of the month', () => {
    const jan31 = new Date('2026-01-31T12:00:00Z');
    expect(date('in a month', { now: jan31 })).toEqual({ kind: 'match', value: '2026-02-28' });
  });

  it('rejects an unknown time zone as a programming error', () => {
    let caught: unknown;
    try {
      date('today', { now, timeZone: 'Mars/Olympus_Mons' });
    } catch (err) {
      caught = err;
    }
    expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
  });
});
