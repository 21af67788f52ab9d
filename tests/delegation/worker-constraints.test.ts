import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTasklineError } from '../../src/core/errors.js';
import {
  assertIncomingResult,
  checkIncomingResult,
  ResultSchemaRegistry,
} from '../../src/service/constraints.js';
import { makeRecord } from './store-suite.js';

const NOW = Date.UTC(2026, 0, 5, 9, 0, 30); // before the 60 s deadline of makeRecord
const record = makeRecord('c-1');
const schemas = new ResultSchemaRegistry().register('lookup', z.object({ balance: z.number() }));

describe('constraint checker for incoming results', () => {
  it('accepts a result from the target, on time, matching the type schema', () => {
    expect(
      checkIncomingResult(
        record,
        { sender: 'back-office', stage: 'execution', result: { balance: 1 } },
        { now: NOW, schemas },
      ),
    ).toEqual({ ok: true, result: { balance: 1 } });
  });

  it('refuses results from anyone but the target', () => {
    const check = checkIncomingResult(
      record,
      { sender: 'voice-bot', stage: 'execution', result: 1 },
      { now: NOW },
    );
    expect(check).toMatchObject({ ok: false, reason: 'not_target' });
    expect(check.ok ? '' : check.message).toContain('Only the target (back-office)');
  });

  it('refuses finished, expired and overdue stages, unknown stages and missing records', () => {
    const done = makeRecord('c-2', {
      status: { execution: { state: 'done', time: 1767603600 } },
    });
    const expired = makeRecord('c-3', {
      status: { execution: { state: 'expired', time: 1767603600 } },
    });
    const sub = { sender: 'back-office', stage: 'execution', result: 1 };
    expect(checkIncomingResult(done, sub, { now: NOW })).toMatchObject({ reason: 'finished' });
    expect(checkIncomingResult(expired, sub, { now: NOW })).toMatchObject({ reason: 'expired' });
    expect(checkIncomingResult(record, sub, { now: NOW + 60_000 })).toMatchObject({
      reason: 'expired',
    });
    expect(checkIncomingResult(record, { ...sub, stage: 'review' }, { now: NOW })).toMatchObject({
      reason: 'no_stage',
    });
    expect(checkIncomingResult(undefined, sub, { now: NOW })).toMatchObject({
      reason: 'not_found',
    });
  });

  it("creates the contract's delegation_result stage with the first result, and only once", () => {
    const sub = { sender: 'back-office', result: 'Execution completed successfully' };
    expect(checkIncomingResult(record, sub, { now: NOW })).toEqual({
      ok: true,
      result: 'Execution completed successfully',
    });
    const answered = makeRecord('c-5', {
      status: { delegation_result: { state: 'done', time: 1767603600, delegation_result: 'x' } },
    });
    expect(checkIncomingResult(answered, sub, { now: NOW })).toMatchObject({ reason: 'finished' });
  });

  it('validates the result with the schema registered for the delegation type', () => {
    const check = checkIncomingResult(
      record,
      { sender: 'back-office', stage: 'execution', result: { balance: 'a lot' } },
      { now: NOW, schemas },
    );
    expect(check).toMatchObject({ ok: false, reason: 'invalid_result' });
    expect(check.ok ? '' : check.message).toContain('"lookup" schema');
    const other = makeRecord('c-4', { delegation_type: 'refund' });
    expect(
      checkIncomingResult(
        other,
        { sender: 'back-office', stage: 'execution', result: 'anything' },
        { now: NOW, schemas },
      ).ok,
    ).toBe(true);
    const strict = new ResultSchemaRegistry({ strict: true });
    expect(
      checkIncomingResult(
        other,
        { sender: 'back-office', stage: 'execution', result: 'anything' },
        { now: NOW, schemas: strict },
      ),
    ).toMatchObject({ ok: false, reason: 'invalid_result' });
  });

  it('assertIncomingResult throws errors with stable codes', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return isTasklineError(error) ? error.code : 'other';
      }
      return 'none';
    };
    expect(
      code(() =>
        assertIncomingResult(record, { sender: 'x', stage: 'execution', result: 1 }, { now: NOW }),
      ),
    ).toBe('invalid_argument');
    expect(
      code(() =>
        assertIncomingResult(
          record,
          { sender: 'back-office', stage: 'execution', result: 1 },
          { now: NOW + 1e6 },
        ),
      ),
    ).toBe('invalid_state');
    expect(
      code(() =>
        assertIncomingResult(
          undefined,
          { sender: 'back-office', stage: 'execution', result: 1 },
          { now: NOW },
        ),
      ),
    ).toBe('not_found');
    expect(
      assertIncomingResult(
        record,
        { sender: 'back-office', stage: 'execution', result: 5 },
        { now: NOW },
      ),
    ).toBe(5);
  });
});
