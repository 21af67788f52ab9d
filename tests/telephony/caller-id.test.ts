import { ParticipantKind } from '@livekit/rtc-node';
import { describe, expect, it } from 'vitest';
import { callerNumber } from '../../src/telephony/caller-id.js';

const sip = (number?: string) => ({
  kind: ParticipantKind.SIP,
  attributes: (number === undefined ? {} : { 'sip.phoneNumber': number }) as Record<string, string>,
});

describe('callerNumber', () => {
  it('is the E.164 number a SIP trunk presented', () => {
    expect(callerNumber(sip('+14155550123'))).toBe('+14155550123');
    expect(callerNumber(sip(' +442071838750 '))).toBe('+442071838750');
  });

  it.each([
    ['withheld', 'anonymous'],
    ['restricted', 'Restricted'],
    ['empty', ''],
    ['national (no country code)', '4155550123'],
    ['too short', '+1415'],
    ['not a number', '+1-415-555-0123'],
    ['an invalid number', '+10005550123'],
  ])('is undefined when the number is %s', (_what, number) => {
    expect(callerNumber(sip(number))).toBeUndefined();
  });

  it('is undefined without the attribute, or for a participant that is not SIP', () => {
    expect(callerNumber(sip())).toBeUndefined();
    expect(callerNumber(undefined)).toBeUndefined();
    for (const kind of [ParticipantKind.STANDARD, ParticipantKind.AGENT, ParticipantKind.INGRESS]) {
      expect(
        callerNumber({ kind, attributes: { 'sip.phoneNumber': '+14155550123' } }),
      ).toBeUndefined();
    }
  });
});
