// How a scenario's `outcome` compares with the call's typed result: listed keys only, lists
// element by element, and `{ $exists: false }` for a key that must not be there (a skipped
// answer, a refused comment) — which a partial match could not say before.
import { describe, expect, it } from 'vitest';
import { deepMatch, firstMismatch } from '../../src/scenarios/match.js';

const result = { status: 'completed', answers: { rating: 2, callback: '+14155550199' } };

describe('outcome matching', () => {
  it('$exists: false passes only when the key is absent, and says what was there', () => {
    expect(deepMatch(result, { answers: { comment: { $exists: false } } })).toBe(true);
    expect(deepMatch(result, { answers: { rating: { $exists: false } } })).toBe(false);
    expect(firstMismatch(result, { answers: { rating: { $exists: false } } })).toBe(
      'answers.rating: expected nothing, got 2',
    );
  });

  it('$exists: true passes for any value and fails for a missing key', () => {
    expect(deepMatch(result, { answers: { callback: { $exists: true } } })).toBe(true);
    expect(firstMismatch(result, { answers: { comment: { $exists: true } } })).toBe(
      'answers.comment: expected a value, got nothing',
    );
  });

  it('an object with other keys besides $exists is matched as data', () => {
    expect(deepMatch({ a: { $exists: false, b: 1 } }, { a: { $exists: false, b: 1 } })).toBe(true);
    expect(deepMatch({ a: 1 }, { a: { $exists: false, b: 1 } })).toBe(false);
  });
});
