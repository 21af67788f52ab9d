import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { isTasklineError, type TasklineErrorCode } from '../../src/core/errors.js';
import type {
  DelegationFilter,
  DelegationRecord,
  DelegationStore,
} from '../../src/delegation/record.js';
import type { DurableDelegationStore } from '../../src/service/stores/change.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';
import { serviceMissing } from '../services.js';

/** What a suite factory gets: the clock the store must stamp stage times with. */
export interface StoreSuiteContext {
  clock: Clock;
}

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
/** Epoch seconds of a clock time in ms. */
const sec = (ms: number) => Math.floor(ms / 1000);

/** A valid record with one pending `execution` stage; override any field. */
export function makeRecord(
  id: string,
  overrides: Partial<DelegationRecord> = {},
): DelegationRecord {
  return {
    delegation_id: id,
    task_id: 'task-1',
    sub_task_id: `sub-${id}`,
    workflow_level: 1,
    delegation_type: 'lookup',
    sender_subject_id: 'voice-bot',
    target_subject_id: 'back-office',
    status: { execution: { state: 'pending', time: sec(T0), deadline: sec(T0 + 60_000) } },
    sub_task_data: { account: 'A-17', nested: { list: [1, 'two', null], flag: true } },
    ...overrides,
  };
}

async function rejectsWith(promise: Promise<unknown>, code: TasklineErrorCode): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(isTasklineError(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`expected a TasklineError ${code}, but the call succeeded`);
}

/**
 * The contract every DelegationStore meets (in-memory, SQLite, Postgres), run against a fresh
 * store per test. `makeStore` gets the virtual clock the store must use for stage times.
 */
export function describeDelegationStoreSuite(
  name: string,
  makeStore: (ctx: StoreSuiteContext) => Promise<DelegationStore> | DelegationStore,
  options: { skip?: boolean } = {},
): void {
  describe(`DelegationStore contract: ${name}`, { skip: options.skip }, () => {
    let store: DelegationStore;
    let clock: VirtualClock;

    beforeEach(async () => {
      clock = new VirtualClock(T0 + 1_000);
      store = await makeStore({ clock });
    });
    afterEach(async () => {
      await store.close();
    });

    it('creates a record and reads back the same data', async () => {
      const record = makeRecord('d-create');
      expect(await store.create(record)).toEqual(record);
      expect(await store.get('d-create')).toEqual(record);
      expect(await store.get('d-missing')).toBeUndefined();
    });

    it('keeps times as integer epoch seconds and refuses other time formats', async () => {
      const created = await store.create(
        makeRecord('d-times', {
          status: { execution: { state: 'pending', time: 1717390000, deadline: 1717400000 } },
        }),
      );
      expect(created.status.execution).toEqual({
        state: 'pending',
        time: 1717390000,
        deadline: 1717400000,
      });
      expect((await store.get('d-times'))?.status.execution).toEqual(created.status.execution);
      for (const time of ['2026-01-05T09:00:00Z', 1717390000.5, -1, 1717390000000]) {
        const message = await rejectsWith(
          store.create(
            makeRecord('d-times-bad', {
              status: { execution: { state: 'pending', time: time as number } },
            }),
          ),
          'invalid_argument',
        );
        expect(message).toContain('integer seconds since the epoch');
      }
      expect(await store.get('d-times-bad')).toBeUndefined();
    });

    it('stores stages named like Object.prototype keys as ordinary stages', async () => {
      await store.create(makeRecord('d-proto', { status: {} }));
      for (const stage of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        await store.setStage('d-proto', stage, { state: 'in_progress' });
        const done = await store.setStage('d-proto', stage, {
          state: 'done',
          delegation_result: `${stage} ok`,
        });
        expect(Object.hasOwn(done.status, stage)).toBe(true);
      }
      const back = await store.get('d-proto');
      const stages = Object.keys(back?.status ?? {}).sort();
      expect(stages).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf']);
      const proto = '__proto__';
      expect(back?.status[proto]?.delegation_result).toBe('__proto__ ok');
      expect(JSON.parse(JSON.stringify(back)).status.constructor.state).toBe('done');
      expect(({} as Record<string, unknown>).state).toBeUndefined();
      expect(
        (await store.query({ 'status.execution.state': 'done' })).items.map((r) => r.delegation_id),
      ).toEqual([]);
    });

    it('refuses JSON nested deeper than 64 levels, and keeps working', async () => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < 1_000; i++) deep = { d: deep };
      await rejectsWith(
        store.create(makeRecord('d-deep', { sub_task_data: deep as Record<string, unknown> })),
        'invalid_argument',
      );
      await store.create(makeRecord('d-deep'));
      await rejectsWith(
        store.setStage('d-deep', 'execution', { state: 'done', delegation_result: deep }),
        'invalid_argument',
      );
      await rejectsWith(
        store.update('d-deep', { sub_task_data: deep as never }),
        'invalid_argument',
      );
      await store.setStage('d-deep', 'execution', { state: 'done', delegation_result: 'ok' });
      expect(
        (await store.query({ 'status.execution.state': 'done' })).items.map((r) => r.delegation_id),
      ).toEqual(['d-deep']);
    });

    it('rejects a duplicate id with invalid_state and keeps the first record', async () => {
      await store.create(makeRecord('d-dup'));
      const message = await rejectsWith(
        store.create(makeRecord('d-dup', { task_id: 'other' })),
        'invalid_state',
      );
      expect(message).toContain('already exists');
      expect((await store.get('d-dup'))?.task_id).toBe('task-1');
    });

    it('rejects invalid records with invalid_argument', async () => {
      await rejectsWith(
        store.create(makeRecord('d-bad', { workflow_level: -1 })),
        'invalid_argument',
      );
      await rejectsWith(
        store.create({ ...makeRecord('d-bad'), delegation_id: '' }),
        'invalid_argument',
      );
      await rejectsWith(
        store.create(
          makeRecord('d-bad', {
            status: { execution: { state: 'pending', time: 'yesterday' as never } },
          }),
        ),
        'invalid_argument',
      );
      expect(await store.get('d-bad')).toBeUndefined();
    });

    it('moves a stage forward with the clock time, keeping deadline and result', async () => {
      await store.create(makeRecord('d-move'));
      const started = await store.setStage('d-move', 'execution', { state: 'in_progress' });
      expect(started.status.execution).toEqual({
        state: 'in_progress',
        time: sec(T0 + 1_000),
        deadline: sec(T0 + 60_000),
      });
      await clock.advance(1_500);
      const done = await store.setStage('d-move', 'execution', {
        state: 'done',
        delegation_result: { balance: 42, currency: 'EUR' },
      });
      expect(done.status.execution).toEqual({
        state: 'done',
        time: sec(T0 + 2_500),
        deadline: sec(T0 + 60_000),
        delegation_result: { balance: 42, currency: 'EUR' },
      });
      expect(await store.get('d-move')).toEqual(done);
    });

    it('takes the time a client gives, and lets an open stage be set again', async () => {
      await store.create(makeRecord('d-time'));
      const r = await store.setStage('d-time', 'execution', {
        state: 'in_progress',
        time: 1717390000,
        deadline: 1717400000,
      });
      expect(r.status.execution).toEqual({
        state: 'in_progress',
        time: 1717390000,
        deadline: 1717400000,
      });
      const again = await store.setStage('d-time', 'execution', { state: 'in_progress' });
      expect(again.status.execution).toEqual({
        state: 'in_progress',
        time: sec(T0 + 1_000),
        deadline: 1717400000,
      });
      await rejectsWith(
        store.setStage('d-time', 'execution', { state: 'done', expect: 'pending' }),
        'invalid_state',
      );
    });

    it('refuses backward and repeated moves with invalid_state and changes nothing', async () => {
      await store.create(makeRecord('d-back'));
      await store.setStage('d-back', 'execution', { state: 'done', delegation_result: 1 });
      const message = await rejectsWith(
        store.setStage('d-back', 'execution', { state: 'in_progress' }),
        'invalid_state',
      );
      expect(message).toContain('cannot move from done to in_progress');
      await rejectsWith(store.setStage('d-back', 'execution', { state: 'done' }), 'invalid_state');
      expect((await store.get('d-back'))?.status.execution?.delegation_result).toBe(1);
    });

    it('adds a new stage, sets a new deadline, and rejects bad stage input', async () => {
      await store.create(makeRecord('d-stage'));
      const r = await store.setStage('d-stage', 'review', {
        state: 'pending',
        deadline: sec(T0) + 3 * 3600,
      });
      expect(r.status.review).toEqual({
        state: 'pending',
        time: sec(T0 + 1_000),
        deadline: sec(T0) + 3 * 3600,
      });
      expect(r.status.execution?.state).toBe('pending');
      await rejectsWith(
        store.setStage('d-stage', 'review', { state: 'in_progress', deadline: 'soon' as never }),
        'invalid_argument',
      );
      await rejectsWith(
        store.setStage('d-stage', 'review', { state: 'finished' as never }),
        'invalid_argument',
      );
      await rejectsWith(
        store.setStage('d-stage', '', { state: 'in_progress' }),
        'invalid_argument',
      );
      await rejectsWith(store.setStage('d-nope', 'execution', { state: 'done' }), 'not_found');
    });

    it('lets exactly one of two racing moves win', async () => {
      await store.create(makeRecord('d-race'));
      const results = await Promise.allSettled([
        store.setStage('d-race', 'execution', { state: 'done', delegation_result: 'a' }),
        store.setStage('d-race', 'execution', { state: 'failed', delegation_result: 'b' }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected');
      expect(isTasklineError(rejected?.reason, 'invalid_state')).toBe(true);
    });

    it('updates any field but the id and the status, and nested data by dotted path', async () => {
      await store.create(makeRecord('d-upd'));
      const r = await store.update('d-upd', {
        workflow_level: 3,
        sub_task_data: { account: 'B-2' },
        target_subject_id: 'billing',
        task_id: 'task-9',
      });
      expect(r).toMatchObject({
        workflow_level: 3,
        sub_task_data: { account: 'B-2' },
        target_subject_id: 'billing',
        task_id: 'task-9',
      });
      expect(await store.get('d-upd')).toEqual(r);
      const nested = await store.update('d-upd', { 'sub_task_data.limits.max': 5 });
      expect(nested.sub_task_data).toEqual({ account: 'B-2', limits: { max: 5 } });
      expect((await store.get('d-upd'))?.sub_task_data).toEqual(nested.sub_task_data);
      for (const bad of [
        { status: {} },
        { delegation_id: 'other' },
        { bogus: 1 },
        { workflow_level: 'two' },
        { task_id: '' },
        {},
        { 'sub_task_data.__proto__.x': 1 },
        { 'sub_task_data.account.x': 1 },
      ]) {
        await rejectsWith(store.update('d-upd', bad as never), 'invalid_argument');
      }
      expect(await store.get('d-upd')).toEqual(nested);
      await rejectsWith(store.update('d-none', { sub_task_data: {} }), 'not_found');
    });

    it('deletes a record once', async () => {
      await store.create(makeRecord('d-del'));
      expect(await store.delete('d-del')).toBe(true);
      expect(await store.get('d-del')).toBeUndefined();
      expect(await store.delete('d-del')).toBe(false);
      await store.create(makeRecord('d-del'));
      expect(await store.get('d-del')).toBeDefined();
    });

    describe('query', () => {
      beforeEach(async () => {
        await store.create(
          makeRecord('q-1', {
            delegation_type: 'lookup',
            sub_task_data: { account: 'A-17', amount: 5, tags: ['vip', 'eu'], flag: true },
          }),
        );
        await store.create(
          makeRecord('q-2', {
            delegation_type: 'refund',
            target_subject_id: 'billing',
            sub_task_data: { account: 'B-2', amount: 12.5, note: null, nested: { level: 'x' } },
          }),
        );
        await store.create(
          makeRecord('q-3', {
            delegation_type: 'refund',
            workflow_level: 2,
            sender_subject_id: 'ops',
            status: {
              execution: {
                state: 'done',
                time: sec(T0),
                deadline: sec(T0 + 10_000),
                delegation_result: 'refunded',
              },
            },
            sub_task_data: { amount: '12', tags: [] },
          }),
        );
        await store.create(
          makeRecord('q-4', {
            task_id: 'task-2',
            status: { execution: { state: 'pending', time: sec(T0 + 5_000) } },
            sub_task_data: {},
          }),
        );
      });
      const ids = async (filter: DelegationFilter) =>
        (await store.query(filter, { limit: 100 })).items.map((r) => r.delegation_id);

      it('matches equality, $in, stage state and numbers; an empty filter matches all', async () => {
        expect(await ids({})).toEqual(['q-1', 'q-2', 'q-3', 'q-4']);
        expect(await ids({ delegation_type: 'refund' })).toEqual(['q-2', 'q-3']);
        expect(await ids({ target_subject_id: { $in: ['billing', 'nobody'] } })).toEqual(['q-2']);
        expect(await ids({ 'status.execution.state': 'done' })).toEqual(['q-3']);
        expect(await ids({ workflow_level: 2 })).toEqual(['q-3']);
        expect(await ids({ delegation_type: 'refund', sender_subject_id: 'ops' })).toEqual(['q-3']);
        expect(await ids({ 'status.review.state': 'pending' })).toEqual([]);
        expect(await ids({ delegation_type: { $in: [] } })).toEqual([]);
        // A value of the wrong type for a typed field could never match: it is refused.
        for (const wrong of [
          { workflow_level: '1' },
          { workflow_level: '1 OR 1=1' },
          { workflow_level: 1.5 },
          { workflow_level: true },
          { task_id: 1 },
          { task_id: null },
          { sender_subject_id: { $in: ['ops', 7] } },
          { 'status.execution.state': 'finished' },
          { 'status.execution.time': '1717390000' },
          { 'status.execution.owner': 'x' },
        ]) {
          await expect(ids(wrong), JSON.stringify(wrong)).rejects.toMatchObject({
            code: 'invalid_argument',
          });
        }
        expect(await ids({ 'status.review.state': null })).toEqual(['q-1', 'q-2', 'q-3', 'q-4']);
        expect(await ids({ delegation_type: { $eq: 'lookup' } })).toEqual(['q-1', 'q-4']);
      });

      it('compares numbers and times with $gt/$gte/$lt/$lte, by type as MongoDB does', async () => {
        expect(await ids({ 'status.execution.deadline': { $lt: sec(T0 + 30_000) } })).toEqual([
          'q-3',
        ]);
        expect(await ids({ 'status.execution.time': { $gt: sec(T0) } })).toEqual(['q-4']);
        expect(await ids({ 'status.execution.time': { $gte: sec(T0), $lte: sec(T0) } })).toEqual([
          'q-1',
          'q-2',
          'q-3',
        ]);
        expect(await ids({ workflow_level: { $gte: 2 } })).toEqual(['q-3']);
        expect(await ids({ workflow_level: { $lt: 2 } })).toEqual(['q-1', 'q-2', 'q-4']);
        expect(await ids({ 'sub_task_data.amount': { $gt: 5 } })).toEqual(['q-2']);
        expect(await ids({ 'sub_task_data.amount': { $gte: 5 } })).toEqual(['q-1', 'q-2']);
        expect(await ids({ 'sub_task_data.amount': { $gt: '1' } })).toEqual(['q-3']);
        expect(await ids({ delegation_type: { $gt: 'p' } })).toEqual(['q-2', 'q-3']);
      });

      it('walks dotted paths into sub_task_data, with $ne, $nin, $exists and null', async () => {
        expect(await ids({ 'sub_task_data.account': 'A-17' })).toEqual(['q-1']);
        expect(await ids({ 'sub_task_data.nested.level': 'x' })).toEqual(['q-2']);
        expect(await ids({ 'sub_task_data.flag': true })).toEqual(['q-1']);
        expect(await ids({ 'sub_task_data.flag': 1 })).toEqual([]);
        expect(await ids({ 'sub_task_data.amount': 12.5 })).toEqual(['q-2']);
        expect(await ids({ 'sub_task_data.amount': '12' })).toEqual(['q-3']);
        expect(await ids({ 'sub_task_data.tags': 'vip' })).toEqual(['q-1']);
        expect(await ids({ 'sub_task_data.tags': { $in: ['eu', 'us'] } })).toEqual(['q-1']);
        expect(await ids({ 'sub_task_data.account': { $ne: 'A-17' } })).toEqual([
          'q-2',
          'q-3',
          'q-4',
        ]);
        expect(await ids({ 'sub_task_data.account': { $nin: ['A-17', 'B-2'] } })).toEqual([
          'q-3',
          'q-4',
        ]);
        expect(await ids({ 'sub_task_data.note': { $exists: true } })).toEqual(['q-2']);
        expect(await ids({ 'sub_task_data.amount': { $exists: false } })).toEqual(['q-4']);
        expect(await ids({ 'sub_task_data.note': null })).toEqual(['q-1', 'q-2', 'q-3', 'q-4']);
        expect(await ids({ 'sub_task_data.account': null })).toEqual(['q-3', 'q-4']);
        expect(await ids({ 'status.execution.delegation_result': 'refunded' })).toEqual(['q-3']);
        expect(await ids({ 'status.execution.deadline': { $exists: false } })).toEqual(['q-4']);
        expect(await ids({ 'status.execution': { $exists: true } })).toHaveLength(4);
      });

      it('combines with $and/$or', async () => {
        expect(await ids({ $or: [{ delegation_type: 'lookup' }, { task_id: 'task-2' }] })).toEqual([
          'q-1',
          'q-4',
        ]);
        expect(
          await ids({
            $and: [
              { delegation_type: 'refund' },
              { $or: [{ workflow_level: 2 }, { target_subject_id: 'billing' }] },
            ],
          }),
        ).toEqual(['q-2', 'q-3']);
      });

      it('pages with an opaque cursor, every record exactly once, in id order', async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.query({}, { limit: 3, ...(cursor ? { cursor } : {}) });
          seen.push(...page.items.map((r) => r.delegation_id));
          cursor = page.next;
          pages++;
        } while (cursor);
        expect(seen).toEqual(['q-1', 'q-2', 'q-3', 'q-4']);
        expect(pages).toBe(2);
        await rejectsWith(store.query({}, { cursor: 'not-a-cursor' }), 'invalid_argument');
      });

      it('rejects everything outside the allow-list with invalid_argument', async () => {
        const bad: unknown[] = [
          { delegation_type: { $regex: '.*' } },
          { $where: 'sleep(1)' },
          { $function: { body: 'return true', args: [], lang: 'js' } },
          { $expr: { $eq: [1, 1] } },
          { delegation_type: { $not: { $eq: 'x' } } },
          { 'sub_task_data.tags': { $elemMatch: { $eq: 'vip' } } },
          { $nor: [{ task_id: 'x' }] },
          { __proto__: { polluted: true } },
          JSON.parse('{"__proto__":{"task_id":"task-1"}}'),
          { 'sub_task_data.__proto__': 1 },
          { 'sub_task_data.constructor.prototype': 1 },
          { 'status.constructor.state': 'done' },
          { 'sub_task_data.toString': 'x' },
          { constructor: 'x' },
          { 'sub_task_data.items.0': 'x' },
          { 'status.execution.deadline': { $gt: 'tomorrow', $lt: {} } },
          { unknown_field: 'x' },
          { delegation_type: ['a'] },
          { delegation_type: { a: 1 } },
          { delegation_type: {} },
          { 'sub_task_data.amount': { $exists: 1 } },
          { 'sub_task_data.amount': { $in: 'x' } },
          { $or: [] },
          { $and: 'x' },
          [],
          'x',
        ];
        for (const filter of bad) {
          await rejectsWith(store.query(filter as never), 'invalid_argument');
        }
        expect(await ids({})).toHaveLength(4);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        // Any stage name is data, never SQL.
        expect(await ids({ "status.x'); DROP TABLE t; --.state": 'done' })).toEqual([]);
        expect(await ids({})).toHaveLength(4);
      });
    });

    it('lists overdue records: open stages past their deadline only', async () => {
      await store.create(makeRecord('o-late'));
      await store.create(
        makeRecord('o-later', {
          status: {
            a: { state: 'done', time: sec(T0), deadline: sec(T0 + 1_000) },
            b: { state: 'in_progress', time: sec(T0), deadline: sec(T0 + 90_000) },
          },
        }),
      );
      await store.create(
        makeRecord('o-done', {
          status: { execution: { state: 'done', time: sec(T0), deadline: sec(T0 + 1_000) } },
        }),
      );
      await store.create(
        makeRecord('o-none', { status: { execution: { state: 'pending', time: sec(T0) } } }),
      );
      await store.create(
        makeRecord('o-answered', {
          status: {
            execution: { state: 'in_progress', time: sec(T0), deadline: sec(T0 + 1_000) },
            delegation_result: { state: 'done', time: sec(T0), delegation_result: 'ok' },
          },
        }),
      );
      const at = (ms: number) =>
        store.overdue(T0 + ms).then((rs) => rs.map((r) => r.record.delegation_id).sort());
      expect(await at(30_000)).toEqual([]);
      expect(await at(60_000)).toEqual([]);
      expect(await at(60_001)).toEqual(['o-late']);
      expect(await at(100_000)).toEqual(['o-late', 'o-later']);
      expect(await store.overdue(T0 + 100_000, 1)).toHaveLength(1);
      await store.setStage('o-late', 'execution', { state: 'expired' });
      expect(await at(100_000)).toEqual(['o-later']);
      await rejectsWith(
        store.setStage('o-answered', 'execution', { state: 'expired' }),
        'invalid_state',
      );
      expect(
        (await store.overdue(T0 + 100_000)).find((r) => r.record.delegation_id === 'o-later')
          ?.stages,
      ).toEqual(['b']);
    });

    it('never lists a stage written with a deadline already past (it is kept as written)', async () => {
      // As the contract's example does: {"state":"in_progress","time":1717390000,"deadline":1717400000}.
      await store.create(makeRecord('o-past', { status: {} }));
      await store.setStage('o-past', 'execution', {
        state: 'in_progress',
        time: 1717390000,
        deadline: 1717400000,
      });
      await store.setStage('o-past', 'review', { state: 'pending', deadline: sec(T0 + 30_000) });
      await store.create(
        makeRecord('o-born-late', {
          status: { execution: { state: 'pending', time: 1717390000, deadline: 1717400000 } },
        }),
      );
      expect(await store.overdue(T0 + 10_000)).toEqual([]);
      const due = await store.overdue(T0 + 40_000);
      expect(due.map((r) => [r.record.delegation_id, r.stages])).toEqual([['o-past', ['review']]]);
      // A write that keeps the deadline keeps the verdict: an enforced deadline stays enforced.
      await store.create(makeRecord('o-kept'));
      await store.setStage('o-kept', 'execution', { state: 'in_progress' });
      expect((await store.overdue(T0 + 61_000)).map((r) => r.record.delegation_id)).toContain(
        'o-kept',
      );
      await store.setStage('o-kept', 'execution', { state: 'cancelled' });
      // Written again with a future deadline, the stage is enforced again.
      await store.setStage('o-past', 'execution', {
        state: 'in_progress',
        deadline: sec(T0 + 50_000),
      });
      const later = await store.overdue(T0 + 60_000);
      expect(later.map((r) => [r.record.delegation_id, r.stages.sort()])).toEqual([
        ['o-past', ['execution', 'review']],
      ]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The outbox contract of durable stores (SQLite, Postgres).

/**
 * What every store with an outbox guarantees: one outbox entry per committed write (none for a
 * failed one), versions in order, leases that hide claimed entries until they lapse, ack and
 * release.
 */
export function describeOutboxSuite(
  name: string,
  makeStore: (ctx: StoreSuiteContext) => Promise<DurableDelegationStore>,
  options: { skip?: boolean } = {},
): void {
  describe(`delegation outbox: ${name}`, { skip: options.skip }, () => {
    let store: DurableDelegationStore;
    let clock: VirtualClock;
    beforeEach(async () => {
      clock = new VirtualClock(T0);
      store = await makeStore({ clock });
    });
    afterEach(async () => {
      await store.close();
    });

    it('writes one change per committed write, with increasing versions', async () => {
      let wakeups = 0;
      const off = store.onOutboxWrite(() => wakeups++);
      await store.create(makeRecord('ob-1'));
      await store.setStage('ob-1', 'execution', { state: 'in_progress' });
      await store.update('ob-1', { target_subject_id: 'billing' });
      await store.setStage('ob-1', 'execution', { state: 'done', delegation_result: { ok: 1 } });
      expect(await store.delete('ob-1')).toBe(true);
      await flushAsync();
      off();
      expect(wakeups).toBe(5);
      const entries = await store.claimOutbox(100, clock.now(), clock.now() + 30_000);
      expect(entries.map((e) => [e.change.op, e.change.version])).toEqual([
        ['create', 1],
        ['stage', 2],
        ['update', 3],
        ['stage', 4],
        ['delete', 5],
      ]);
      expect(entries[1]?.change).toMatchObject({
        stage: 'execution',
        state: 'in_progress',
        from: 'pending',
      });
      expect(entries[2]?.change.previous_target).toBe('back-office');
      const incarnations = new Set(entries.map((e) => e.change.incarnation));
      expect(incarnations.size).toBe(1);
      expect(entries[0]?.change.time).toBe(sec(T0));
      expect(entries[3]?.change.record.status.execution?.delegation_result).toEqual({ ok: 1 });
      expect(entries[4]?.change.record.target_subject_id).toBe('billing');
      expect(await store.getVersioned('ob-1')).toBeUndefined();
    });

    it('gives a record created again under a deleted id a new incarnation', async () => {
      await store.create(makeRecord('ob-re'));
      await store.delete('ob-re');
      await store.create(makeRecord('ob-re'));
      const entries = await store.claimOutbox(100, clock.now(), clock.now() + 30_000);
      expect(entries.map((e) => [e.change.op, e.change.version])).toEqual([
        ['create', 1],
        ['delete', 2],
        ['create', 1],
      ]);
      const [first, deleted, second] = entries.map((e) => e.change.incarnation);
      expect(deleted).toBe(first);
      expect(second).not.toBe(first);
      expect((await store.getVersioned('ob-re'))?.incarnation).toBe(second);
    });

    it('writes nothing for a failed write', async () => {
      await store.create(makeRecord('ob-2'));
      await store.create(makeRecord('ob-2')).catch(() => {});
      await store.setStage('ob-2', 'execution', { state: 'done' });
      await store.setStage('ob-2', 'execution', { state: 'failed' }).catch(() => {});
      await store.update('ob-2', { bogus: 1 } as never).catch(() => {});
      expect(await store.outboxSize()).toBe(2);
      expect((await store.getVersioned('ob-2'))?.version).toBe(2);
    });

    it('hides claimed entries until their lease lapses; ack deletes, release frees', async () => {
      for (const id of ['l-1', 'l-2', 'l-3']) await store.create(makeRecord(id));
      const first = await store.claimOutbox(2, clock.now(), clock.now() + 10_000);
      expect(first.map((e) => e.change.delegation_id)).toEqual(['l-1', 'l-2']);
      const second = await store.claimOutbox(10, clock.now(), clock.now() + 10_000);
      expect(second.map((e) => e.change.delegation_id)).toEqual(['l-3']);
      expect(await store.claimOutbox(10, clock.now(), clock.now() + 10_000)).toEqual([]);
      await store.ackOutbox([first[0]!.seq]);
      await store.releaseOutbox([second[0]!.seq]);
      const freed = await store.claimOutbox(10, clock.now(), clock.now() + 10_000);
      expect(freed.map((e) => e.change.delegation_id)).toEqual(['l-3']);
      await clock.advance(10_001);
      const lapsed = await store.claimOutbox(10, clock.now(), clock.now() + 10_000);
      expect(lapsed.map((e) => e.change.delegation_id)).toEqual(['l-2', 'l-3']);
      expect(await store.outboxSize()).toBe(2);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Shared helpers for the delegation tests that need Postgres or child processes.

/** The Postgres the tests use (trust auth on this machine and in CI). */
export const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name unique to this test run, so parallel runs never collide. */
export function uniqueSchema(tag: string): string {
  return `tl_${tag}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Drops the given schemas with everything in them. */
export async function dropSchemas(schemas: Iterable<string>): Promise<void> {
  if (await serviceMissing('postgres')) return; // nothing was created
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  } finally {
    await client.end();
  }
}

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** `import` specifier for a module under src/, usable from a script anywhere on disk. */
export function srcModule(path: string): string {
  return pathToFileURL(join(repoRoot, 'src', path)).href;
}

/** A child process running a TypeScript script under tsx, read line by line. */
export interface ChildScript {
  child: ChildProcess;
  /** Resolves with the first stdout line matching `pattern` (rejects if the child exits first). */
  waitForLine(pattern: RegExp): Promise<string>;
  /** Every stdout line so far. */
  lines: string[];
  /** Resolves once the script and its wrappers exited, with the wrapper's code (or signal). */
  exited: Promise<number | string>;
  /** Sends `signal` to the whole process group (the script and anything it spawned). */
  kill(signal: NodeJS.Signals): void;
  stderr(): string;
}

const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * Writes `source` to a temp file and runs it with `node --import tsx` from the repo root (so its
 * imports of src/ resolve); the file is deleted when the child exits.
 */
export function spawnScript(source: string, env: Record<string, string> = {}): ChildScript {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-child-'));
  const file = join(dir, 'child.mts');
  writeFileSync(file, source);
  // One node process with tsx as a loader (no npx/tsx wrappers): a signal reaches the script
  // itself. Through the tsx CLI, a child that does not acknowledge a relayed SIGTERM within
  // 30 ms is SIGKILLed, which on a loaded machine killed workers before their shutdown hook ran.
  // Its own process group, so a kill also reaches anything the script spawned.
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid !== undefined) liveGroups.add(pid);
  const lines: string[] = [];
  let stderr = '';
  let buffer = '';
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // 'close' fires once every process holding the output pipes (the script too) has exited.
  const exited = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => {
      if (pid !== undefined) liveGroups.delete(pid);
      rmSync(dir, { recursive: true, force: true });
      resolve(code ?? signal ?? -1);
    });
  });
  return {
    child,
    lines,
    exited,
    kill(signal) {
      if (pid !== undefined) process.kill(-pid, signal);
    },
    stderr: () => stderr,
    waitForLine(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then((code) =>
          reject(new Error(`child exited (${code}) before printing ${pattern}:\n${stderr}`)),
        );
      });
    },
  };
}
