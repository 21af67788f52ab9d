// Numeric options declared once with their range: what a host sees for a bad value.
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import {
  checkOptions,
  checkRange,
  describeRange,
  MAX_TIMER_MS,
  millis,
  type OptionTable,
  timeWindow,
  whole,
  wholeSeconds,
} from '../../src/core/options.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('declared option ranges', () => {
  it('say the range in words', () => {
    expect(describeRange(whole(1, 20))).toBe('a whole number from 1 to 20');
    expect(describeRange(whole(0))).toBe('a whole number of at least 0');
    expect(describeRange(millis(500, 3_600_000))).toBe('between 500 and 3600000 ms');
    expect(describeRange(millis(100))).toBe('between 100 and 2147483647 ms');
    expect(describeRange(timeWindow(0))).toBe('a number of at least 0 ms, or Infinity');
  });

  it('refuse NaN, Infinity, fractions of a count, strings and out-of-range values', () => {
    for (const bad of [Number.NaN, Infinity, 2.5, '3', 0, 21, null]) {
      const err = thrown(() => checkRange('maxVisits', bad, whole(1, 20), { owner: 'Step "a"' }));
      expect(isTasklineError(err, 'invalid_argument')).toBe(true);
      expect((err as Error).message).toMatch(
        /^Step "a": maxVisits must be a whole number from 1 to 20 \(got .+\)\.$/,
      );
    }
    expect(checkRange('maxVisits', 20, whole(1, 20))).toBe(20);
    expect(checkRange('maxVisits', undefined, whole(1, 20))).toBeUndefined();
    expect(checkRange('resumeWindowMs', Infinity, timeWindow(0))).toBe(Infinity);
  });

  it('refuse a wait past the longest timer Node keeps, which would end at once instead of never', () => {
    // setTimeout(fn, 2 ** 31) fires after 1 ms: a 30-day timeout must be refused, not shortened.
    const err = thrown(() => checkRange('timeoutMs', 30 * 24 * 3_600_000, millis(1)));
    expect(err).toMatchObject({
      code: 'invalid_argument',
      message: 'timeoutMs must be between 1 and 2147483647 ms (got 2592000000).',
    });
    expect(checkRange('timeoutMs', MAX_TIMER_MS, millis(1))).toBe(MAX_TIMER_MS);
    // A window compared against, never waited, has no such limit.
    expect(checkRange('resumeWindowMs', 30 * 24 * 3_600_000, timeWindow(0))).toBe(2_592_000_000);
  });

  it('refuse a fraction of a second where a service counts whole seconds, never rounding it', () => {
    const ringing = wholeSeconds(1_000, 600_000);
    expect(describeRange(ringing)).toBe('a whole number of seconds from 1000 to 600000 ms');
    for (const bad of [1_500, 999.5, 0, 601_000, Number.NaN, '20000']) {
      const err = thrown(() =>
        checkRange('ringingTimeoutMs', bad, ringing, { owner: 'dial', why: 'in seconds' }),
      );
      expect(err).toMatchObject({
        code: 'invalid_argument',
        details: { option: 'ringingTimeoutMs' },
      });
      expect((err as Error).message).toMatch(
        /^dial: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms \(got .+\): in seconds\.$/,
      );
    }
    for (const ok of [1_000, 20_000, 600_000]) expect(checkRange('r', ok, ringing)).toBe(ok);
  });

  it('check a table: defaults filled, the first bad option named with its prefix', () => {
    const table = {
      maxNoInput: { range: whole(1, 20), default: 3 },
      noInputTimeoutMs: { range: millis(500, 120_000) },
    } as const satisfies OptionTable;
    expect(checkOptions(table, {})).toEqual({ maxNoInput: 3, noInputTimeoutMs: undefined });
    expect(checkOptions(table, { maxNoInput: 5, other: 'kept out' })).toEqual({
      maxNoInput: 5,
      noInputTimeoutMs: undefined,
    });
    const err = thrown(() => checkOptions(table, { noInputTimeoutMs: 10 }, { prefix: 'retry.' }));
    expect(err).toMatchObject({
      code: 'invalid_argument',
      message: 'retry.noInputTimeoutMs must be between 500 and 120000 ms (got 10).',
      details: { option: 'retry.noInputTimeoutMs', range: 'between 500 and 120000 ms' },
    });
  });
});
