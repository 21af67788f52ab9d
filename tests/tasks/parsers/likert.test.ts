// likert: a rating on a scale, by number or label.
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../../src/core/errors.js';
import { likert } from '../../../src/tasks/parsers/index.js';

const scale = {
  min: 1,
  max: 5,
  labels: { 1: 'very unlikely', 2: 'unlikely', 3: 'neutral', 4: 'likely', 5: 'very likely' },
};

describe('likert', () => {
  it.each([
    ['4', 4],
    ['four', 4],
    ['a four', 4],
    ["I'd give it a four", 4],
    ["um, it's a four", 4],
    ['4 out of 5', 4],
    ['four out of five', 4],
    ['4/5', 4],
    ['5 stars', 5],
    ['one', 1],
    ['very likely', 5],
    ['Likely.', 4],
    ['neutral', 3],
    ['unlikely', 2],
    ['very unlikely', 1],
  ])('%j → %d', (text, value) => {
    expect(likert(text, scale)).toEqual({ kind: 'match', value });
  });

  it.each([['banana'], [''], ['the first one'], ['likely or unlikely']])('%j → nomatch', (text) => {
    expect(likert(text, scale)).toEqual({ kind: 'nomatch' });
  });

  it.each([
    ['seven', 'Please pick a whole number from 1 to 5.'],
    ['zero', 'Please pick a whole number from 1 to 5.'],
    ['3.5', 'Please pick a whole number from 1 to 5.'],
    ['four out of ten', 'Please use the scale from 1 to 5.'],
    ['8/10', 'Please use the scale from 1 to 5.'],
  ])('%j → invalid', (text, reason) => {
    expect(likert(text, scale)).toEqual({ kind: 'invalid', reason });
  });

  it('works without labels and on a 0–10 scale', () => {
    expect(likert('ten', { min: 0, max: 10 })).toEqual({ kind: 'match', value: 10 });
    expect(likert('zero', { min: 0, max: 10 })).toEqual({ kind: 'match', value: 0 });
    expect(likert('likely', { min: 0, max: 10 })).toEqual({ kind: 'nomatch' });
  });

  it('rejects a malformed scale as a programming error', () => {
    let caught: unknown;
    try {
      likert('3', { min: 5, max: 1 });
    } catch (err) {
      caught = err;
    }
    expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
  });
});
