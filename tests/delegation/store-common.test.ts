import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { DelegationRecord } from '../../src/delegation/record.js';
import { canonicalTime, normalizeRecord } from '../../src/delegation/stores/common.js';
import { makeRecord } from './store-suite.js';

const base = makeRecord('n-1') as unknown as Record<string, unknown>;
const stage = (over: Record<string, unknown>) => ({
  ...base,
  status: { execution: { state: 'pending', time: '2026-01-05T09:00:00.000Z', ...over } },
});

/** Inputs around every rule of the schema: each must get the same verdict as zod gives. */
const CASES: Array<[string, unknown]> = [
  ['valid', base],
  ['extra top-level key (dropped)', { ...base, extra: 1 }],
  ['extra stage key (dropped)', stage({ owner: 'x' })],
  ['no sub_task_data (defaults to {})', { ...base, sub_task_data: undefined }],
  ['result of any JSON', stage({ delegation_result: [1, { a: null }] })],
  ['null-prototype data', { ...base, sub_task_data: Object.assign(Object.create(null), { a: 1 }) }],
  [
    'class instance as data',
    {
      ...base,
      sub_task_data: new (class Data {
        a = 1;
      })(),
    },
  ],
  ['level 100', { ...base, workflow_level: 100 }],
  ['level 101', { ...base, workflow_level: 101 }],
  ['level 1.5', { ...base, workflow_level: 1.5 }],
  ['level as text', { ...base, workflow_level: '1' }],
  ['empty id', { ...base, delegation_id: '' }],
  ['id of 200', { ...base, delegation_id: 'x'.repeat(200) }],
  ['id of 201', { ...base, delegation_id: 'x'.repeat(201) }],
  ['type of 101', { ...base, delegation_type: 't'.repeat(101) }],
  ['data is an array', { ...base, sub_task_data: [1] }],
  ['status is an array', { ...base, status: [] }],
  [
    'empty stage name',
    { ...base, status: { '': { state: 'pending', time: '2026-01-05T09:00:00.000Z' } } },
  ],
  ['unknown state', stage({ state: 'finished' })],
  ['numeric deadline', stage({ deadline: 5 })],
  ['missing time', { ...base, status: { execution: { state: 'pending' } } }],
  ['not an object', 'record'],
  ['null', null],
];

describe('normalizeRecord (fast path + zod) agrees with the DelegationRecord schema', () => {
  it.each(CASES)('%s', (_name, input) => {
    const zod = DelegationRecord.safeParse(input);
    let ours: unknown;
    let error: unknown;
    try {
      ours = normalizeRecord(input);
    } catch (e) {
      error = e;
    }
    if (zod.success) {
      expect(error).toBeUndefined();
      expect(JSON.parse(JSON.stringify(ours))).toEqual(JSON.parse(JSON.stringify(zod.data)));
    } else {
      expect(isTasklineError(error, 'invalid_argument')).toBe(true);
      expect((error as Error).message).toMatch(/^Invalid delegation record: /);
    }
  });

  it('canonicalises ISO times and rejects anything else', () => {
    expect(canonicalTime('2026-01-05T10:00:00+01:00', 't')).toBe('2026-01-05T09:00:00.000Z');
    expect(canonicalTime('2026-01-05T09:00:00.000Z', 't')).toBe('2026-01-05T09:00:00.000Z');
    for (const bad of [
      '2026-02-30T00:00:00.000Z',
      'March 7, 2026',
      '2026-01-05',
      1736067600000,
      null,
    ]) {
      expect(() => canonicalTime(bad, 'deadline')).toThrow(/deadline must be an ISO-8601 time/);
    }
  });
});
