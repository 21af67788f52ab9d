// phone: spoken or written phone numbers to E.164 via libphonenumber-js.
import { describe, expect, it } from 'vitest';
import { phone } from '../../../src/tasks/parsers/index.js';

describe('phone', () => {
  it.each([
    ['four one five five five five one two three four', '+14155551234'],
    ['(415) 555-1234', '+14155551234'],
    ['415.555.1234', '+14155551234'],
    ['my number is 415 555 1234', '+14155551234'],
    ['one four one five five five five one two three four', '+14155551234'],
    ['four one five, five five five, twelve thirty four', '+14155551234'],
    ['four one five triple five one two three four', '+14155551234'],
    ['one eight hundred five five five one two one two', '+18005551212'],
    ['+44 20 7946 0958', '+442079460958'],
    ['plus four four two zero seven nine four six zero nine five eight', '+442079460958'],
    ['+1 (415) 555-1234', '+14155551234'],
  ])('%j → %s', (text, value) => {
    expect(phone(text, { defaultRegion: 'US' })).toEqual({ kind: 'match', value });
  });

  it('reads national numbers in the default region', () => {
    expect(phone('020 7946 0958', { defaultRegion: 'GB' })).toEqual({
      kind: 'match',
      value: '+442079460958',
    });
    expect(phone('four one five five five five one two three four')).toEqual({
      kind: 'match',
      value: '+14155551234',
    });
  });

  it.each([['hello'], [''], ['12'], ['the first one'], ['star one two three four five six seven']])(
    '%j → nomatch',
    (text) => {
      expect(phone(text, { defaultRegion: 'US' })).toEqual({ kind: 'nomatch' });
    },
  );

  it.each([
    ['555 1234', 'That number is too short. Please say the whole number, including the area code.'],
    ['1234567890', "That isn't a valid phone number. Please say it again."],
    ['+999 1234', "I don't recognise that country code. Please say the number again."],
    ['4 1 5 5 5 5 1 2 3 4 5 6 7 8 9', 'That number has too many digits. Please say it again.'],
  ])('%j → invalid', (text, reason) => {
    expect(phone(text, { defaultRegion: 'US' })).toEqual({ kind: 'invalid', reason });
  });
});
