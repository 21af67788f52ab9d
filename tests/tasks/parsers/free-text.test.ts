// freeText: anything the caller says, trimmed, within length limits.
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../../src/core/errors.js';
import { freeText } from '../../../src/tasks/parsers/index.js';

describe('freeText', () => {
  it.each([
    ['hello', 'hello'],
    ['  hello   world ', 'hello world'],
    ['Line one\nline two', 'Line one line two'],
    [
      'The parcel was left outside, please call me.',
      'The parcel was left outside, please call me.',
    ],
    ['x'.repeat(60), 'x'.repeat(60)],
    ['um, yes', 'um, yes'],
    ['42', '42'],
    ['Ünïcödé 😀', 'Ünïcödé 😀'],
  ])('%j → %j', (text, value) => {
    expect(freeText(text, { maxChars: 60 })).toEqual({ kind: 'match', value });
  });

  it.each([[''], ['   '], ['\n\t']])('%j → nomatch (nothing said)', (text) => {
    expect(freeText(text, { maxChars: 40 })).toEqual({ kind: 'nomatch' });
  });

  it('says when the answer is too long or too short', () => {
    expect(freeText('x'.repeat(41), { maxChars: 40 })).toEqual({
      kind: 'invalid',
      reason: "That's too long: please keep it under 40 characters.",
    });
    expect(freeText('hi', { maxChars: 40, minChars: 5 })).toEqual({
      kind: 'invalid',
      reason: "That's too short: please say at least 5 characters.",
    });
  });

  it('counts an emoji as one character', () => {
    expect(freeText('😀😀', { maxChars: 2 })).toEqual({ kind: 'match', value: '😀😀' });
  });

  it('rejects impossible limits as a programming error', () => {
    let caught: unknown;
    try {
      freeText('hi', { maxChars: 0 });
    } catch (err) {
      caught = err;
    }
    expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
  });
});
