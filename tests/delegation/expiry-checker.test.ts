import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DelegationStore } from '../../src/delegation/record.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { createDelegationSender, type DelegationResult } from '../../src/service/bus/sender.js';
import { type ExpiredStage, expireOverdue, startExpiryChecker } from '../../src/service/expiry.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { makeRecord } from './store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-expiry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = (clock: VirtualClock) =>
  SqliteDelegationStore.open({ path: join(dir, `e-${n++}.db`), clock });

describe('expiry checker', () => {
  it('marks overdue delegations expired on the clock and notifies the sender once', async () => {
    const clock = new VirtualClock();
    const store = await open(clock);
    const bus = new InProcessDelegationBus();
    const sender = await createDelegationSender({ agentId: 'voice-bot', bus, store, clock });
    const heard: DelegationResult[] = [];
    sender.onResult((r) => heard.push(r));
    await sender.delegate({
      delegation_id: 'late',
      target: 'back-office',
      delegation_type: 'lookup',
      deadlineMs: 10_000,
    });
    await sender.delegate({
      delegation_id: 'quick',
      target: 'back-office',
      delegation_type: 'lookup',
      deadlineMs: 10_000,
    });
    await sender.delegate({
      delegation_id: 'patient',
      target: 'back-office',
      delegation_type: 'lookup',
      deadlineMs: 60_000,
    });
    await store.setStage('quick', 'execution', { state: 'done', delegation_result: 'fast' });

    const expired: ExpiredStage[] = [];
    const checker = startExpiryChecker(store, {
      clock,
      intervalMs: 1_000,
      onExpired: (e) => expired.push(e),
    });
    const lateResult = sender.awaitResult('late');
    await clock.advance(10_000); // deadline reached, not yet passed
    expect(expired).toEqual([]);
    await clock.advance(1_000);
    expect(expired.map((e) => [e.delegation_id, e.stage, e.sender])).toEqual([
      ['late', 'execution', 'voice-bot'],
    ]);
    expect((await lateResult).state).toBe('expired');
    await bus.idle();
    expect(heard.map((r) => `${r.delegation_id}:${r.state}`).sort()).toEqual([
      'late:expired',
      'quick:done',
    ]);
    expect((await store.get('patient'))?.status.execution?.state).toBe('pending');
    expect((await store.get('quick'))?.status.execution?.state).toBe('done');
    await clock.advance(5_000);
    expect(expired).toHaveLength(1); // nothing expires twice
    checker.stop();
    await sender.close();
    await bus.close();
    await store.close();
  });

  it('expires every overdue stage of a record, in batches', async () => {
    const clock = new VirtualClock();
    const store = await open(clock);
    const at = (ms: number) => Math.floor((clock.now() + ms) / 1000);
    for (let i = 0; i < 5; i++) {
      await store.create(
        makeRecord(`multi-${i}`, {
          status: {
            fetch: { state: 'in_progress', time: at(0), deadline: at(1_000) },
            review: { state: 'pending', time: at(0), deadline: at(2_000) },
            later: { state: 'pending', time: at(0), deadline: at(99_000) },
          },
        }),
      );
    }
    await clock.advance(3_000);
    const expired = await expireOverdue(store, { clock, batch: 2 });
    expect(expired).toHaveLength(10);
    const r = await store.get('multi-3');
    expect(Object.fromEntries(Object.entries(r!.status).map(([k, s]) => [k, s.state]))).toEqual({
      fetch: 'expired',
      review: 'expired',
      later: 'pending',
    });
    await store.close();
  });

  it("leaves a deadline that was already past when written alone (the contract's example)", async () => {
    const clock = new VirtualClock();
    const store = await open(clock);
    await store.create(makeRecord('example', { status: {} }));
    await store.setStage('example', 'execution', {
      state: 'in_progress',
      time: 1717390000,
      deadline: 1717400000,
    });
    const checker = startExpiryChecker(store, { clock, intervalMs: 1_000 });
    await clock.advance(5_000);
    expect(await checker.runOnce()).toEqual([]);
    expect((await store.get('example'))?.status.execution).toEqual({
      state: 'in_progress',
      time: 1717390000,
      deadline: 1717400000,
    });
    checker.stop();
    await store.close();
  });

  it('leaves a stage that finished after the overdue scan alone', async () => {
    const clock = new VirtualClock();
    const real = await open(clock);
    await real.create(makeRecord('raced'));
    const stale = await real.get('raced');
    await real.setStage('raced', 'execution', { state: 'done', delegation_result: 'just in time' });
    // A store whose overdue() still reports the record as it was before it finished.
    const store: DelegationStore = Object.assign(Object.create(real) as DelegationStore, {
      overdue: async () => [{ record: stale!, stages: ['execution'] }],
    });
    await clock.advance(120_000);
    expect(await expireOverdue(store, { clock })).toEqual([]);
    expect((await real.get('raced'))?.status.execution?.delegation_result).toBe('just in time');
    await real.close();
  });
});
