import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { normalizeRecord } from '../../src/delegation/stores/common.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../../src/delegation/validate.js';
import { makeRecord } from './store-suite.js';

const base = makeRecord('n-1') as unknown as Record<string, unknown>;
const stage = (over: Record<string, unknown>) => ({
  ...base,
  status: { execution: { state: 'pending', time: 1717390000, ...over } },
});

/** Inputs around every rule of the record shape, with the verdict each must get. */
const CASES: Array<[string, unknown, 'ok' | RegExp]> = [
  ['valid', base, 'ok'],
  [
    'the contract example (no status, level 1)',
    {
      delegation_id: 'del789',
      task_id: 'task123',
      sub_task_id: 'sub456',
      workflow_level: 1,
      delegation_type: 'manual',
      target_subject_id: 'agentB',
      sender_subject_id: 'agentA',
      sub_task_data: { key: 'value' },
    },
    'ok',
  ],
  ['extra top-level key', { ...base, extra: 1 }, /unknown field "extra"/],
  ['extra stage key', stage({ owner: 'x' }), /unknown field "owner"/],
  ['no sub_task_data (defaults to {})', { ...base, sub_task_data: undefined }, 'ok'],
  ['no workflow_level (defaults to 0)', { ...base, workflow_level: undefined }, 'ok'],
  ['result of any JSON', stage({ delegation_result: [1, { a: null }] }), 'ok'],
  [
    'null-prototype data',
    { ...base, sub_task_data: Object.assign(Object.create(null), { a: 1 }) },
    'ok',
  ],
  [
    'class instance as data',
    {
      ...base,
      sub_task_data: new (class Data {
        a = 1;
      })(),
    },
    /sub_task_data must be a JSON object/,
  ],
  ['level 100', { ...base, workflow_level: 100 }, 'ok'],
  ['level 101', { ...base, workflow_level: 101 }, /workflow_level/],
  ['level 1.5', { ...base, workflow_level: 1.5 }, /workflow_level/],
  ['level as text', { ...base, workflow_level: '1' }, /workflow_level/],
  ['empty id', { ...base, delegation_id: '' }, /delegation_id must be a string of 1 to 200/],
  ['id of 200', { ...base, delegation_id: 'x'.repeat(200) }, 'ok'],
  ['id of 201', { ...base, delegation_id: 'x'.repeat(201) }, /delegation_id/],
  ['type of 101', { ...base, delegation_type: 't'.repeat(101) }, /delegation_type/],
  ['data is an array', { ...base, sub_task_data: [1] }, /sub_task_data/],
  ['status is an array', { ...base, status: [] }, /status must be an object/],
  ['empty stage name', { ...base, status: { '': { state: 'pending', time: 1 } } }, /stage name/],
  ['unknown state', stage({ state: 'finished' }), /state must be one of/],
  ['ISO time', stage({ time: '2026-01-05T09:00:00.000Z' }), /integer seconds since the epoch/],
  ['milliseconds', stage({ time: 1717390000000 }), /looks like milliseconds/],
  ['fractional deadline', stage({ deadline: 1717400000.5 }), /deadline must be integer seconds/],
  [
    'missing time',
    { ...base, status: { execution: { state: 'pending' } } },
    /time must be integer/,
  ],
  ['not an object', 'record', /is a JSON object/],
  ['null', null, /is a JSON object/],
];

describe('normalizeRecord: the contract record shape', () => {
  it.each(CASES)('%s', (_name, input, verdict) => {
    let ours: unknown;
    let error: unknown;
    try {
      ours = normalizeRecord(input);
    } catch (e) {
      error = e;
    }
    if (verdict === 'ok') {
      expect(error).toBeUndefined();
      expect(ours).toMatchObject({
        delegation_id: (input as { delegation_id: string }).delegation_id,
      });
    } else {
      expect(isTasklineError(error, 'invalid_argument')).toBe(true);
      expect((error as Error).message).toMatch(verdict);
    }
  });

  it('lists every problem of a record at once', () => {
    const error = (() => {
      try {
        normalizeRecord({
          ...base,
          task_id: 7,
          workflow_level: -1,
          status: { a: { state: 'x', time: 'y' } },
        });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toMatch(
      /workflow_level.*task_id.*state must be one of.*time must be integer/s,
    );
  });

  it('measures JSON depth without recursion, however deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonDepth(deep)).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth({ a: [{ b: 1 }] })).toBe(3);
    expect(jsonDepth('x')).toBe(0);
  });
});
