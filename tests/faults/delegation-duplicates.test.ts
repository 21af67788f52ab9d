// Fault: events arrive twice or out of order. A duplicate task never runs a sub-task twice, a
// duplicate result is heard once, a result that overtakes its status update still resolves, a
// task that arrives after its record was cancelled or finished never runs, and a raw duplicate
// that slips past JetStream's dedupe window is dropped by the consumer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { type DelegationEvent, eventsForChange } from '../../src/service/bus/events.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { startOutboxPublisher } from '../../src/service/bus/publisher.js';
import { createDelegationSender, type DelegationResult } from '../../src/service/bus/sender.js';
import type { DelegationBus } from '../../src/service/bus/types.js';
import type { DelegationChange } from '../../src/service/stores/change.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { dropNatsPrefix, NATS_URL, natsPrefix } from './delegation-support.js';

const BOUND_MS = 20_000;
const prefix = natsPrefix('fdu');
const dir = mkdtempSync(join(tmpdir(), 'taskline-fault-dup-'));
let files = 0;

afterAll(async () => {
  await dropNatsPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
});

/** A store whose every change is kept, to replay its events as a faulty network would. */
async function setup(bus: DelegationBus, clock: VirtualClock) {
  const store = await SqliteDelegationStore.open({ path: join(dir, `d-${files++}.db`), clock });
  const changes: DelegationChange[] = [];
  const publisher = startOutboxPublisher({
    store: {
      ...Object.create(store),
      claimOutbox: async (...args: Parameters<typeof store.claimOutbox>) => {
        const entries = await store.claimOutbox(...args);
        changes.push(...entries.map((e) => e.change));
        return entries;
      },
      ackOutbox: (seqs: readonly number[]) => store.ackOutbox(seqs),
      releaseOutbox: (seqs: readonly number[]) => store.releaseOutbox(seqs),
      outboxSize: () => store.outboxSize(),
      onOutboxWrite: (l: () => void) => store.onOutboxWrite(l),
    },
    bus,
    clock,
    pollMs: 0,
  });
  const runs: string[] = [];
  const worker = await serveDelegations({
    agentId: 'back-office',
    bus,
    store,
    clock,
    publisher: false,
    handler: ({ record }) => {
      runs.push(record.delegation_id);
      return `answer ${record.delegation_id}`;
    },
  });
  const sender = await createDelegationSender({
    agentId: 'voice-bot',
    bus,
    store,
    clock,
    publisher: false,
  });
  const heard: DelegationResult[] = [];
  sender.onResult((r) => heard.push(r));
  const events = (id: string, kind: DelegationEvent['event']) =>
    changes
      .filter((c) => c.delegation_id === id)
      .flatMap(eventsForChange)
      .filter((e) => e.event === kind);
  return {
    store,
    runs,
    heard,
    sender,
    events,
    async settle() {
      for (let round = 0; round < 10; round++) {
        const published = await publisher.drain();
        if (bus instanceof InProcessDelegationBus) await bus.idle();
        if (published === 0 && (await store.outboxSize()) === 0) return;
      }
      throw new Error('did not settle in 10 rounds');
    },
    async close() {
      await publisher.close();
      await worker.close();
      await sender.close();
      await store.close();
    },
  };
}

describe('fault: duplicate and out-of-order events (in process)', () => {
  it('a duplicated task runs once; a replayed task after the result never runs again', async () => {
    const clock = new VirtualClock();
    const bus = new InProcessDelegationBus();
    const s = await setup(bus, clock);
    await s.sender.delegate({ delegation_id: 'dup', target: 'back-office', delegation_type: 'x' });
    await s.settle();
    const [task] = s.events('dup', 'delegation_task');
    expect(await bus.publish(task!)).toEqual({ duplicate: true });
    // A copy that escaped the dedupe window (a fresh bus that never saw it): the record is done.
    const fresh = new InProcessDelegationBus();
    const late = await serveDelegations({
      agentId: 'back-office',
      bus: fresh,
      store: s.store,
      clock,
      publisher: false,
      handler: () => {
        s.runs.push('late copy ran');
        return 'no';
      },
    });
    await fresh.publish(task!);
    await fresh.idle();
    expect(s.runs).toEqual(['dup']);
    expect(s.heard.map((r) => `${r.delegation_id}:${r.state}:${String(r.result)}`)).toEqual([
      'dup:done:answer dup',
    ]);
    await late.close();
    await fresh.close();
    await s.close();
    await bus.close();
  });

  it('a result that overtakes its status update resolves once; the late status changes nothing', async () => {
    const clock = new VirtualClock();
    const hold = new InProcessDelegationBus();
    const s = await setup(hold, clock);
    await s.sender.delegate({ delegation_id: 'ooo', target: 'back-office', delegation_type: 'x' });
    await s.settle();
    // Replay the sender's reply events to a second sender, newest first, twice.
    const replies = new InProcessDelegationBus();
    const other = await createDelegationSender({
      agentId: 'voice-bot',
      bus: replies,
      store: s.store,
      clock,
      publisher: false,
    });
    const heard: DelegationResult[] = [];
    other.onResult((r) => heard.push(r));
    const status = s.events('ooo', 'delegation_status');
    const result = s.events('ooo', 'delegation_result');
    expect(status.length).toBeGreaterThan(0);
    for (const e of [...result, ...status.reverse()]) await replies.publish(e);
    for (const e of result) expect(await replies.publish({ ...e })).toEqual({ duplicate: true });
    await replies.idle();
    expect(heard.map((r) => `${r.delegation_id}:${r.state}`)).toEqual(['ooo:done']);
    expect((await other.awaitResult('ooo')).result).toBe('answer ooo');
    await other.close();
    await replies.close();
    await s.close();
    await hold.close();
  });

  it('a task that arrives after its record was cancelled never runs; the sender hears the cancel once', async () => {
    const clock = new VirtualClock();
    const bus = new InProcessDelegationBus();
    const parked = new InProcessDelegationBus(); // the task goes here first: the worker does not see it
    const s = await setup(parked, clock);
    await s.sender.delegate({ delegation_id: 'late', target: 'back-office', delegation_type: 'x' });
    await s.store.setStage('late', 'execution', { state: 'cancelled' });
    await s.settle();
    const worker = await serveDelegations({
      agentId: 'back-office',
      bus,
      store: s.store,
      clock,
      publisher: false,
      handler: () => {
        s.runs.push('ran after cancel');
        return 'no';
      },
    });
    // Out of order: the cancel first, then the task.
    for (const e of [
      ...s.events('late', 'delegation_cancel'),
      ...s.events('late', 'delegation_task'),
    ]) {
      await bus.publish(e);
    }
    await bus.idle();
    expect(s.runs).toEqual([]);
    expect((await s.sender.awaitResult('late')).state).toBe('cancelled');
    await worker.close();
    await s.close();
    await bus.close();
    await parked.close();
  });
});

describe('fault: duplicate events on NATS', () => {
  it('a raw duplicate that slips past the dedupe window is dropped by the consumer; the job runs once', {
    timeout: 40_000,
  }, async () => {
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
    const store = await SqliteDelegationStore.open({ path: join(dir, 'nats.db') });
    const runs: string[] = [];
    const worker = await serveDelegations({
      agentId: 'back-office',
      bus,
      store,
      handler: ({ record }) => {
        runs.push(record.delegation_id);
        return 'once';
      },
    });
    const sender = await createDelegationSender({ agentId: `voice-${prefix}`, bus, store });
    const heard: DelegationResult[] = [];
    sender.onResult((r) => heard.push(r));
    const record = await sender.delegate({ target: 'back-office', delegation_type: 'x' });
    expect((await sender.awaitResult(record.delegation_id, { timeoutMs: BOUND_MS })).result).toBe(
      'once',
    );
    // Publish the same task again without a msg id (as after the dedupe window), twice.
    const nc = await connect({ servers: NATS_URL });
    const js = jetstream(nc);
    const incarnation = (await store.getVersioned(record.delegation_id))!.incarnation;
    const task: DelegationEvent = {
      event: 'delegation_task',
      delegation_id: record.delegation_id,
      version: 1,
      incarnation,
      to: 'back-office',
      change: 'create',
      time: 1,
      record,
    };
    for (let i = 0; i < 2; i++) {
      await js.publish(`${prefix}.to.back-office.work.delegation_task`, JSON.stringify(task));
    }
    // A marker job behind them: once it ran, the duplicates ahead of it were handled.
    const marker = await sender.delegate({ target: 'back-office', delegation_type: 'x' });
    await sender.awaitResult(marker.delegation_id, { timeoutMs: BOUND_MS });
    expect(runs).toEqual([record.delegation_id, marker.delegation_id]);
    expect(heard.map((r) => r.delegation_id)).toEqual([record.delegation_id, marker.delegation_id]);
    await nc.close();
    await worker.close();
    await sender.close();
    await bus.close();
    await store.close();
  });
});
