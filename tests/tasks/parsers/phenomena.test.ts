// What callers do around an answer: estimates, alternatives, refusals, corrections, and the
// programming errors a parser reports clearly.
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../../src/core/errors.js';
import {
  afterRejection,
  type ChoiceOption,
  choice,
  type LikertOptions,
  likert,
  number,
  patchDigitEnd,
  patchEmail,
  refusal,
  spelledWord,
  time,
} from '../../../src/tasks/parsers/index.js';

const rating = { min: 0, max: 10, integer: true };

describe('estimates and alternatives are typed, never silent values', () => {
  it.each([
    ['about six', 6],
    ["I'd say around a six", 6],
    ['seven or so', 7],
    ['sevenish', 7],
    ['a high seven', 7],
    ['seven?', 7],
  ])('%j → approximate %d', (text, value) => {
    expect(number(text, rating)).toEqual({ kind: 'match', value, approximate: true });
  });

  it.each([
    ['maybe seven or eight', [7, 8]],
    ['a solid eight, maybe seven', [8, 7]],
    ['six to seven', [6, 7]],
  ])('%j → nomatch with candidates %j', (text, candidates) => {
    expect(number(text, rating)).toEqual({ kind: 'nomatch', candidates });
  });

  it('drops alternatives outside the rules and never offers one alone', () => {
    expect(number('seven or eleven', rating)).toEqual({ kind: 'nomatch' });
    expect(number('twenty to five', {})).toEqual({ kind: 'nomatch' });
  });

  it('marks an approximate time, keeps exact ones exact', () => {
    expect(time('around 3 pm')).toEqual({ kind: 'match', value: '15:00', approximate: true });
    expect(time('3 pm')).toEqual({ kind: 'match', value: '15:00' });
  });
});

describe('refusals', () => {
  it.each([
    ["I'd rather not say", 'explicit'],
    ['no comment', 'explicit'],
    ['none of your business', 'explicit'],
    ["I don't want to answer that", 'explicit'],
    ["I'd rather not", 'soft'],
    ['not interested', 'soft'],
    ['no thanks', 'soft'],
    ['no', undefined],
    ['rather', undefined],
    ['seven', undefined],
  ])('%j → %s', (text, kind) => {
    expect(refusal(text)).toBe(kind);
  });
});

describe('read-back corrections', () => {
  it('finds the words after a leading rejection', () => {
    expect(afterRejection("no, it's D O E")).toBe("it's D O E");
    expect(afterRejection("nope that's wrong, jane at example dot org")).toBe(
      'jane at example dot org',
    );
    expect(afterRejection('no')).toBeUndefined();
    expect(afterRejection('yes it is D O E')).toBeUndefined();
  });

  it('reads a spelled word only when the reply is just a spelling', () => {
    expect(spelledWord("it's D O E")).toBe('Doe');
    expect(spelledWord('S-M-Y-T-H')).toBe('Smyth');
    expect(spelledWord('it is the one with D O E')).toBeUndefined();
    expect(spelledWord('Doe')).toBeUndefined();
  });

  it('patches the one part of an address a spelling fits, or nothing', () => {
    expect(patchEmail('jane.doh@example.com', 'DOE')).toBe('jane.doe@example.com');
    expect(patchEmail('jane@exampel.com', 'EXAMPLE')).toBe('jane@example.com');
    expect(patchEmail('doh.dom@example.com', 'DOE')).toBeUndefined();
    expect(patchEmail('jane.smith@example.com', 'DOE')).toBeUndefined();
  });

  it('patches an end of a digit string when the count fits', () => {
    expect(patchDigitEnd('+14155550199', 'the last four are 1 2 3 4')).toEqual({
      kind: 'match',
      value: '+14155551234',
    });
    expect(patchDigitEnd('123456', 'it ends in 9 9')).toEqual({ kind: 'match', value: '123499' });
    expect(patchDigitEnd('123456', 'the first two are 9 9', { allowFirst: true })).toEqual({
      kind: 'match',
      value: '993456',
    });
    expect(patchDigitEnd('+14155550199', 'the first three are 2 1 2')).toEqual({
      kind: 'nomatch',
    });
    expect(patchDigitEnd('123456', 'the last four are 9 9').kind).toBe('invalid');
    expect(patchDigitEnd('123456', '9 9 9 9').kind).toBe('nomatch');
  });
});

describe('programming errors are clear', () => {
  it.each([
    ['choice without options', () => choice('billing', undefined as unknown as ChoiceOption[])],
    ['choice with options that are not options', () => choice('billing', [{}] as ChoiceOption[])],
    ['likert without a scale', () => likert('four', undefined as unknown as LikertOptions)],
    ['likert with min above max', () => likert('four', { min: 5, max: 1 })],
  ])('%s → invalid_argument', (_what, call) => {
    let caught: unknown;
    try {
      call();
    } catch (error) {
      caught = error;
    }
    expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
  });
});
