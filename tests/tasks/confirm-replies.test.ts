// What a reply to a read-back means, decided without a session (src/tasks/confirm.ts): a yes
// that is taken back, qualified or followed by another value never confirms the pending one.
import { describe, expect, it } from 'vitest';
import { readBackReply } from '../../src/tasks/confirm.js';
import { digits, number } from '../../src/tasks/parsers/index.js';

const pin = {
  parse: (text: string) => digits(text, { minLength: 3, maxLength: 3 }),
};
const confirmPin = { kind: 'confirm' as const, value: '555', reason: 'policy' as const };
const rating = { parse: (text: string) => number(text, { min: 0, max: 10, integer: true }) };
const confirmSeven = { kind: 'confirm' as const, value: 7, reason: 'approximate' as const };

describe('read-back replies', () => {
  it('"yes, but it\'s 5 5 6" is a correction: the new value replaces the read-back one', () => {
    expect(readBackReply("yes, but it's 5 5 6", confirmPin, pin)).toEqual({
      kind: 'replace',
      value: '556',
      rejected: true,
    });
    expect(readBackReply('yeah except the last one is a six', confirmPin, pin)).toMatchObject({
      kind: 'unclear',
    });
  });

  it.each([
    'yes, cancel that',
    'yes, hold on',
    'yes if that is the one on file',
    'no wait yes',
    'oh wait yes',
    'yes oh',
    'yeah, no',
    'yes but',
  ])('%j at "I have 5 5 5. Is that right?" confirms nothing', (text) => {
    const reply = readBackReply(text, confirmPin, pin);
    expect(reply.kind).not.toBe('yes');
    expect(reply.kind).not.toBe('replace');
  });

  it('"yes, eight" at "Is that a seven?" is neither seven nor eight', () => {
    expect(readBackReply('yes, eight', confirmSeven, rating)).toEqual({ kind: 'unclear' });
    expect(readBackReply('yes, seven', confirmSeven, rating)).toEqual({ kind: 'yes' });
    expect(readBackReply('yes', confirmSeven, rating)).toEqual({ kind: 'yes' });
    expect(readBackReply('no, eight', confirmSeven, rating)).toEqual({
      kind: 'replace',
      value: 8,
      rejected: true,
    });
  });
});
